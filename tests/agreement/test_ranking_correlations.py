"""Kendall's tau-b and Spearman's rho against scipy; tau_ap against its definition."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from agreement_data import same
from scipy.stats import kendalltau, rankdata, spearmanr

from pooling.agreement import AgreementError, kendall_tau, spearman_rho, tau_ap


def _scores(seed, n, decimals=None, noise=0.3):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = a + noise * rng.standard_normal(n)
    if decimals is not None:
        a, b = np.round(a, decimals), np.round(b, decimals)
    names = [f"run{i:03d}" for i in range(n)]
    return dict(zip(names, a, strict=True)), dict(zip(names, b, strict=True)), a, b


SIZES = [2, 3, 5, 12, 60, 300]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("decimals", [None, 1, 0])  # 0 decimals: heavy ties, often constant
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kendall_tau_b_and_spearman_match_scipy(n, decimals, seed):
    da, db, a, b = _scores(seed, n, decimals)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tau = kendalltau(a, b).statistic
        rho = spearmanr(a, b).statistic
    assert same(kendall_tau(da, db), tau)
    assert same(spearman_rho(da, db), rho)


def test_systems_are_matched_by_name_not_order():
    da, db, a, b = _scores(4, 30, 2)
    reversed_b = dict(reversed(list(db.items())))
    series_b = pd.Series(db).sample(frac=1.0, random_state=1)
    for other in (reversed_b, series_b):
        assert kendall_tau(da, other) == pytest.approx(kendalltau(a, b).statistic, abs=1e-12)
        assert tau_ap(da, other) == tau_ap(da, db)


def test_different_systems_are_an_error_naming_them():
    with pytest.raises(AgreementError, match="only in the first: x.*only in the second: y"):
        kendall_tau({"x": 1.0, "z": 2.0}, {"y": 1.0, "z": 2.0})


def test_nan_scores_are_an_error():
    with pytest.raises(AgreementError, match="run1.*NaN"):
        spearman_rho({"run1": float("nan"), "run2": 1.0}, {"run1": 0.0, "run2": 1.0})


def _tau_ap_definition(ref, other):
    """Yilmaz et al. (2008), eq. for tau_ap, no ties: positions from `other`."""
    order = sorted(ref, key=lambda s: -other[s])
    total = sum(
        sum(ref[order[j]] > ref[order[i]] for j in range(i)) / i for i in range(1, len(order))
    )
    return 2 * total / (len(order) - 1) - 1


@pytest.mark.parametrize("n", [2, 3, 7, 40, 150])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tau_ap_matches_its_definition_without_ties(n, seed):
    da, db, _, _ = _scores(seed, n)
    assert tau_ap(da, db) == pytest.approx(_tau_ap_definition(da, db), abs=1e-12)
    assert tau_ap(db, da) == pytest.approx(_tau_ap_definition(db, da), abs=1e-12)
    assert tau_ap(da, db, symmetric=True) == pytest.approx(
        (_tau_ap_definition(da, db) + _tau_ap_definition(db, da)) / 2, abs=1e-12)


def _tau_ap_b_by_definition(ref, other):
    """Urbano & Marrero (2017), tau_AP_b in one direction, straight from its definition.

    Walk the systems of `other`; a system's position is 1 + the number strictly above it (its
    tie group's first place). Every system not at position 1 scores the share of the systems
    above it that `ref` also puts strictly above it; average, then map [0, 1] to [-1, 1].
    """
    names = sorted(ref)
    position = dict(zip(names, rankdata([-other[s] for s in names], method="min"), strict=True))
    shares = []
    for s in names:
        if position[s] == 1:
            continue
        above = [t for t in names if other[t] > other[s]]
        assert len(above) == position[s] - 1
        shares.append(sum(ref[t] > ref[s] for t in above) / len(above))
    return 2 * sum(shares) / len(shares) - 1


def _tied_scores(seed, n, levels):
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(n)]
    ref = rng.integers(0, levels, n).astype(float)
    other = np.where(rng.random(n) < 0.7, ref, rng.integers(0, levels, n)).astype(float)
    return dict(zip(names, ref, strict=True)), dict(zip(names, other, strict=True))


@pytest.mark.parametrize("n", [3, 6, 17, 40])
@pytest.mark.parametrize("levels", [2, 4, 10])
@pytest.mark.parametrize("seed", range(6))
def test_tau_ap_with_ties_matches_urbano_and_marreros_tau_ap_b_by_definition(n, levels, seed):
    ref, other = _tied_scores(seed, n, levels)
    if len(set(ref.values())) == 1 or len(set(other.values())) == 1:
        assert np.isnan(tau_ap(ref, other))
        return
    forward, backward = _tau_ap_b_by_definition(ref, other), _tau_ap_b_by_definition(other, ref)
    assert tau_ap(ref, other) == pytest.approx(forward, abs=1e-12)
    assert tau_ap(other, ref) == pytest.approx(backward, abs=1e-12)
    assert tau_ap(ref, other, symmetric=True) == pytest.approx((forward + backward) / 2,
                                                               abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_tau_ap_by_definition_is_yilmaz_tau_ap_without_ties(seed):
    da, db, _, _ = _scores(seed, 25)
    assert _tau_ap_b_by_definition(da, db) == pytest.approx(_tau_ap_definition(da, db), abs=1e-12)
    assert tau_ap(da, db) == pytest.approx(_tau_ap_b_by_definition(da, db), abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_tau_ap_of_identical_orderings_with_ties_is_exactly_one(seed):
    ref, _ = _tied_scores(seed, 17, 5)
    # The same ordering on another scale (as P.10 against P_10, or P@10 against 10 × P@10).
    same_order = {s: 10 * v + 3 for s, v in ref.items()}
    assert kendall_tau(ref, same_order) == 1.0
    assert tau_ap(ref, same_order) == 1.0
    assert tau_ap(same_order, ref, symmetric=True) == 1.0
    assert tau_ap(ref, {s: -v for s, v in ref.items()}) == -1.0


def test_tau_ap_identical_rankings_is_one_and_reversed_is_minus_one():
    ref = {f"s{i}": float(i) for i in range(10)}
    assert tau_ap(ref, dict(ref)) == pytest.approx(1.0, abs=1e-15)
    assert tau_ap(ref, {s: -v for s, v in ref.items()}) == pytest.approx(-1.0, abs=1e-15)


def test_tau_ap_penalises_a_swap_at_the_top_more_than_at_the_bottom():
    ref = {f"s{i}": float(10 - i) for i in range(10)}  # s0 best ... s9 worst
    top, bottom = dict(ref), dict(ref)
    top["s0"], top["s1"] = ref["s1"], ref["s0"]
    bottom["s8"], bottom["s9"] = ref["s9"], ref["s8"]
    assert kendall_tau(ref, top) == pytest.approx(kendall_tau(ref, bottom))
    assert tau_ap(ref, top) < tau_ap(ref, bottom) < 1.0


def test_tau_ap_of_a_constant_ranking_is_nan_as_kendall_tau():
    ref = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}
    flat = {s: 1.0 for s in ref}
    assert np.isnan(kendall_tau(ref, flat)) and np.isnan(tau_ap(ref, flat))
    assert np.isnan(tau_ap(flat, ref)) and np.isnan(tau_ap(ref, flat, symmetric=True))


@pytest.mark.parametrize("levels", [2, 3, 5, 1000])
def test_identical_orderings_correlate_exactly_one_and_reversed_exactly_minus_one(levels):
    # 2 to 60 runs, ties or none: a rounding error used to print 0.9999999999999999 or
    # 1.0000000000000002 for a leaderboard against itself.
    for n in range(2, 61):
        rng = np.random.default_rng(n)
        scores = rng.integers(0, levels, n).astype(float)
        if len(set(scores)) < 2:
            continue
        ref = {f"s{i}": v for i, v in enumerate(scores)}
        rescaled = {s: 0.1 * v + 3 for s, v in ref.items()}
        reversed_ = {s: -v for s, v in ref.items()}
        assert (kendall_tau(ref, rescaled), spearman_rho(ref, rescaled),
                tau_ap(ref, rescaled)) == (1.0, 1.0, 1.0), n
        assert (kendall_tau(ref, reversed_), spearman_rho(ref, reversed_)) == (-1.0, -1.0), n


@pytest.mark.parametrize("seed", range(20))
def test_correlations_never_leave_minus_one_to_one(seed):
    da, db, _, _ = _scores(seed, 3 + seed, decimals=1, noise=0.05)
    for value in (kendall_tau(da, db), spearman_rho(da, db), tau_ap(da, db),
                  tau_ap(da, db, symmetric=True)):
        assert np.isnan(value) or -1.0 <= value <= 1.0
