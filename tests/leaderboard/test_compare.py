"""Ranking comparisons between leaderboards (measures, qrels cuts, depths) with tau and rho."""

from __future__ import annotations

import pytest

from pooling.leaderboard import LeaderboardError, leaderboard
from pooling.leaderboard.compare import BoardSpec, board_specs, compare_leaderboards

pytestmark = pytest.mark.shared


def test_map_versus_p100_correlations_equal_scipy_on_the_leaderboard_means(robust_store):
    from scipy.stats import kendalltau, spearmanr

    result = compare_leaderboards(robust_store, board_specs(["map", "P_100"]))
    row = result.pairs.to_pylist()[0]
    lb = leaderboard(robust_store, measures=["map", "P_100"])
    runs = sorted(lb.run_ids)
    a = [lb.means("map")[r] for r in runs]
    b = [lb.means("P_100")[r] for r in runs]
    assert row["a"] == "map" and row["b"] == "P_100" and row["n_runs"] == 17
    assert row["kendall_tau"] == pytest.approx(kendalltau(a, b).statistic, abs=1e-12)
    assert row["spearman_rho"] == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
    assert -1 <= row["tau_ap"] <= 1
    n_pairs = 17 * 16 // 2
    assert row["kendall_tau"] == pytest.approx((n_pairs - 2 * row["swaps"]) / n_pairs)


def test_a_shallow_repool_ranks_the_runs_much_like_the_full_qrels(robust_store):
    specs = board_specs(["map"], depths=[10])
    assert specs == [BoardSpec("map"), BoardSpec("map", depth=10)]
    result = compare_leaderboards(robust_store, specs, topics="new")
    (row,) = result.pairs.to_pylist()
    assert row["b"] == "map depth=10"
    assert 0.7 < row["kendall_tau"] < 1.0
    assert result.scores["map depth=10"]["pircRBa1"] > result.scores["map"]["pircRBa1"]


def test_one_leaderboard_is_not_a_comparison():
    with pytest.raises(LeaderboardError, match="two leaderboards"):
        board_specs(["map"])


def test_two_names_of_one_measure_order_the_runs_identically_tau_ap_included(robust_store):
    result = compare_leaderboards(robust_store, board_specs(["P.10", "P_10"]), topics="601-605")
    (row,) = result.pairs.to_pylist()
    scores = result.scores["P_10"]
    assert len(set(scores.values())) < len(scores)  # P@10 ties runs: the case that matters
    assert row["swaps"] == 0 and row["kendall_tau"] == 1.0
    assert row["tau_ap"] == 1.0 and row["spearman_rho"] == 1.0
