"""User-model measures: rbp and rbp_resid (trec_eval), ERR@k and nDCG@k as gdeval computes them."""

from __future__ import annotations

import numpy as np

from pooling.measures.context import Context, log2_of, seg_cumsum, seg_sum
from pooling.measures.gain import ratio_at_cutoffs
from pooling.measures.spec import Measure

GDEVAL_MAX_GRADE = 4  # gdeval.pl fixes g_max = 4 for ERR, whatever the topic's grades


def _powers(p: float, n: int) -> np.ndarray:
    """p**0 .. p**n by successive multiplication, as trec_eval forms them."""
    out = np.empty(n + 1)
    out[0] = 1.0
    if n:
        out[1:] = p
        out[1:] = np.multiply.accumulate(out[1:])
    return out


def rbp(ctx: Context, m: Measure) -> np.ndarray:
    """(1 - p) * sum of gain * p^(rank-1); gains scaled into [0, 1] per topic when needed.

    The table is grades 0..max grade (gain = grade) plus every grade=gain pair; when a gain
    is < 0 or > 1 each becomes (g - lo) / (hi - lo) with lo = min(0, gains) and
    hi = max(0, gains), which is what the trec_eval 10.0 reference build computes.
    """
    p, pairs = m.values
    r = ctx.r
    override = dict(pairs)
    top = r.qrels.max_grade.astype(np.float64)  # highest default gain per topic
    lo = np.zeros(ctx.T)
    hi = np.maximum(top, 0.0)
    if override:
        for t in range(ctx.T):
            table = {g: float(g) for g in range(int(r.qrels.max_grade[t]) + 1)}
            table.update(override)
            lo[t] = min(0.0, *table.values())
            hi[t] = max(0.0, *table.values())
    gain = np.where(r.rel >= 0, r.rel, 0).astype(np.float64)
    known = r.rel >= 0
    for grade, value in pairs:
        gain[r.rel == grade] = value
        known |= r.rel == grade
    lo_d, hi_d = lo[r.topic], hi[r.topic]
    scale = (lo_d < 0) | (hi_d > 1)
    gain = np.where(scale & known, (gain - lo_d) / np.where(scale, hi_d - lo_d, 1.0), gain)
    powers = _powers(p, int(r.rank.max(initial=0)))
    total = seg_sum(gain * powers[r.rank - 1], r.topic, ctx.T)
    return (1 - p) * total


def rbp_resid(ctx: Context, m: Measure) -> np.ndarray:
    """p^n + (1 - p) * sum of p^(rank-1) over unjudged ranks; 0 when every doc is judged."""
    p = m.values[0]
    starts, rel = ctx.r.dense_rel()
    n = np.diff(starts)
    topic = np.repeat(np.arange(ctx.T), n)
    rank = np.arange(len(rel)) - starts[topic] + 1
    powers = _powers(p, int(n.max(initial=0)))
    unj = rel < 0
    total = seg_sum(powers[rank[unj] - 1], topic[unj], ctx.T)
    has = np.bincount(topic[unj], minlength=ctx.T) > 0
    return np.where(has, powers[n] + (1 - p) * total, 0.0)


def _positive(ctx: Context):
    r = ctx.r
    pos = r.rel > 0
    return r.topic[pos], r.rank[pos], r.rel[pos]


def err(ctx: Context, m: Measure) -> np.ndarray:
    """ERR@k (Chapelle et al. 2009) with gdeval's R = (2^g - 1) / 2^4."""
    topic, rank, grade = _positive(ctx)
    stop = (np.exp2(grade) - 1) / 2.0**GDEVAL_MAX_GRADE
    survive = seg_cumsum(1.0 - stop, topic, np.multiply)
    before = np.ones(len(topic))  # probability of reaching each doc: survive, exclusive
    same = topic[1:] == topic[:-1]
    before[1:][same] = survive[:-1][same]
    terms = stop * before / rank
    return np.stack([seg_sum(np.where(rank <= k, terms, 0.0), topic, ctx.T) for k in m.values], 1)


def gdeval_ndcg(ctx: Context, m: Measure) -> np.ndarray:
    """nDCG@k as gdeval computes it: gain 2^g - 1, ideal from all positive judgments."""
    topic, rank, grade = _positive(ctx)
    terms = (np.exp2(grade) - 1) / log2_of(rank + 1)
    q = ctx.r.qrels
    ok = q.grade > 0
    it, ig = q.topic[ok], q.grade[ok]
    order = np.lexsort((-ig, it))
    it, ig = it[order], ig[order]
    ipos = np.arange(len(it)) - np.searchsorted(it, it) + 1
    iterms = (np.exp2(ig) - 1) / log2_of(ipos + 1)
    return ratio_at_cutoffs(ctx, m.values, (topic, rank, terms), (it, ipos, iterms))
