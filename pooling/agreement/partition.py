"""Agreement between two partitions of the same pairs (e.g. two assessors' grades read as
clusters): purity, inverse purity and their F; normalised and adjusted mutual information.

NMI and AMI follow scikit-learn's defaults (arithmetic mean of the entropies) and special
cases, so numbers can be compared with papers that used it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pooling.agreement.judgments import align

_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class PartitionAgreement:
    """The reference assessor's grades are the classes, the other's the clusters."""

    n: int
    purity: float
    inverse_purity: float
    f: float
    nmi: float
    ami: float


def partition_agreement(judgments: Any, *, reference: str, other: str) -> PartitionAgreement:
    """All partition scores on the pairs both judged: `reference`'s grades are the classes,
    `other`'s the clusters (purity and inverse purity swap if the roles do)."""
    classes, clusters, _ = align(judgments, [reference, other]).pair(reference, other)
    return PartitionAgreement(
        n=len(classes),
        purity=purity(classes, clusters),
        inverse_purity=inverse_purity(classes, clusters),
        f=purity_f(classes, clusters),
        nmi=nmi(classes, clusters),
        ami=ami(classes, clusters),
    )


def contingency_table(classes: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """counts[i, k]: items in class i and cluster k (classes and clusters in sorted order)."""
    _, ci = np.unique(np.asarray(classes), return_inverse=True)
    _, ki = np.unique(np.asarray(clusters), return_inverse=True)
    table = np.zeros((ci.max(initial=-1) + 1, ki.max(initial=-1) + 1), dtype=np.int64)
    np.add.at(table, (ci, ki), 1)
    return table


def purity(classes: np.ndarray, clusters: np.ndarray) -> float:
    """Share of items in their cluster's majority class: Σ_k max_i n_ik / N (nan if empty)."""
    table = contingency_table(classes, clusters)
    return float(table.max(axis=0).sum()) / table.sum() if table.size else float("nan")


def inverse_purity(classes: np.ndarray, clusters: np.ndarray) -> float:
    """Share of items in their class's majority cluster: Σ_i max_k n_ik / N."""
    return purity(clusters, classes)


def purity_f(classes: np.ndarray, clusters: np.ndarray) -> float:
    """Harmonic mean of purity and inverse purity (one number that punishes both lumping
    everything together and splitting everything apart)."""
    p, ip = purity(classes, clusters), inverse_purity(classes, clusters)
    return 2 * p * ip / (p + ip) if p + ip > 0 else float("nan")


def mutual_information(table: np.ndarray) -> float:
    """MI in nats of a contingency table (scikit-learn's mutual_info_score arithmetic)."""
    n = table.sum()
    a, b = table.sum(axis=1), table.sum(axis=0)
    if a.size <= 1 or b.size <= 1:
        return 0.0
    i, k = np.nonzero(table)
    nz = table[i, k].astype(np.float64)
    terms = nz / n * (np.log(nz) - math.log(n)) + nz / n * (
        -np.log(a[i].astype(np.float64) * b[k]) + math.log(a.sum()) + math.log(b.sum())
    )
    terms = np.where(np.abs(terms) < _EPS, 0.0, terms)
    return max(float(terms.sum()), 0.0)


def entropy(counts: np.ndarray) -> float:
    """Entropy in nats of a labeling given its class sizes."""
    counts = np.asarray(counts, dtype=np.float64)
    counts = counts[counts > 0]
    if counts.size == 0:
        return 1.0  # scikit-learn's convention for an empty labeling
    total = counts.sum()
    return float(-np.sum((counts / total) * (np.log(counts) - math.log(total))))


def nmi(classes: np.ndarray, clusters: np.ndarray) -> float:
    """MI / mean(H(classes), H(clusters)); 1 when neither labeling splits, 0 when MI is 0."""
    table = contingency_table(classes, clusters)
    if table.shape[0] == table.shape[1] and table.shape[0] <= 1:
        return 1.0
    mi = mutual_information(table)
    if mi == 0:
        return 0.0
    return mi / ((entropy(table.sum(axis=1)) + entropy(table.sum(axis=0))) / 2)


def ami(classes: np.ndarray, clusters: np.ndarray) -> float:
    """(MI − E[MI]) / (mean(H) − E[MI]), E[MI] under random labelings with the same sizes."""
    table = contingency_table(classes, clusters)
    if table.shape[0] == table.shape[1] and table.shape[0] <= 1:
        return 1.0
    mi = mutual_information(table)
    emi = expected_mutual_information(table)
    normalizer = (entropy(table.sum(axis=1)) + entropy(table.sum(axis=0))) / 2
    # As scikit-learn: keep the signs but never divide 0 by 0 (emi can exceed mi by rounding).
    denominator = normalizer - emi
    denominator = min(denominator, -_EPS) if denominator < 0 else max(denominator, _EPS)
    numerator = mi - emi
    numerator = min(numerator, -_EPS) if numerator < 0 else max(numerator, _EPS)
    return numerator / denominator


def expected_mutual_information(table: np.ndarray) -> float:
    """E[MI] over the hypergeometric model of contingency tables with the given margins."""
    n = int(table.sum())
    a = table.sum(axis=1).astype(np.int64)
    b = table.sum(axis=0).astype(np.int64)
    if a.size <= 1 or b.size <= 1:
        return 0.0
    # lg[v] = log Γ(v), v >= 1 (index 0, a pole, is never read).
    lg = np.array([math.inf] + [math.lgamma(v) for v in range(1, n + 2)])
    emi = 0.0
    for ai in a:
        for bj in b:
            nij = np.arange(max(1, ai + bj - n), min(ai, bj) + 1)
            if nij.size == 0:
                continue
            term1 = nij / n
            term2 = math.log(n) + np.log(nij) - math.log(ai) - math.log(bj)
            log_p = (
                lg[ai + 1] + lg[bj + 1] + lg[n - ai + 1] + lg[n - bj + 1]
                - lg[nij + 1] - lg[n + 1]
                - lg[ai - nij + 1] - lg[bj - nij + 1] - lg[n - ai - bj + nij + 1]
            )
            emi += float(np.sum(term1 * term2 * np.exp(log_p)))
    return emi
