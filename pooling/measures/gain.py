"""Graded-gain measures: ndcg, ndcg_cut, ndcg_rel, Rndcg, G, binG, and CG@k / DCG@k.

Gains follow trec_eval's table: grade g gains g unless `-m ndcg.g=v,…` overrides it; a doc
without a judgment (-1) or with a negative grade (-2) gains 0 unless a pair names -1 / -2.
The discount is log2(rank + 1). These measures ignore the relevance level, except Rndcg,
which is 0 when R = 0. (trec_eval sorts fractional gains with an integer comparator; we sort
them correctly, so custom gains less than 1 apart can differ from trec_eval.)
"""

from __future__ import annotations

import math

import numpy as np

from pooling.measures.context import Context, log2_of, seg_cumsum, seg_sum
from pooling.measures.spec import Measure


def _gain_of(rel: np.ndarray, pairs: tuple[tuple[int, float], ...]) -> np.ndarray:
    gain = np.where(rel >= 0, rel, 0).astype(np.float64)
    for grade, value in pairs:
        gain[rel == grade] = value
    return gain


def _run_gains(ctx: Context, pairs: tuple[tuple[int, float], ...]):
    """(topic, rank, gain) of retrieved docs with a non-zero gain, in rank order."""
    r = ctx.r
    if dict(pairs).get(-1, 0.0) == 0.0:
        topic, rank, gain = r.topic, r.rank, _gain_of(r.rel, pairs)
    else:  # non-pool docs carry a gain: every retrieved doc counts
        starts, rel = r.dense_rel()
        topic = np.repeat(np.arange(ctx.T), np.diff(starts))
        rank = np.arange(len(rel)) - starts[topic] + 1
        gain = _gain_of(rel, pairs)
    keep = gain != 0
    return topic[keep], rank[keep], gain[keep]


def _ideal(ctx: Context, pairs: tuple[tuple[int, float], ...]):
    """(topic, position, gain) of the ideal ranking: judged gains > 0, highest first."""
    q = ctx.r.qrels
    judged = q.grade >= 0
    topic, gain = q.topic[judged], _gain_of(q.grade[judged], pairs)
    keep = gain > 0
    topic, gain = topic[keep], gain[keep]
    order = np.lexsort((-gain, topic))
    topic, gain = topic[order], gain[order]
    starts = np.searchsorted(topic, np.arange(ctx.T + 1))
    position = np.arange(len(topic)) - starts[topic] + 1
    return topic, position, gain


def _dcg_terms(rank: np.ndarray, gain: np.ndarray) -> np.ndarray:
    return gain / log2_of(rank + 1)


def ndcg(ctx: Context, m: Measure) -> np.ndarray:
    pairs = m.values
    topic, rank, gain = _run_gains(ctx, pairs)
    dcg = seg_sum(_dcg_terms(rank, gain), topic, ctx.T)
    it, ipos, igain = _ideal(ctx, pairs)
    idcg = seg_sum(_dcg_terms(ipos, igain), it, ctx.T)
    return ctx.ratio(dcg, idcg)


