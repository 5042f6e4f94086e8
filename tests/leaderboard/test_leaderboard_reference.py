"""The leaderboard on the 17 TREC 2003 Robust runs: NIST's official scores, CSV layout, ranks."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from pooling.leaderboard import LeaderboardError, leaderboard
from pooling.leaderboard.render import leaderboard_csv, leaderboard_latex, leaderboard_markdown

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def board(robust_store):
    return leaderboard(robust_store, measures=["map", "P@100"])


def test_map_and_p100_equal_nist_official_summary_for_all_17_runs(board, nist_summary):
    assert sorted(board.run_ids) == sorted(nist_summary)
    maps, p100 = board.means("map"), board.means("P_100")
    for run_id, ref in nist_summary.items():
        assert maps[run_id] == pytest.approx(float(ref["map"]), abs=1e-4), run_id
        assert p100[run_id] == pytest.approx(float(ref["P_100"]), abs=1e-4), run_id


def test_rows_are_ranked_best_first_with_every_run_on_100_topics(board):
    maps = board.table["map"].to_pylist()
    assert maps == sorted(maps, reverse=True)
    assert set(board.table["n_topics"].to_pylist()) == {100}
    assert len(board.query_ids) == 100


def test_csv_has_run_id_team_then_measures_then_intervals_then_judged(board, nist_summary):
    rows = list(csv.reader(io.StringIO(leaderboard_csv(board))))
    header = rows[0]
    assert header[:4] == ["run_id", "team", "map", "P_100"]
    ci = [f"{m}_{k}_{e}" for m in ("map", "P_100") for k in ("t", "boot") for e in ("low", "high")]
    assert header[4:12] == ci
    assert header[12] == "Judged@10"
    assert {r[0]: r[1] for r in rows[1:]} == {r: nist_summary[r]["participant"] for r in
                                              nist_summary}
    assert len(rows) == 1 + 17
    first = dict(zip(header, rows[1], strict=True))
    assert float(first["map_t_low"]) < float(first["map"]) < float(first["map_t_high"])
    assert float(first["map_boot_low"]) < float(first["map"]) < float(first["map_boot_high"])


def test_t_interval_is_mean_plus_minus_t_quantile_standard_error(board):
    from scipy import stats

    scores = board.scores["map"][:, 0]
    low, high = stats.t.interval(0.95, len(scores) - 1, loc=scores.mean(),
                                 scale=stats.sem(scores))
    assert board.table["map_t_low"][0].as_py() == pytest.approx(low, abs=1e-12)
    assert board.table["map_t_high"][0].as_py() == pytest.approx(high, abs=1e-12)


def test_bootstrap_interval_is_seeded(robust_store, board):
    again = leaderboard(robust_store, measures=["map", "P@100"])
    other = leaderboard(robust_store, measures=["map", "P@100"], seed=7)
    assert again.table["map_boot_low"].equals(board.table["map_boot_low"])
    assert not other.table["map_boot_low"].equals(board.table["map_boot_low"])


def test_judged_at_10_is_reported_and_low_judged_runs_are_flagged(robust_store, board):
    judged = dict(zip(board.run_ids, board.table["Judged@10"].to_pylist(), strict=True))
    assert judged["THUIRr0301"] == 1.0 and 0.9 < judged["rutcor03100"] < 1.0
    assert set(board.table["flag"].to_pylist()) == {""}
    strict = leaderboard(robust_store, measures=["map"], min_judged=0.95)
    flagged = {r for r, f in zip(strict.run_ids, strict.table["flag"].to_pylist(), strict=True) if f}
    assert flagged == {r for r, v in judged.items() if v < 0.95}


def test_ranks_tie_runs_no_test_separates(board):
    ranks = board.table["rank"].to_pylist()
    assert ranks[0] == 1 and ranks == sorted(ranks)
    sig = board.significant
    for pos, rank in enumerate(ranks):
        better = int(sig[pos, :pos].sum())
        assert rank >= 1 + better  # never above its count of significantly better runs
    groups = board.table["group"].to_pylist()
    for a in range(17):
        for b in range(a + 1, 17):
            if set(groups[a]) & set(groups[b]):
                assert not sig[a, b], (board.run_ids[a], board.run_ids[b])


def test_topic_subset_selects_topics_everywhere(robust_store):
    new = leaderboard(robust_store, measures=["map"], topics="new")
    assert new.query_ids == [str(q) for q in range(601, 651)]
    ranged = leaderboard(robust_store, measures=["map"], topics="601-650")
    assert ranged.means() == new.means()
    assert np.all(new.table["n_topics"].to_numpy() == 50)


def test_markdown_and_latex_exports_list_every_run(board):
    md = leaderboard_markdown(board)
    assert md.splitlines()[0].startswith("| rank | group | run_id | map | P_100 |")
    assert sum(1 for line in md.splitlines() if line.startswith("| ")) == 18
    tex = leaderboard_latex(board)
    assert "\\begin{tabular}" in tex and "run\\_id" in tex and tex.count("\\\\\n") == 18


def test_tukey_with_a_correction_is_refused_with_the_fix(robust_store):
    with pytest.raises(LeaderboardError, match="--correction none"):
        leaderboard(robust_store, measures=["map"], test="tukey", correction="holm")
