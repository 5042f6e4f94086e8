"""Leave-one-run-out and leave-one-team-out on a depth-10 re-pool of the Robust03 runs."""

from __future__ import annotations

import csv

import pytest

from pooling.leaderboard.pool_bias import pool_bias

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def loro_all(robust_store):
    return pool_bias(robust_store, measure="map", depth=10)


@pytest.fixture(scope="module")
def loro_new(robust_store):
    return pool_bias(robust_store, measure="map", depth=10, topics="new")


def test_loro_on_all_topics_matches_the_independent_replay(loro_all):
    # Replay: qrels cut to the union of all runs' top 10, each run's unique judgments removed.
    s = loro_all.summary()
    assert s["runs"] == 17
    assert -s["mean_relative_change"] == pytest.approx(0.0367, abs=5e-4)
    assert -s["worst_relative_change"] == pytest.approx(0.1495, abs=5e-4)
    assert len(loro_all.query_ids) == 100


def test_loro_on_new_topics_matches_the_independent_replay(loro_new):
    s = loro_new.summary()
    assert -s["mean_relative_change"] == pytest.approx(0.0243, abs=5e-4)
    assert -s["worst_relative_change"] == pytest.approx(0.0859, abs=5e-4)


def test_depth_10_pool_on_new_topics_is_the_reference_pool(loro_new, robust_dir):
    # reference/pool_depth_check_topics601-650.tsv: k=10 pool 2763 documents, all judged.
    assert loro_new.pool_size == 2763 and loro_new.judged_in_pool == 2763
    assert set(loro_new.table["judged_at_k"].to_pylist()) == {1.0}


@pytest.mark.slow
def test_judged_at_k_equals_the_reference_fractions(robust_store, robust_dir):
    with open(robust_dir / "reference/pool_depth_check_topics601-650.tsv", encoding="utf-8") as fh:
        lines = [line for line in fh if not line.startswith("#")]
    rows = list(csv.DictReader(lines[:18], delimiter="\t"))
    for k in (126, 150):
        result = pool_bias(robust_store, measure="map", topics="new", judged_depth=k)
        judged = dict(zip(result.table["run_id"].to_pylist(),
                          result.table["judged_at_k"].to_pylist(), strict=True))
        for row in rows:
            run_id = row["run"].removeprefix("input.").removesuffix(".gz")
            assert judged[run_id] == pytest.approx(float(row[f"frac_top{k}_judged"]), abs=5e-5)


def test_removing_unique_judgments_never_raises_a_score_and_ranks_follow(loro_all):
    for row in loro_all.table.to_pylist():
        assert row["score_without"] <= row["score"] + 1e-12
        assert row["unique_relevant"] <= row["unique_docs"]
        assert row["rank_change"] >= 0
        if row["unique_relevant"] == 0:
            assert row["score_without"] == pytest.approx(row["score"])


def test_leave_one_team_out_removes_what_only_the_team_contributed(robust_store, loro_new):
    logo = pool_bias(robust_store, measure="map", depth=10, topics="new", leave_out="team")
    by_run = {r["run_id"]: r for r in logo.table.to_pylist()}
    single = {r["run_id"]: r for r in loro_new.table.to_pylist()}
    glasgow = ["InexpC2", "Sel50"]  # the one team with two runs here
    assert {by_run[r]["unit"] for r in glasgow} == {"uglasgow.ounis"}
    # The team's unique documents include each run's own and those the two share.
    assert by_run["Sel50"]["unique_docs"] >= single["Sel50"]["unique_docs"] + single["InexpC2"]["unique_docs"]
    for r in glasgow:
        assert by_run[r]["score_without"] <= single[r]["score_without"] + 1e-12
    for r in set(by_run) - set(glasgow):  # one-run teams: the same as leaving the run out
        assert by_run[r]["score_without"] == pytest.approx(single[r]["score_without"])


def test_unpooled_runs_are_reported_separately_and_contribute_nothing(robust_store):
    pooled = [r for r in robust_store.run_ids() if r != "uic0301"]
    result = pool_bias(robust_store, measure="map", depth=10, topics="new", pooled=pooled)
    rows = {r["run_id"]: r for r in result.table.to_pylist()}
    out = rows["uic0301"]
    assert out["pooled"] is False and out["unique_docs"] == 0
    assert out["score_without"] == out["score"]
    assert out["judged_at_k"] < 1.0  # its own top 10 is no longer entirely in the pool
    assert result.summary(pooled=False)["runs"] == 1
    assert result.summary()["runs"] == 16


def test_sql_ranking_pools_exactly_what_the_depth_strategy_pools(robust_store):
    from pooling.leaderboard.pool_bias import ranked_documents
    from pooling.strategies import rankings_by_topic
    from pooling.strategies.depth import round_robin

    runs = robust_store.run_ids()
    topics = [str(q) for q in range(601, 611)]
    ranked = ranked_documents(robust_store, runs, 10, topics)
    ours = set(zip(ranked["query_id"].to_pylist(), ranked["doc_id"].to_pylist(), strict=True))
    per_topic = rankings_by_topic({r: robust_store.run_table(r) for r in runs}, 10)
    theirs = {(q, d) for q in topics for d in round_robin(per_topic[q], 10)}
    assert ours == theirs
    for r in ("MU03rob01", "rutcor03100"):  # runs full of tied scores
        mine = [d for run, q, d, _ in zip(*(ranked[c].to_pylist() for c in
                                             ("run_id", "query_id", "doc_id", "rank")), strict=True)
                if run == r and q == "601"]
        ranks = [k for run, q, k in zip(*(ranked[c].to_pylist() for c in
                                         ("run_id", "query_id", "rank")), strict=True)
                 if run == r and q == "601"]
        assert [d for _, d in sorted(zip(ranks, mine, strict=True))] == list(per_topic["601"].rankings[r])
