"""Average precision and interpolated precision: map, gm_map, map_cut, iprec_at_recall, 11pt_avg."""

from __future__ import annotations

import numpy as np

from pooling.measures.context import Context, seg_suffix_max
from pooling.measures.spec import Measure


def _precision_at_rel(ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """(mask of relevant docs, precision at each of their ranks)."""
    rel = ctx.is_rel
    return rel, ctx.rel_so_far[rel] / ctx.r.rank[rel].astype(np.float64)


def average_precision(ctx: Context, m: Measure) -> np.ndarray:
    """Sum of precision at each relevant retrieved doc, over R (unretrieved count 0)."""
    rel, prec = _precision_at_rel(ctx)
    return ctx.ratio(ctx.sum(prec, rel), ctx.num_rel)


def gm_average_precision(ctx: Context, m: Measure) -> np.ndarray:
    """AP per topic; the summary is its geometric mean with a 1e-5 floor."""
    return average_precision(ctx, m)


def average_precision_cut(ctx: Context, m: Measure) -> np.ndarray:
    """map_cut_k: the AP sum restricted to ranks <= k, still over R."""
    rel, prec = _precision_at_rel(ctx)
    ranks = ctx.r.rank[rel]
    cols = [ctx.ratio(ctx.sum(np.where(ranks <= k, prec, 0.0), rel), ctx.num_rel) for k in m.values]
    return np.stack(cols, axis=1)


def average_precision_min_cut(ctx: Context, m: Measure) -> np.ndarray:
    """AP@k normalised by min(R, k) instead of R (the recommender-systems convention)."""
    rel, prec = _precision_at_rel(ctx)
    ranks = ctx.r.rank[rel]
    cols = [
        ctx.ratio(ctx.sum(np.where(ranks <= k, prec, 0.0), rel), np.minimum(ctx.num_rel, k))
        for k in m.values
    ]
    return np.stack(cols, axis=1)


def lround(x: np.ndarray) -> np.ndarray:
    """C lround for non-negative doubles: halves round away from zero (not to even)."""
    f = np.floor(x)
    return (f + (x - f >= 0.5)).astype(np.int64)


def _interpolated(ctx: Context, fractions: tuple[float, ...]) -> np.ndarray:
    """Interpolated precision at each recall fraction: (T, len(fractions))."""
    rel, prec = _precision_at_rel(ctx)
    topic = ctx.r.topic[rel]
    best = seg_suffix_max(prec, topic)  # max precision at or after each relevant doc
    starts = np.searchsorted(topic, np.arange(ctx.T + 1))
    out = np.zeros((ctx.T, len(fractions)))
    R = ctx.num_rel.astype(np.float64)
    for j, p in enumerate(fractions):
        c = lround(p * R)
        # c = 0 (p = 0) reads from the first relevant doc, like c = 1.
        t = np.flatnonzero((c <= ctx.num_rel_ret) & (ctx.num_rel_ret > 0))
        out[t, j] = best[starts[t] + np.maximum(c[t], 1) - 1]
    return out


def iprec_at_recall(ctx: Context, m: Measure) -> np.ndarray:
    """Max precision at any rank at or after the lround(p R)-th relevant doc."""
    return _interpolated(ctx, m.values)


def eleven_point_average(ctx: Context, m: Measure) -> np.ndarray:
    """Mean of the interpolated precisions at the listed recall fractions (0 when R = 0)."""
    points = _interpolated(ctx, m.values)
    total = np.zeros(ctx.T)
    for j in range(points.shape[1]):
        total = total + points[:, j]
    return np.where(ctx.num_rel > 0, total / len(m.values), 0.0)

