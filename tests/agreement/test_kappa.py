"""Cohen's and Fleiss' kappa and the confusion matrix, against scikit-learn and statsmodels."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from agreement_data import CASES, rating_matrix, same, to_rows
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from pooling.agreement import AgreementError, cohen_kappa, confusion_matrix, fleiss_kappa
from pooling.agreement.kappa import fleiss_kappa_from_counts, kappa_from_confusion


def _sk_kappa(x, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohen_kappa_score(x, y, **kw)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(case, weights):
    seed, n, k, agree, p = case
    m = rating_matrix(seed, n, k, agree, p)
    ours = cohen_kappa(to_rows(m, ["a", "b"], seed=seed), weights=weights)
    assert same(ours, _sk_kappa(m[:, 0], m[:, 1], weights=weights))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_over_a_scale_with_unused_grades_matches_sklearn_labels(case, weights):
    seed, n, k, agree, p = case
    m = rating_matrix(seed, n, k, agree, p)
    scale = list(range(-1, k + 2))  # grades -1, k and k+1 are never used
    ours = cohen_kappa(to_rows(m, ["a", "b"]), weights=weights, grades=scale)
    assert same(ours, _sk_kappa(m[:, 0], m[:, 1], weights=weights, labels=scale))


def test_an_unused_grade_inside_the_scale_changes_weighted_but_not_unweighted_kappa():
    m = rating_matrix(3, 50, 3, 0.5, None)
    m[m == 2] = 3  # grades 0, 1, 3 used; 2 on the scale but never used
    rows = to_rows(m, ["a", "b"])
    assert cohen_kappa(rows, grades=[0, 1, 2, 3]) == pytest.approx(cohen_kappa(rows), abs=1e-12)
    assert cohen_kappa(rows, weights="linear", grades=[0, 1, 2, 3]) != pytest.approx(
        cohen_kappa(rows, weights="linear"), abs=1e-6)


def test_grade_outside_the_given_scale_is_an_error():
    rows = [("q", "d", "a", 3), ("q", "d", "b", 1)]
    with pytest.raises(AgreementError, match="grade.*3.*not on the given scale"):
        cohen_kappa(rows, grades=[0, 1, 2])


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_is_one_on_a_diagonal_table(weights):
    assert kappa_from_confusion(np.diag([5, 3, 7]), weights=weights) == 1.0


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_is_zero_on_a_uniform_or_independent_table(weights):
    assert kappa_from_confusion(np.full((3, 3), 4), weights=weights) == pytest.approx(0, abs=1e-15)
    independent = np.outer([1, 2, 5], [3, 1, 4])  # joint = product of the margins
    assert kappa_from_confusion(independent, weights=weights) == pytest.approx(0, abs=1e-15)


def test_kappa_is_nan_when_both_assessors_use_one_grade():
    assert np.isnan(cohen_kappa([("q", "d1", "a", 1), ("q", "d1", "b", 1)]))


def test_kappa_worked_example():
    # Cohen (1960)-style 2×2: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no → p_o 0.7, p_e 0.5.
    assert kappa_from_confusion(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4, abs=1e-15)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("explicit", [False, True])
def test_confusion_matrix_matches_sklearn(case, explicit):
    seed, n, k, agree, p = case
    m = rating_matrix(seed, n, k, agree, p)
    labels = list(range(k + 1)) if explicit else None
    ours = confusion_matrix(to_rows(m, ["a", "b"], seed=seed), labels=labels)
    expected_labels = labels if explicit else np.unique(m).astype(int).tolist()
    assert list(ours.labels) == expected_labels
    assert ours.assessors == ("a", "b")
    np.testing.assert_array_equal(
        ours.counts, sk_confusion_matrix(m[:, 0], m[:, 1], labels=expected_labels))


def _counts(m, k):
    return np.stack([(m == g).sum(axis=1) for g in range(k)], axis=1)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("raters", [2, 3, 6])
def test_fleiss_kappa_matches_statsmodels(case, raters):
    seed, n, k, agree, p = case
    m = rating_matrix(seed, n, k, agree, p, n_raters=raters)
    ours = fleiss_kappa(to_rows(m, seed=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = sm_fleiss_kappa(_counts(m, k), method="fleiss")
    assert same(ours, expected)


def test_fleiss_kappa_published_example():
    # Fleiss (1971) as reproduced on Wikipedia's "Fleiss' kappa" page: 10 items, 14 raters.
    table = np.array([
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ])
    p_bar, p_e = Fraction(688, 1820), Fraction(4170, 19600)
    exact = float((p_bar - p_e) / (1 - p_e))
    assert fleiss_kappa_from_counts(table) == pytest.approx(exact, abs=1e-15)
    assert round(fleiss_kappa_from_counts(table), 3) == 0.210
    # The same table as judgments by 14 named assessors gives the same kappa.
    rows = [
        (f"q{i}", "d", f"r{r}", g)
        for i, row in enumerate(table)
        for r, g in enumerate(np.repeat(np.arange(5), row))
    ]
    assert fleiss_kappa(rows) == pytest.approx(exact, abs=1e-15)


def test_fleiss_kappa_refuses_varying_raters_and_says_what_to_do():
    m = rating_matrix(4, 30, 3, 0.6, None, n_raters=4, missing=0.3)
    with pytest.raises(AgreementError, match="same number.*unequal='complete'.*Krippendorff"):
        fleiss_kappa(to_rows(m))


def test_fleiss_kappa_complete_keeps_pairs_judged_by_everyone():
    m = rating_matrix(5, 60, 3, 0.6, None, n_raters=3, missing=0.2)
    full = m[~np.isnan(m).any(axis=1)]
    ours = fleiss_kappa(to_rows(m), unequal="complete")
    assert ours == pytest.approx(sm_fleiss_kappa(_counts(full, 3)), abs=1e-12)


def test_fleiss_kappa_varying_raters_rule():
    m = rating_matrix(6, 80, 3, 0.6, None, n_raters=4, missing=0.3)
    ours = fleiss_kappa(to_rows(m), unequal="mean")
    # The documented rule, written out item by item.
    p_items, totals = [], np.zeros(3)
    for row in m:
        r = row[~np.isnan(row)]
        if len(r) < 2:
            continue
        c = np.array([(r == g).sum() for g in range(3)])
        p_items.append((c * (c - 1)).sum() / (len(r) * (len(r) - 1)))
        totals += c
    p_e = ((totals / totals.sum()) ** 2).sum()
    assert ours == pytest.approx((np.mean(p_items) - p_e) / (1 - p_e), abs=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_fleiss_varying_rule_equals_fleiss_when_raters_are_equal(case):
    seed, n, k, agree, p = case
    rows = to_rows(rating_matrix(seed, n, k, agree, p, n_raters=3))
    assert same(fleiss_kappa(rows, unequal="mean"), fleiss_kappa(rows), tol=1e-15)
