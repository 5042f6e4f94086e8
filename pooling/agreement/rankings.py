"""Correlation between two rankings of systems: Kendall's tau-b, tau_ap, Spearman's rho.

Inputs are per-system scores (a dict or pandas Series, run_id -> score) such as the MAP each
run gets under two assessors' qrels. Higher score ranks higher. Systems are matched by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pooling.agreement.errors import AgreementError

Scores = Mapping[str, float] | Any  # a dict or a pandas Series indexed by run_id


def kendall_tau(scores_a: Scores, scores_b: Scores) -> float:
    """Kendall's tau-b (ties adjusted, as scipy.stats.kendalltau): nan if either is constant."""
    x, y = paired_scores(scores_a, scores_b)
    i, j = np.triu_indices(len(x), k=1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    total = len(i)
    untied_x, untied_y = total - np.sum(sx == 0), total - np.sum(sy == 0)
    if untied_x == 0 or untied_y == 0:
        return float("nan")
    return float(np.sum(sx * sy)) / np.sqrt(float(untied_x)) / np.sqrt(float(untied_y))


def spearman_rho(scores_a: Scores, scores_b: Scores) -> float:
    """Spearman's rho: Pearson correlation of average ranks; nan if either is constant."""
    x, y = paired_scores(scores_a, scores_b)
    rx, ry = average_ranks(x), average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denominator = np.sqrt(np.sum(rx * rx) * np.sum(ry * ry))
    return float(np.sum(rx * ry) / denominator) if denominator > 0 else float("nan")


def tau_ap(scores_reference: Scores, scores_other: Scores, *, symmetric: bool = False) -> float:
    """AP correlation (Yilmaz, Aslam & Robertson 2008): Kendall-like, but top-weighted.

    tau_ap = 2/(N−1) Σ_{i=2..N} C(i)/(i−1) − 1, i running down the *other* ranking and C(i)
    counting the systems above position i that the reference also ranks above it. A swap near
    the top costs more than one near the bottom. symmetric=True averages both directions.

    Ties: the expected tau_ap when ties in each ranking are broken uniformly at random and
    independently. So a pair tied in the reference counts half-correct, and identical
    rankings with ties score below 1 (ties carry no order to agree on).
    """
    if symmetric:
        forward = tau_ap(scores_reference, scores_other)
        return 0.5 * (forward + tau_ap(scores_other, scores_reference))
    ref, other = paired_scores(scores_reference, scores_other)
    n = len(ref)
    if n < 2:
        return float("nan")
    # correct[y, x]: y ranked above x by the reference counts 1, a reference tie 1/2.
    correct = (ref[:, None] > ref[None, :]) + 0.5 * (ref[:, None] == ref[None, :])
    np.fill_diagonal(correct, 0.0)
    above = other[:, None] > other[None, :]  # above[y, x]: y strictly above x in `other`
    tied = other[:, None] == other[None, :]
    np.fill_diagonal(tied, False)
    c_above = np.sum(correct * above, axis=0)
    c_tied = np.sum(correct * tied, axis=0)
    n_above = above.sum(axis=0)
    n_tied = tied.sum(axis=0)  # group size g minus one
    total = 0.0
    for x in range(n):
        s, g = int(n_above[x]), int(n_tied[x]) + 1
        # x's position p is uniform over s+1..s+g; given p, each tied system is above x with
        # probability (p − s − 1)/(g − 1). Position 1 contributes nothing.
        p = np.arange(max(s + 1, 2), s + g + 1, dtype=np.float64)
        share = (p - s - 1) / (g - 1) if g > 1 else np.zeros_like(p)
        total += float(np.sum((c_above[x] + share * c_tied[x]) / (p - 1))) / g
    return 2.0 * total / (n - 1) - 1.0


def paired_scores(scores_a: Scores, scores_b: Scores) -> tuple[np.ndarray, np.ndarray]:
    """Both score vectors in one system order; the two must score exactly the same systems."""
    a, b = _as_dict(scores_a), _as_dict(scores_b)
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    if only_a or only_b:
        parts = []
        if only_a:
            parts.append(f"only in the first: {', '.join(only_a[:10])}")
        if only_b:
            parts.append(f"only in the second: {', '.join(only_b[:10])}")
        raise AgreementError(
            f"the two rankings score different systems ({'; '.join(parts)}); "
            "pass the scores of the systems both evaluated"
        )
    names = sorted(a)
    x = np.array([a[s] for s in names], dtype=np.float64)
    y = np.array([b[s] for s in names], dtype=np.float64)
    if np.isnan(x).any() or np.isnan(y).any():
        bad = [s for s, u, v in zip(names, x, y, strict=True) if np.isnan(u) or np.isnan(v)]
        raise AgreementError(f"systems {', '.join(bad[:10])} have a NaN score; drop or fix them")
    return x, y


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ascending, ties sharing the mean of the ranks they span."""
    uniq, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    below = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (below + (counts + 1) / 2.0)[inverse]


def _as_dict(scores: Scores) -> dict[str, float]:
    if isinstance(scores, Mapping):
        return {str(k): float(v) for k, v in scores.items()}
    if hasattr(scores, "items") and hasattr(scores, "index"):  # a pandas Series
        if not scores.index.is_unique:
            raise AgreementError("the scores name a system twice; keep one score per system")
        return {str(k): float(v) for k, v in scores.items()}
    raise AgreementError(
        f"cannot read system scores from a {type(scores).__name__}; pass a dict or a pandas "
        "Series of run_id -> score"
    )
