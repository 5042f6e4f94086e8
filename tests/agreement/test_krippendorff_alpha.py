"""Krippendorff's alpha against the `krippendorff` package, with and without missing judgments."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from agreement_data import CASES, rating_matrix, same, to_rows

from pooling.agreement import krippendorff_alpha


def _reference(m, level, value_domain=None):
    try:
        return krippendorff.alpha(reliability_data=m.T, level_of_measurement=level,
                                  value_domain=value_domain)
    except ValueError:  # the package refuses when nothing is pairable or one value is used
        return float("nan")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize(("raters", "missing"), [(2, 0.0), (3, 0.0), (3, 0.3), (5, 0.5)])
def test_alpha_matches_krippendorff_package(case, level, raters, missing):
    seed, n, k, agree, p = case
    m = rating_matrix(seed, n, k, agree, p, n_raters=raters, missing=missing)
    ours = krippendorff_alpha(to_rows(m, seed=seed), level=level)
    assert isinstance(ours, float)
    assert same(ours, _reference(m, level))


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_alpha_over_a_scale_with_unused_grades_matches_value_domain(level):
    m = rating_matrix(11, 70, 4, 0.5, None, n_raters=4, missing=0.4)
    m[m == 2] = 5
    scale = [0, 1, 2, 3, 4, 5]
    ours = krippendorff_alpha(to_rows(m), level=level, grades=scale)
    assert same(ours, _reference(m, level, value_domain=scale))
    assert same(ours, krippendorff_alpha(to_rows(m), level=level))


def test_krippendorff_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 coders × 12
    # units example with missing values: nominal 0.743, interval 0.849 (also the package's doctest).
    nan = np.nan
    data = np.array([
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]).T
    rows = to_rows(data)
    assert round(krippendorff_alpha(rows, level="nominal"), 3) == 0.743
    assert round(krippendorff_alpha(rows, level="interval"), 3) == 0.849
    assert round(krippendorff_alpha(rows, level="ordinal"), 3) == 0.815


def test_alpha_is_one_for_perfect_agreement_and_nan_without_variation():
    rows = [("q", f"d{i}", r, i % 3) for i in range(9) for r in ("a", "b", "c")]
    assert krippendorff_alpha(rows) == 1.0
    assert np.isnan(krippendorff_alpha([("q", "d", "a", 1), ("q", "d", "b", 1)]))
