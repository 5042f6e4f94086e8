"""agreement_report: one round's summary, consistent with the statistics it gathers."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from agreement_data import rating_matrix, same, to_rows
from sklearn.metrics import cohen_kappa_score

from pooling.agreement import (
    AgreementError,
    agreement_report,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    raw_overlap,
)


def test_report_gathers_pairwise_and_group_statistics():
    m = rating_matrix(21, 120, 3, 0.6, [0.6, 0.3, 0.1], n_raters=3, missing=0.3)
    rows = to_rows(m, ["ann", "bob", "cat"])
    report = agreement_report(rows, grades=[0, 1, 2, 3], threshold=1)
    judged = (~np.isnan(m)).sum(axis=1)
    assert report.assessors == ("ann", "bob", "cat")
    assert report.grades == (0, 1, 2, 3)
    assert (report.n_shared, report.n_single, report.n_complete) == (
        int((judged >= 2).sum()), int((judged == 1).sum()), int((judged == 3).sum()))
    assert report.raters_per_pair == {2: int((judged == 2).sum()), 3: int((judged == 3).sum())}
    assert [(p.assessor_a, p.assessor_b) for p in report.pairs] == [
        ("ann", "bob"), ("ann", "cat"), ("bob", "cat")]
    for pair in report.pairs:
        i, j = ["ann", "bob", "cat"].index(pair.assessor_a), ["ann", "bob", "cat"].index(
            pair.assessor_b)
        both = ~np.isnan(m[:, i]) & ~np.isnan(m[:, j])
        assert pair.n == int(both.sum())
        for weights, value in [(None, pair.kappa), ("linear", pair.kappa_linear),
                               ("quadratic", pair.kappa_quadratic)]:
            expected = cohen_kappa_score(m[both, i], m[both, j], weights=weights,
                                         labels=[0, 1, 2, 3])
            assert same(value, expected)
        assert same(pair.overlap, raw_overlap(rows, [pair.assessor_a, pair.assessor_b]))
    assert same(report.fleiss_kappa, fleiss_kappa(rows, unequal="mean"))
    assert same(report.alpha_nominal, krippendorff.alpha(m.T, level_of_measurement="nominal"))
    assert same(report.alpha_ordinal, krippendorff.alpha(m.T, level_of_measurement="ordinal"))
    assert same(report.alpha_ordinal, krippendorff_alpha(rows, level="ordinal"))
    assert same(report.overlap, raw_overlap(rows))


def test_report_is_json_ready():
    rows = to_rows(rating_matrix(22, 30, 3, 0.7, None), ["a", "b"])
    data = agreement_report(rows).to_dict()
    assert json.loads(json.dumps(data))["pairs"][0]["assessor_a"] == "a"
    assert set(data) >= {"n_shared", "n_single", "pairs", "fleiss_kappa", "alpha_nominal",
                         "alpha_ordinal", "overlap"}
    assert all(isinstance(v, float) for k, v in data.items() if k.startswith(("alpha", "fleiss")))


def test_report_on_two_assessors_agrees_with_cohen_kappa():
    rows = to_rows(rating_matrix(23, 50, 4, 0.5, None), ["a", "b"])
    report = agreement_report(rows)
    assert report.pairs[0].kappa == cohen_kappa(rows)
    assert report.pairs[0].kappa_quadratic == cohen_kappa(rows, weights="quadratic")


def test_report_skips_pairs_of_assessors_who_never_met():
    rows = [("q", "d1", "a", 1), ("q", "d1", "b", 0), ("q", "d2", "a", 1), ("q", "d2", "c", 1)]
    report = agreement_report(rows)
    assert [(p.assessor_a, p.assessor_b) for p in report.pairs] == [("a", "b"), ("a", "c")]


def test_report_with_one_assessor_says_a_second_is_needed():
    with pytest.raises(AgreementError, match="only one assessor.*second assessor"):
        agreement_report([("q", "d1", "a", 1), ("q", "d2", "a", 0)])


def test_report_without_shared_pairs_says_what_to_assign():
    with pytest.raises(AgreementError, match="no .* pair was judged by two.*2 pairs judged once"):
        agreement_report([("q", "d1", "a", 1), ("q", "d2", "b", 0)])
