"""Purity, inverse purity, their F, NMI and AMI; the information scores against scikit-learn."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from agreement_data import CASES, rating_matrix, same, to_rows
from sklearn.metrics import adjusted_mutual_info_score, normalized_mutual_info_score

from pooling.agreement import partition_agreement
from pooling.agreement.partition import ami, inverse_purity, nmi, purity, purity_f


def _purity(classes, clusters):
    by_cluster = {}
    for c, k in zip(classes, clusters, strict=True):
        by_cluster.setdefault(k, Counter())[c] += 1
    return sum(max(v.values()) for v in by_cluster.values()) / len(classes)


def _labelings(seed, n, k1, k2, noise):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k1, n)
    b = np.where(rng.random(n) < noise, rng.integers(0, k2, n), a % k2)
    return a, b


LABELINGS = [
    (0, 1, 1, 1, 0.0), (1, 2, 2, 2, 0.5), (2, 3, 3, 3, 1.0), (3, 10, 2, 5, 0.3),
    (4, 50, 4, 4, 0.2), (5, 200, 6, 3, 0.5), (6, 1000, 10, 8, 0.7), (7, 300, 2, 2, 1.0),
]


@pytest.mark.parametrize("labeling", LABELINGS)
def test_nmi_and_ami_match_sklearn(labeling):
    a, b = _labelings(*labeling)
    assert same(nmi(a, b), normalized_mutual_info_score(a, b))
    assert same(ami(a, b), adjusted_mutual_info_score(a, b))


@pytest.mark.parametrize("labeling", LABELINGS)
def test_purity_and_inverse_purity_match_counting(labeling):
    a, b = _labelings(*labeling)
    p, ip = _purity(a, b), _purity(b, a)
    assert same(purity(a, b), p) and same(inverse_purity(a, b), ip)
    assert same(purity_f(a, b), 2 * p * ip / (p + ip))


def test_special_partitions():
    one = np.zeros(6, int)
    singletons = np.arange(6)
    assert purity(one, singletons) == 1.0
    assert inverse_purity(one, singletons) == pytest.approx(1 / 6)
    assert nmi(one, one) == 1.0 and ami(one, one) == 1.0
    assert nmi(singletons, singletons) == pytest.approx(1.0)
    assert nmi(one, singletons) == normalized_mutual_info_score(one, singletons) == 0.0


@pytest.mark.parametrize("case", CASES)
def test_partition_agreement_of_two_assessors_matches_sklearn(case):
    seed, n, k, agree, p = case
    m = rating_matrix(seed, n, k, agree, p)
    rows = to_rows(m, ["ref", "other"], seed=seed)
    ours = partition_agreement(rows, reference="ref", other="other")
    a, b = m[:, 0], m[:, 1]
    assert ours.n == n
    assert same(ours.nmi, normalized_mutual_info_score(a, b))
    assert same(ours.ami, adjusted_mutual_info_score(a, b))
    assert same(ours.purity, _purity(a, b)) and same(ours.inverse_purity, _purity(b, a))
