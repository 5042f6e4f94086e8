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
    # One square root of the product: for identical orderings it is the square root of a
    # perfect square, exact, so tau is exactly 1 (two roots divided in turn gave 1 ± 1 ulp).
    return _correlation(float(np.sum(sx * sy)), np.sqrt(float(untied_x) * float(untied_y)))


def spearman_rho(scores_a: Scores, scores_b: Scores) -> float:
    """Spearman's rho: Pearson correlation of average ranks; nan if either is constant."""
    x, y = paired_scores(scores_a, scores_b)
    rx, ry = average_ranks(x), average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denominator = np.sqrt(np.sum(rx * rx) * np.sum(ry * ry))
    return _correlation(float(np.sum(rx * ry)), denominator) if denominator > 0 else float("nan")


def tau_ap(scores_reference: Scores, scores_other: Scores, *, symmetric: bool = False) -> float:
    """AP correlation (Yilmaz, Aslam & Robertson 2008): Kendall-like, but top-weighted.

    tau_ap = 2/|S| Σ_{x∈S} C(x)/A(x) − 1, x running down the *other* ranking: A(x) counts the
    systems strictly above x there, C(x) those of them the reference also ranks strictly above
    x, and S holds every system below the other ranking's top. A swap near the top costs more
    than one near the bottom. Without ties this is Yilmaz et al.'s tau_ap (A(x) = i − 1 at
    position i, |S| = N − 1), the reference being the first ranking.

    Ties: Urbano & Marrero's tau_AP_b (ICTIR 2017), the agreement variant for two rankings
    that may both tie. A system's position is its tie group's first, so peers tied with x in
    the other ranking are not above it; a pair the other ranking orders but the reference ties
    counts as a disagreement. Identical orderings, ties included, give exactly 1 (reversed:
    −1). symmetric=True averages both directions, which is their tau_AP_b itself. nan when
    either ranking is constant.
    """
    ref, other = paired_scores(scores_reference, scores_other)
    if len(ref) < 2 or np.all(ref == ref[0]) or np.all(other == other[0]):
        return float("nan")
    if symmetric:
        return 0.5 * (_tau_ap_b_direction(ref, other) + _tau_ap_b_direction(other, ref))
    return _tau_ap_b_direction(ref, other)


def _correlation(numerator: float, denominator: float) -> float:
    """numerator / denominator within [-1, 1]: a correlation's last bit of rounding never
    takes it past a bound (identical orderings print 1, not 1.0000000000000002)."""
    return min(1.0, max(-1.0, float(numerator / denominator)))


def _tau_ap_b_direction(ref: np.ndarray, other: np.ndarray) -> float:
    """tau_ap of `other` against `ref`, positions from `other` (tie groups at their top)."""
    above = other[None, :] > other[:, None]  # above[x, y]: y strictly above x in `other`
    agreed = above & (ref[None, :] > ref[:, None])  # ... and strictly above x in `ref`
    n_above = above.sum(axis=1)
    below_top = n_above > 0
    share = agreed.sum(axis=1)[below_top] / n_above[below_top]
    return min(1.0, max(-1.0, float(2.0 * share.mean() - 1.0)))


def paired_scores(scores_a: Scores, scores_b: Scores) -> tuple[np.ndarray, np.ndarray]:
    """Both score vectors in one system order; the two must score exactly the same systems."""
    a, b = as_scores(scores_a), as_scores(scores_b)
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


def as_scores(scores: Scores) -> dict[str, float]:
    """run_id -> score as a plain dict of floats, from a mapping or a pandas Series."""
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
