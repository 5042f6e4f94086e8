"""A simulated crowd and gold questions drawn from an expert's qrels, on a real DuckDB store."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from pooling.crowds.model_rules import worker_confusion
from pooling.crowds.simulation import gold_sample, play_round, simulated_crowd, truth_grades
from pooling.errors import StoreError
from pooling.judging.rounds import create_round, get_round, set_gold
from pooling.judging.rules import derive_qrels
from pooling.store import Store

GRADES = (0, 1, 2)


def test_crowd_mixes_kinds_in_the_stated_shares():
    crowd = simulated_crowd(20, GRADES, sloppy=0.3, spammers=0.1, seed=4)
    kinds = [w.kind for w in crowd]
    assert (kinds.count("spammer"), kinds.count("sloppy"), kinds.count("reliable")) == (2, 6, 12)
    assert [w.assessor_id for w in crowd][:2] == ["worker-01", "worker-02"]
    assert len({w.assessor_id for w in crowd}) == 20


def test_each_confusion_row_is_a_distribution_and_kinds_differ_as_stated():
    for w in simulated_crowd(12, GRADES, sloppy=0.25, spammers=0.25, seed=9):
        assert w.confusion.shape == (3, 3)
        assert np.allclose(w.confusion.sum(axis=1), 1.0)
        if w.kind == "spammer":  # the answer does not depend on the truth
            assert np.allclose(w.confusion, w.confusion[0])
        else:
            expected = 0.85 if w.kind == "reliable" else 0.55
            assert np.allclose(np.diag(w.confusion), expected)
            # errors go to nearer grades more often than to farther ones
            assert w.confusion[0, 1] > w.confusion[0, 2]
            assert w.confusion[2, 1] > w.confusion[2, 0]


def test_same_seed_same_crowd_other_seed_other_crowd():
    a = simulated_crowd(10, GRADES, seed=1)
    b = simulated_crowd(10, GRADES, seed=1)
    c = simulated_crowd(10, GRADES, seed=2)
    assert [w.kind for w in a] == [w.kind for w in b]
    assert all(np.array_equal(x.confusion, y.confusion) for x, y in zip(a, b, strict=True))
    assert [w.kind for w in a] != [w.kind for w in c] or not all(
        np.array_equal(x.confusion, y.confusion) for x, y in zip(a, c, strict=True))


@pytest.mark.parametrize(("args", "message"), [
    ({"n": 0}, "at least one worker"),
    ({"n": 5, "sloppy": 0.7, "spammers": 0.5}, "more than 1"),
    ({"n": 5, "spammers": -0.1}, "between 0 and 1"),
    ({"n": 5, "unjudgeable": 1.0}, "cannot judge"),
])
def test_impossible_crowds_are_refused_plainly(args, message):
    n = args.pop("n")
    with pytest.raises(StoreError, match=message):
        simulated_crowd(n, GRADES, **args)


@pytest.fixture
def pooled_store(tmp_path):
    """A store with one run of 30 documents on topics 1 and 2, an expert's qrels over all 30
    (grades cycling 0, 1, 2) and round r1 pooling the top 10 of each topic."""
    lines = [f"{q} Q0 d{q}-{i:02d} {i + 1} {30 - i} A" for q in ("1", "2") for i in range(30)]
    (tmp_path / "a.run").write_text("\n".join(lines) + "\n")
    (tmp_path / "expert.qrels").write_text("".join(
        f"{q} 0 d{q}-{i:02d} {i % 3}\n" for q in ("1", "2") for i in range(30)))
    path = tmp_path / "g.duckdb"
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run"])
        s.import_qrels(tmp_path / "expert.qrels", name="expert")
        create_round(s, "r1", "depth", strategy_params={"depth": 10})
    return path


def _rows(store: Store, version: str) -> list[tuple[str, str, int]]:
    t = store.qrels_table(version)
    return list(zip(t["query_id"].to_pylist(), t["doc_id"].to_pylist(),
                    t["relevance"].to_pylist(), strict=True))


def test_gold_outside_the_pool_is_balanced_across_grades(pooled_store):
    with Store(pooled_store) as s:
        made = gold_sample(s, "expert", "r1", 6, name="gold", seed=3)
        rows = _rows(s, "gold")
        pooled = set(s.con.execute("SELECT query_id, doc_id FROM pool_entries").fetchall())
        params = json.loads(s.one("p", "SELECT params FROM qrels_versions WHERE name = 'gold'")[0])
    assert made.n_rows == 12 and made.n_topics == 2
    for q in ("1", "2"):
        grades = sorted(g for t, _, g in rows if t == q)
        assert grades == [0, 0, 1, 1, 2, 2]  # two of each grade
    assert not {(q, d) for q, d, _ in rows} & pooled  # every pooled pair is left to the crowd
    assert all(int(d[-2:]) >= 10 for _, d, _ in rows)
    assert all(int(d[-2:]) % 3 == g for _, d, g in rows)  # the expert's grades, unchanged
    assert params == {"rule": "gold-sample", "source": "expert", "round": "r1", "per_topic": 6,
                      "where": "outside-pool", "seed": 3}


@pytest.mark.parametrize("where", ["pool", "any"])
def test_gold_is_never_drawn_from_the_pool(pooled_store, where):
    with Store(pooled_store) as s, pytest.raises(StoreError, match="never a gold question"):
        gold_sample(s, "expert", "r1", 4, name="gold", where=where, seed=3)
    with Store(pooled_store, read_only=True) as s:
        assert s.one("n", "SELECT count(*) FROM qrels_versions WHERE name = 'gold'") == (0,)


def test_same_seed_draws_the_same_gold(pooled_store):
    with Store(pooled_store) as s:
        gold_sample(s, "expert", "r1", 3, name="a", seed=5)
        gold_sample(s, "expert", "r1", 3, name="b", seed=5)
        gold_sample(s, "expert", "r1", 3, name="c", seed=6)
        a, b, c = (_rows(s, v) for v in "abc")
    assert a == b and a != c


def test_a_gold_sample_that_finds_nothing_names_the_way_out(pooled_store, tmp_path):
    (tmp_path / "other.qrels").write_text("9 0 x 1\n")
    with Store(pooled_store) as s:
        s.import_qrels(tmp_path / "other.qrels", name="other")
        with pytest.raises(StoreError, match="no pair of round 'r1'.*outside its pool.*choose another version"):
            gold_sample(s, "other", "r1", 3, name="gold")
        with pytest.raises(StoreError, match="--per-topic"):
            gold_sample(s, "expert", "r1", 0, name="gold")
        assert not s.one("v", "SELECT 1 FROM qrels_versions WHERE name = 'gold'")


@pytest.fixture
def crowd_round(pooled_store):
    """Round c1 on pooled_store: the top 20 of each topic, K = 3, gold drawn from outside the
    pool (4 pairs per topic) at rate 0.2."""
    with Store(pooled_store) as s:
        create_round(s, "c1", "depth", strategy_params={"depth": 20}, redundancy=3)
        gold_sample(s, "expert", "c1", 4, name="gold", seed=1)
        set_gold(s, "c1", "gold", 0.2)
    return pooled_store


def test_a_simulated_crowd_brings_every_pair_to_k_through_the_people_queue(crowd_round):
    with Store(crowd_round) as s:
        crowd = simulated_crowd(8, GRADES, seed=2)
        play = play_round(s, "c1", truth_grades(s, "expert"), crowd, task_size=4, seed=3)
        answers = s.con.execute(
            "SELECT query_id, doc_id, count(*), count(DISTINCT assessor_id) FROM judgments "
            "WHERE round_id = 'c1' GROUP BY ALL").fetchall()
        gold = set(s.con.execute("SELECT query_id, doc_id FROM qrels WHERE version = 'gold'").fetchall())
        pooled = set(s.con.execute("SELECT query_id, doc_id FROM pool_entries "
                                   "WHERE round_id = 'c1'").fetchall())
        per_topic = s.con.execute(
            "SELECT assessor_id, count(*) FILTER (WHERE (query_id, doc_id) IN "
            "(SELECT (query_id, doc_id) FROM qrels WHERE version = 'gold')), count(*) "
            "FROM judgments WHERE round_id = 'c1' GROUP BY assessor_id, query_id").fetchall()
    counts = {(q, d): (n, distinct) for q, d, n, distinct in answers}
    assert all(n == distinct for n, distinct in counts.values())  # nobody answers a pair twice
    assert {p: n for p, (n, _) in counts.items() if p in pooled} == {p: 3 for p in pooled}
    assert set(counts) - pooled <= gold  # the rest are gold questions
    assert play.answers == sum(n for n, _ in counts.values())
    assert sum(play.per_worker.values()) == play.answers
    # Gold at its rate: within one pair of 0.2 x a worker's answers of each topic, and not
    # past it (no gold is handed once a topic has no pair left to answer).
    assert all(0.2 * n - 1 <= gold <= 0.2 * n + 1 for _, gold, n in per_topic), per_topic
    assert sum(gold for _, gold, _ in per_topic) >= 0.2 * play.answers - len(per_topic)


def test_dawid_skene_recovers_the_simulated_workers_and_beats_their_votes(pooled_store):
    """Nine workers (two spammers, three sloppy) answer every pair of 2 × 30 documents five
    times over: the model's matrices put the reliable workers' diagonals within 0.15 of the
    true 0.85 on average, and its qrels agree with the truth more often than the majority's."""
    with Store(pooled_store) as s:
        create_round(s, "c5", "depth", strategy_params={"depth": 30}, redundancy=5)
        crowd = simulated_crowd(9, GRADES, sloppy=0.34, spammers=0.22, seed=5)
        truth = truth_grades(s, "expert")
        play_round(s, "c5", truth, crowd, task_size=6, seed=5)
        derive_qrels(s, "dawid-skene", "ds", round_id="c5")
        derive_qrels(s, "majority", "mv", round_id="c5")
        fitted = worker_confusion(s, "ds").to_pandas()
        right = {v: sum(truth[(q, d)] == g for q, d, g in _rows(s, v)) for v in ("ds", "mv")}
    reliable = [w.assessor_id for w in crowd if w.kind == "reliable"]
    diag = fitted[(fitted.true_grade == fitted.grade) & fitted.assessor_id.isin(reliable)]
    assert abs(diag.groupby("assessor_id").probability.mean().mean() - 0.85) < 0.15
    assert right["ds"] > right["mv"]


