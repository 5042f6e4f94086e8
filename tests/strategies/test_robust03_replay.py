"""Robust03 replay targets (topics 601-650, candidates = each run's top 100, qrels as oracle).

Published-style reference figures: found share (mean over topics of the share of the depth
pool's relevant documents found) at 50 and 100 judgments per topic, and Kendall's tau of the
MAP ranking at 50. Ours must agree within 3 points.
"""

from __future__ import annotations

import pytest

from pooling.strategies.replays import bootstrap_tau, parse_strategy, parse_topics, replay, score

pytestmark = pytest.mark.shared

FOUND = {  # strategy: (found share at 50, at 100)
    "random": (0.11, 0.23),
    "depth": (0.50, 0.67),
    "take:fusion=rrf": (0.55, 0.73),
    "mtf": (0.59, 0.73),
    "thompson": (0.59, 0.76),
    "maxmean": (0.62, 0.78),
    "hedge": (0.63, 0.79),
}
TAU_AT_50 = {"depth": 0.84, "mtf": 0.90, "maxmean": 0.90}
FLOORED = {"maxmean": (0.74, 0.75), "hedge": (0.74, 0.75)}  # floor 10, found share at 100
BEST = "mmfuse"


def _rows(data, strategy, floor=0, topics=None):
    sub = data if topics is None else data.subset(topics)
    rep = replay(sub, parse_strategy(strategy), 100, floor=floor)
    return {r["budget"]: r for r in score(sub, rep, [50, 100])}


@pytest.mark.parametrize("strategy", list(FOUND))
def test_found_share_matches_the_reference(robust03_replay, strategy):
    rows = _rows(robust03_replay, strategy)
    at_50, at_100 = FOUND[strategy]
    assert rows[50]["found_share"] == pytest.approx(at_50, abs=0.03)
    assert rows[100]["found_share"] == pytest.approx(at_100, abs=0.03)


@pytest.mark.parametrize("strategy", list(TAU_AT_50))
def test_tau_at_50_matches_the_reference(robust03_replay, strategy):
    assert _rows(robust03_replay, strategy)[50]["tau"] == pytest.approx(TAU_AT_50[strategy], abs=0.03)


def test_random_tau_is_far_below_the_adaptive_strategies(robust03_replay):
    # The reference's 0.47 is one draw: over seeds 0-9 random's tau at 50 spans 0.29-0.78,
    # so only its distance from the rest is pinned.
    taus = [
        score(robust03_replay, replay(robust03_replay, parse_strategy("random"), 50, seed=s), [50])[0]["tau"]
        for s in range(5)
    ]
    assert sum(taus) / len(taus) < TAU_AT_50["depth"] - 0.1


@pytest.mark.parametrize("strategy", list(FLOORED))
def test_floor_of_10_matches_the_reference(robust03_replay, strategy):
    low, high = FLOORED[strategy]
    assert low - 0.03 <= _rows(robust03_replay, strategy, floor=10)[100]["found_share"] <= high + 0.03


def test_best_strategy_beats_every_reference_strategy(robust03_replay):
    best = _rows(robust03_replay, BEST)
    assert best[100]["found_share"] > max(v[1] for v in FOUND.values())  # the figures: > 0.79
    for other in FOUND:  # and our own replays of them, at both budgets
        rows = _rows(robust03_replay, other)
        assert best[100]["found_share"] > rows[100]["found_share"]
        assert best[50]["found_share"] > rows[50]["found_share"]


@pytest.mark.xfail(
    strict=True,
    reason="with a floor of 10 mmfuse finds 0.7599 at 100 on 601-650 (0.797 on tuning 601-625, "
    "0.723 held-out 626-650); target 0.76. The previous defaults (b = 1) found 0.763 here but "
    "only 0.797 without a floor",
)
def test_best_strategy_with_a_floor_of_10_finds_at_least_76_percent(robust03_replay):
    assert _rows(robust03_replay, BEST, floor=10)[100]["found_share"] >= 0.76