def ratio_at_cutoffs(
    ctx: Context,
    cutoffs: tuple[int, ...],
    run: tuple[np.ndarray, np.ndarray, np.ndarray],
    ideal: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """topics x cutoffs: the run's DCG@k over the ideal DCG@k, each given as (topic, rank,
    discounted gain) rows; shared by trec_eval's ndcg_cut and gdeval's nDCG."""
    topic, rank, terms = run
    it, ipos, iterms = ideal
    cols = []
    for k in cutoffs:
        dcg = seg_sum(np.where(rank <= k, terms, 0.0), topic, ctx.T)
        idcg = seg_sum(np.where(ipos <= k, iterms, 0.0), it, ctx.T)
        cols.append(ctx.ratio(dcg, idcg))
    return np.stack(cols, axis=1)


def ndcg_cut(ctx: Context, m: Measure) -> np.ndarray:
    """DCG@k over IDCG@k with gain = grade (grades <= 0 and unjudged gain nothing)."""
    topic, rank, gain = _run_gains(ctx, ())
    it, ipos, igain = _ideal(ctx, ())
    return ratio_at_cutoffs(
        ctx, m.values, (topic, rank, _dcg_terms(rank, gain)), (it, ipos, _dcg_terms(ipos, igain))
    )


def dcg_cut(ctx: Context, m: Measure) -> np.ndarray:
    """DCG@k = sum of grade / log2(rank + 1) over the top k (ndcg_cut's numerator)."""
    topic, rank, gain = _run_gains(ctx, ())
    terms = _dcg_terms(rank, gain)
    return np.stack([seg_sum(np.where(rank <= k, terms, 0.0), topic, ctx.T) for k in m.values], 1)


def cg_cut(ctx: Context, m: Measure) -> np.ndarray:
    """CG@k = sum of grades (> 0) over the top k, undiscounted."""
    topic, rank, gain = _run_gains(ctx, ())
    return np.stack([seg_sum(np.where(rank <= k, gain, 0.0), topic, ctx.T) for k in m.values], 1)


def _value_at(topic: np.ndarray, rank: np.ndarray, cum: np.ndarray, t: np.ndarray, at: np.ndarray):
    """cum at the last entry of topic t with rank <= at (0 when there is none)."""
    span = int(max(rank.max(initial=0), at.max(initial=0))) + 1
    keys = topic * span + rank
    idx = np.searchsorted(keys, t * span + at, side="right") - 1
    ok = (idx >= 0) & (topic[np.maximum(idx, 0)] == t) if len(topic) else np.zeros(len(t), bool)
    out = np.zeros(len(t))
    out[ok] = cum[idx[ok]]
    return out


def ndcg_rel(ctx: Context, m: Measure) -> np.ndarray:
    pairs = m.values
    topic, rank, gain = _run_gains(ctx, pairs)
    dcg = seg_cumsum(_dcg_terms(rank, gain), topic)
    it, ipos, igain = _ideal(ctx, pairs)
    idcg = seg_cumsum(_dcg_terms(ipos, igain), it)
    K = np.bincount(it, minlength=ctx.T)
    idcg_k = _value_at(it, ipos, idcg, np.arange(ctx.T), K)
    idcg_at = _value_at(it, ipos, idcg, topic, np.minimum(rank, K[topic]))
    pos = gain > 0
    sums = np.zeros(ctx.T)
    np.add.at(sums, topic[pos], dcg[pos] / idcg_at[pos])
    dcg_n = _value_at(topic, rank, dcg, np.arange(ctx.T), ctx.num_ret)
    missed = K - np.bincount(topic[pos], minlength=ctx.T)
    with np.errstate(divide="ignore", invalid="ignore"):
        sums = sums + np.where(K > 0, missed * dcg_n / idcg_k, 0.0)
    return np.where(sums > 0, sums / np.maximum(K, 1), 0.0)


def rndcg(ctx: Context, m: Measure) -> np.ndarray:
    """Mean of ndcg at the end of each ideal gain level (and at n when n >= K + 2)."""
    pairs = m.values
    topic, rank, gain = _run_gains(ctx, pairs)
    dcg = seg_cumsum(_dcg_terms(rank, gain), topic)
    it, ipos, igain = _ideal(ctx, pairs)
    idcg = seg_cumsum(_dcg_terms(ipos, igain), it)
    K = np.bincount(it, minlength=ctx.T)
    n = ctx.num_ret
    level_end = np.ones(len(it), bool)
    level_end[:-1] = (it[1:] != it[:-1]) | (igain[1:] != igain[:-1])
    pt, pk = it[level_end], ipos[level_end]
    values = _value_at(topic, rank, dcg, pt, np.minimum(pk, n[pt])) / idcg[level_end]
    total = np.zeros(ctx.T)
    np.add.at(total, pt, values)
    points = np.bincount(pt, minlength=ctx.T).astype(np.float64)
    extra = (K >= 1) & (n >= K + 2)
    t = np.flatnonzero(extra)
    idcg_k = _value_at(it, ipos, idcg, t, K[t])
    total[t] += _value_at(topic, rank, dcg, t, n[t]) / idcg_k
    points[t] += 1
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total / points
    return np.where(ctx.num_rel > 0, mean, 0.0)


def gain_g(ctx: Context, m: Measure) -> np.ndarray:
    """trec_eval's G: gain / log2(2 + ideal cumulative - run cumulative), over the ideal sum."""
    pairs = m.values
    topic, rank, gain = _run_gains(ctx, pairs)
    it, ipos, igain = _ideal(ctx, pairs)
    K = np.bincount(it, minlength=ctx.T)
    ideal_cum = seg_cumsum(np.maximum(igain, 1.0), it)
    run_cum = seg_cumsum(gain, topic)
    within = np.minimum(rank, K[topic])
    c = _value_at(it, ipos, ideal_cum, topic, within) + np.maximum(rank - K[topic], 0)
    arg = 2 + c - run_cum
    terms = gain / np.array([math.log2(x) for x in arg.tolist()])
    return ctx.ratio(seg_sum(terms, topic, ctx.T), seg_sum(igain, it, ctx.T))


def bin_g(ctx: Context, m: Measure) -> np.ndarray:
    """binG: each relevant doc adds 1 / log2(2 + non-relevant docs above it); over R."""
    rel = ctx.is_rel
    u = ctx.r.rank[rel] - ctx.rel_so_far[rel]
    return ctx.ratio(ctx.sum(1.0 / log2_of(u + 2), rel), ctx.num_rel)
