"""Raw overlap (Voorhees 2000) against a set-based implementation."""

from __future__ import annotations

import numpy as np
import pytest
from agreement_data import CASES, rating_matrix, same, to_rows

from pooling.agreement import AgreementError, raw_overlap


def _sets(rows, threshold, names):
    judged = {}
    for q, d, who, g in rows:
        judged.setdefault((q, d), {})[who] = g
    keys = [k for k, v in judged.items() if all(n in v for n in names)]
    rel = [{k for k in keys if judged[k][n] >= threshold} for n in names]
    return keys, set.intersection(*rel), set.union(*rel)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("threshold", [1, 2])
@pytest.mark.parametrize(("raters", "missing"), [(2, 0.0), (2, 0.3), (3, 0.2)])
def test_pooled_overlap_matches_sets(case, threshold, raters, missing):
    seed, n, k, agree, p = case
    m = rating_matrix(seed, n, k, agree, p, n_raters=raters, missing=missing)
    rows = to_rows(m, seed=seed)
    names = [f"assessor{j}" for j in range(raters)]
    _, both, either = _sets(rows, threshold, names)
    expected = len(both) / len(either) if either else float("nan")
    assert same(raw_overlap(rows, threshold=threshold), expected)


@pytest.mark.parametrize("case", CASES)
def test_topic_averaged_overlap_matches_sets(case):
    seed, n, k, agree, p = case
    rows = to_rows(rating_matrix(seed, n, k, agree, p, missing=0.1), seed=seed)
    per_topic = []
    for q in sorted({r[0] for r in rows}):
        _, both, either = _sets([r for r in rows if r[0] == q], 1, ["assessor0", "assessor1"])
        if either:
            per_topic.append(len(both) / len(either))
    expected = float(np.mean(per_topic)) if per_topic else float("nan")
    assert same(raw_overlap(rows, average="topics"), expected)


def test_voorhees_style_example():
    rows = [("q", f"d{i}", "a", int(i < 6)) for i in range(10)] + [
        ("q", f"d{i}", "b", int(3 <= i < 8)) for i in range(10)]
    assert raw_overlap(rows) == pytest.approx(3 / 8)  # both: d3-d5, either: d0-d7


def test_overlap_needs_two_assessors():
    with pytest.raises(AgreementError, match="two assessors"):
        raw_overlap([("q", "d", "a", 1)])