def test_best_strategy_with_a_floor_of_10_beats_the_floored_references(robust03_replay):
    floored = _rows(robust03_replay, BEST, floor=10)[100]["found_share"]
    assert floored > max(high for _, high in FLOORED.values())
    for other in FLOORED:
        assert floored > _rows(robust03_replay, other, floor=10)[100]["found_share"]


def test_best_strategy_holds_up_on_held_out_topics(robust03_replay):
    # Parameters were chosen on 601-625; on 626-650 mmfuse (77.4%) beats Hedge (75.6%) and
    # MaxMean (76.4%).
    held_out = parse_topics("626-650")
    best = _rows(robust03_replay, BEST, topics=held_out)[100]["found_share"]
    assert best > _rows(robust03_replay, "hedge", topics=held_out)[100]["found_share"]
    assert best > _rows(robust03_replay, "maxmean", topics=held_out)[100]["found_share"]


def test_best_strategy_finds_80_percent_at_100(robust03_replay):
    assert _rows(robust03_replay, BEST)[100]["found_share"] >= 0.80


@pytest.mark.xfail(
    strict=True,
    reason="mmfuse's tau at 50 is 0.897 on 601-650 (7 of 136 run pairs swapped, one of them "
    "0.0002 MAP apart under full qrels); target 0.90. Untied tau-b on 17 runs moves in steps "
    "of 1/68 (6 swaps 0.912, 7 swaps 0.897), so the reference's 0.90 for MTF and MaxMean can "
    "only be 0.897 printed to two places (barring tied MAPs); our replays of maxmean and mtf give 0.897 and 0.882",
)
def test_best_strategy_tau_at_50_is_at_least_090(robust03_replay):
    assert _rows(robust03_replay, BEST)[50]["tau"] >= 0.90


def _tuning_criterion(data, spec):
    """mmfuse's documented choice rule (scripts/tune_mmfuse.py): half the found share at 100
    without and with a floor of 10, plus 0.1 x the bootstrap tau at 50."""
    strategy = parse_strategy(spec)
    rep = replay(data, strategy, 100)
    found = score(data, rep, [100])[0]["found_share"]
    floored = score(data, replay(data, strategy, 100, floor=10), [100])[0]["found_share"]
    return (found + floored) / 2 + 0.1 * bootstrap_tau(data, rep, 50)


def test_best_strategy_defaults_beat_their_grid_neighbours_on_the_tuning_topics(robust03_replay):
    # The defaults are the grid's best on 601-625; here every one-step neighbour is re-checked.
    tuning = robust03_replay.subset(parse_topics("601-625"))
    chosen = _tuning_criterion(tuning, BEST)
    neighbours = {
        "prior_mean": (0.1, 0.3), "strength": (2, 8), "power": (16, 32), "flatten": (0.45, 0.8),
    }
    for key, values in neighbours.items():
        for value in values:
            assert chosen > _tuning_criterion(tuning, f"{BEST}:{key}={value}"), (key, value)


def test_bootstrap_tau_is_1_when_every_pooled_document_is_judged(robust03_replay):
    data = robust03_replay.subset(parse_topics("601-605"))
    everything = replay(data, parse_strategy("depth"), 10_000)
    assert bootstrap_tau(data, everything, 10_000, resamples=50) == pytest.approx(1.0)
    assert bootstrap_tau(data, everything, 5, resamples=50) < 1.0


@pytest.mark.parametrize("depth", [10, 125])
def test_vectorised_depth_pool_equals_the_per_topic_rankings(robust03, depth):
    # MU03rob01 and rutcor03100 tie most scores: the doc_id-descending tie-break decides.
    from pooling.strategies import rankings_by_topic
    from pooling.strategies.replays import depth_pool

    _, runs = robust03
    pool = depth_pool(runs, depth)
    expected = {(q, d) for q, t in rankings_by_topic(runs, depth).items() for d in t.candidates()}
    assert set(zip(pool["query_id"].to_pylist(), pool["doc_id"].to_pylist(), strict=True)) == expected
    assert pool.num_rows == len(expected)