def test_an_empty_gold_name_is_refused_and_the_round_keeps_its_gold(crowd_round):
    cli = [sys.executable, "-m", "pooling", "crowd", "gold", str(crowd_round), "--round", "c1",
           "--from", "expert", "--per-topic", "3", "--rate", "0.25"]
    for name, why in (("", "is empty"), (" x", "starts or ends with whitespace")):
        made = subprocess.run([*cli, "--name", name], capture_output=True, text=True)
        assert made.returncode == 1
        assert f"qrels version name (--name) {'' if not name else repr(name) + ' '}{why}" in made.stderr
    with Store(crowd_round, read_only=True) as s:
        assert get_round(s, "c1").gold == "gold"
        assert "" not in s.qrels_versions() and " x" not in s.qrels_versions()


def test_cli_draws_gold_and_plays_a_crowd_with_its_matrices_written(pooled_store, tmp_path):
    with Store(pooled_store) as s:
        create_round(s, "c2", "depth", strategy_params={"depth": 10}, redundancy=2)
    cli = [sys.executable, "-m", "pooling", "crowd"]
    made = subprocess.run([*cli, "gold", str(pooled_store), "--round", "c2", "--from", "expert",
                           "--per-topic", "3", "--rate", "0.25", "--name", "g"],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert "gold g: 6 pairs of 2 topics from expert, mixed into round c2 at rate 0.25 (K = 2)" in made.stdout
    played = subprocess.run([*cli, "simulate", str(pooled_store), "--round", "c2", "--truth",
                             "expert", "--workers", "5", "--spammers", "0.2", "--sloppy", "0",
                             "--seed", "1", "--matrices", str(tmp_path / "m.csv")],
                            capture_output=True, text=True)
    assert played.returncode == 0, played.stderr
    assert "by 5 simulated workers (4 reliable, 0 sloppy, 1 spammers)" in played.stdout
    lines = (tmp_path / "m.csv").read_text().splitlines()
    assert lines[0] == '"assessor_id","kind","true_grade","grade","probability"'
    assert len(lines) == 1 + 5 * 9
    with Store(pooled_store, read_only=True) as s:
        assert s.one("n", "SELECT count(DISTINCT (query_id, doc_id)) FROM judgments "
                     "WHERE round_id = 'c2' AND (query_id, doc_id) IN "
                     "(SELECT (query_id, doc_id) FROM pool_entries WHERE round_id = 'c2')") == (20,)
    again = subprocess.run([*cli, "gold", str(pooled_store), "--round", "c2", "--from", "expert",
                            "--name", "g2", "--where", "nowhere"], capture_output=True, text=True)
    assert again.returncode != 0 and "--where must be outside-pool" in again.stderr


def test_gold_replaced_mid_round_still_never_enters_derived_qrels(pooled_store, tmp_path):
    """A round's first gold (drawn from outside its pool) is answered by the crowd, then
    replaced by another: the pairs of both stay out of every version derived from it."""
    with Store(pooled_store) as s:
        create_round(s, "c3", "depth", strategy_params={"depth": 5}, redundancy=2)
        gold_sample(s, "expert", "c3", 3, name="first", seed=1)
        set_gold(s, "c3", "first", 0.3)
        crowd = simulated_crowd(4, GRADES, sloppy=0, spammers=0, seed=1)
        play_round(s, "c3", truth_grades(s, "expert"), crowd[:2], seed=1)
        answered_gold = set(s.con.execute(
            "SELECT query_id, doc_id FROM judgments WHERE round_id = 'c3' AND (query_id, doc_id) "
            "IN (SELECT (query_id, doc_id) FROM qrels WHERE version = 'first')").fetchall())
        gold_sample(s, "expert", "c3", 3, name="second", seed=2)
        rnd = set_gold(s, "c3", "second")
        play_round(s, "c3", truth_grades(s, "expert"), crowd[2:], seed=2)
        derive_qrels(s, "majority", "after", round_id="c3")
        derived = {(q, d) for q, d, _ in _rows(s, "after")}
        second = {(q, d) for q, d, _ in _rows(s, "second")}
    assert answered_gold  # the crowd did answer the first gold
    assert rnd.gold == "second" and rnd.gold_versions == ["first", "second"]
    assert rnd.gold_rate == 0.3  # the rate the round had
    assert not derived & (answered_gold | second)
    assert len(derived) == 10  # every pooled pair, and only those


def test_gold_is_drawn_from_documents_with_text_where_the_store_has_texts(pooled_store, tmp_path):
    """A gold page without the document's text would stand out: only documents with text
    qualify once the store holds any."""
    (tmp_path / "docs.jsonl").write_text("".join(
        f'{{"doc_id": "d{q}-{i:02d}", "text": "text of d{q}-{i:02d}"}}\n'
        for q in ("1", "2") for i in range(10, 16)))
    with Store(pooled_store) as s:
        s.import_documents(tmp_path / "docs.jsonl")
        gold_sample(s, "expert", "r1", 10, name="gold", seed=1)
        rows = _rows(s, "gold")
    assert len(rows) == 12 and all(10 <= int(d[-2:]) < 16 for _, d, _ in rows)
