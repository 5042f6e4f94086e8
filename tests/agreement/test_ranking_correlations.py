"""Kendall's tau-b and Spearman's rho against scipy; tau_ap against its definition."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from agreement_data import same
from scipy.stats import kendalltau, spearmanr

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


def _tie_breakings(scores):
    """Every strict ranking that breaks the ties of `scores`, as score dicts."""
    groups = {}
    for s, v in scores.items():
        groups.setdefault(v, []).append(s)
    levels = sorted(groups)
    for perms in itertools.product(*(itertools.permutations(groups[v]) for v in levels)):
        out, rank = {}, 0
        for perm in perms:
            for s in perm:
                out[s] = rank
                rank += 1
        yield out


@pytest.mark.parametrize("seed", range(8))
def test_tau_ap_with_ties_is_the_mean_over_all_tie_breakings(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    names = [f"s{i}" for i in range(n)]
    ref = dict(zip(names, rng.integers(0, 3, n).astype(float), strict=True))
    other = dict(zip(names, rng.integers(0, 3, n).astype(float), strict=True))
    values = [
        _tau_ap_definition(r, o) for r in _tie_breakings(ref) for o in _tie_breakings(other)
    ]
    assert tau_ap(ref, other) == pytest.approx(float(np.mean(values)), abs=1e-12)


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


def test_tau_ap_with_ties_in_identical_rankings_is_below_one():
    ref = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}
    assert kendall_tau(ref, ref) == pytest.approx(1.0)
    assert tau_ap(ref, ref) < 1.0
