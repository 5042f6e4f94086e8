"""Intent-aware (diversity) measures, as ndeval computes them: α-nDCG, ERR-IA, NRBP, P-IA,
subtopic recall and MAP-IA over judgments of documents against a topic's subtopics.

`LevelJudgments` is a subtopic qrels read at one relevance level (which subtopics each
judged document is relevant to; the greedy ideal rankings); `IntentContext` holds one run's
ranked judged documents against it. Every measure is vectorised over topics; sums of floats are
taken in ndeval's order (subtopics in their order, ranks one after another), so values match
its C code to the last bit or nearly. The conventions read from ndeval: docs/diversity.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from pooling.errors import MeasureError
from pooling.measures.spec import Measure

ALPHA = 0.5  # ndeval's default redundancy intolerance
BETA = 0.5  # ndeval's default patience (NRBP)


@dataclass(frozen=True)
class LevelJudgments:
    """A subtopic qrels read at one relevance level (a subtopic judgment counts iff its grade
    is >= level; ndeval's judgments are binary).

    Only subtopics with at least one relevant document count (ndeval ignores the others), so
    each topic has `subtopics[t]` slots, in the order ndeval sums them.
    """

    rel: np.ndarray  # bool[D, S]: judged doc d is relevant to slot s of its topic
    subtopics: np.ndarray  # int64[Q]: subtopics with a relevant doc, per qrels topic
    relevant_docs: np.ndarray  # int64[Q, S]: docs relevant to each slot
    doc_topic: np.ndarray  # int64[D]
    _ideals: dict[float, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, compare=False, repr=False)

    def ideal(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """(starts[Q+1], gains): each topic's greedy ideal ranking as the gain of each rank
        (computed once per alpha, for every run)."""
        if alpha not in self._ideals:
            self._ideals[alpha] = _ideal(self, alpha)
        return self._ideals[alpha]


def _ideal(level: LevelJudgments, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """ndeval's greedy ideal: at each rank the document adding the most α-discounted gain
    (a tie goes to the greatest doc_id), until no document adds any; all topics at once."""
    Q = len(level.subtopics)
    docs = np.flatnonzero(level.rel.any(axis=1))  # in (topic, doc_id) order
    topic = level.doc_topic[docs]
    sizes = np.bincount(topic, minlength=Q)
    K = int(sizes.max()) if len(docs) else 0
    S = level.rel.shape[1]
    within = np.arange(len(docs)) - (np.cumsum(sizes) - sizes)[topic]
    rel = np.zeros((S, Q, K), bool)  # slot-major: each slot's (topic, doc) plane contiguous
    rel[:, topic, within] = level.rel[docs].T
    gain = np.ones((S, Q))
    unplaced = np.ones((Q, K))  # 1 until placed, then 0 (a placed doc's score drops to -1)
    out = np.zeros((Q, K))
    depth = np.zeros(Q, np.int64)
    decay = 1.0 - alpha
    score, term = np.empty((Q, K)), np.empty((Q, K))
    for step in range(K):
        score.fill(0.0)
        for s in range(S):  # ndeval adds the subtopics' gains in their order
            np.multiply(rel[s], gain[s][:, None], out=term)
            score += term
        score *= unplaced
        score -= 1.0 - unplaced
        best = score.max(axis=1)
        act = np.flatnonzero(best > 0)
        if not len(act):
            break
        ties = score[act] == best[act, None]
        pick = K - 1 - np.argmax(ties[:, ::-1], axis=1)  # the greatest doc_id among ties
        out[act, step] = best[act]
        depth[act] += 1
        unplaced[act, pick] = 0.0
        hit = rel[:, act, pick]  # S x len(act): the picked docs' subtopics
        gain[:, act] = np.where(hit, gain[:, act] * decay, gain[:, act])
    starts = np.concatenate([[0], np.cumsum(depth)])
    return starts, out[np.arange(K)[None, :] < depth[:, None]]


class IntentContext:
    """One run's judged retrieved documents against a subtopic qrels, at one level.

    Entries are flat, sorted by (evaluated topic, position); position is 0-based in the
    run's order (score descending, ties by doc_id ascending, as pyndeval sorts).
    """

    def __init__(self, judgments: LevelJudgments, qtopic: np.ndarray, topic: np.ndarray,
                 position: np.ndarray, doc: np.ndarray):
        self.j = judgments
        self.T = len(qtopic)
        self.qtopic = qtopic  # int64[T]: qrels topic of each evaluated topic
        self.topic = topic
        self.position = position
        self.R = np.ascontiguousarray(judgments.rel[doc].T)  # bool[S, n]: slot by slot
        self.S = judgments.subtopics[qtopic].astype(np.int64)  # int64[T]
        self._gains: dict[float, np.ndarray] = {}
        self._curves: dict[tuple[float, bool, int], tuple[np.ndarray, np.ndarray]] = {}

    @cached_property
    def before(self) -> np.ndarray:
        """int64[S, n]: documents above each entry in its topic relevant to each slot."""
        counts = np.cumsum(self.R, axis=1, dtype=np.int64) - self.R
        n = len(self.topic)
        if n == 0:
            return counts
        size = np.bincount(self.topic, minlength=self.T)
        first = np.minimum(np.cumsum(size) - size, n - 1)  # each topic's first entry
        return counts - np.repeat(counts[:, first], size, axis=1)

    def gain(self, alpha: float) -> np.ndarray:
        """float64[n]: each entry's gain, Σ over its slots of (1 - α)^(docs above it relevant
        to that slot), added slot by slot as ndeval adds them."""
        if alpha not in self._gains:
            top = int(self.before.max()) + 1 if self.before.size else 1
            powers = np.cumprod(np.concatenate([[1.0], np.full(top, 1.0 - alpha)]))
            score = np.zeros(len(self.topic))
            for s in range(self.R.shape[0]):
                score += self.R[s] * powers[self.before[s]]
            self._gains[alpha] = score
        return self._gains[alpha]

    def curves(self, alpha: float, log: bool, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """(run, ideal): T x depth, the normalised α-DCG (log) or ERR-IA at every rank, kept
        because α-DCG and α-nDCG (ERR-IA and nERR-IA) share them."""
        key = (alpha, log, depth)
        if key not in self._curves:
            ranks = np.arange(1, depth + 1)
            run = self.dense(self.gain(alpha), depth)
            ideal = self.ideal_dense(alpha, depth)
            self._curves[key] = (_normalised_cumulative(self, run, alpha, log, ranks),
                                 _normalised_cumulative(self, ideal, alpha, log, ranks))
        return self._curves[key]

    def dense(self, values: np.ndarray, depth: int) -> np.ndarray:
        """float64[T, depth]: per-entry values placed at their positions (0 elsewhere)."""
        out = np.zeros((self.T, depth))
        near = self.position < depth
        out[self.topic[near], self.position[near]] = values[near]
        return out

    def ideal_dense(self, alpha: float, depth: int) -> np.ndarray:
        """float64[T, depth]: the gains of each topic's ideal ranking, rank by rank."""
        starts, gains = self.j.ideal(alpha)
        size = np.diff(starts)[self.qtopic]
        at = starts[self.qtopic][:, None] + np.arange(depth)[None, :]
        inside = np.arange(depth)[None, :] < size[:, None]
        if len(gains) == 0:
            return np.zeros((self.T, depth))
        return np.where(inside, gains[np.minimum(at, len(gains) - 1)], 0.0)


# ------------------------------------------------------------------------ settings

def settings(measure: Measure) -> dict[str, float]:
    """The measure's alpha and beta (ndeval's defaults where not given)."""
    out = {"alpha": ALPHA, "beta": BETA}
    for part in (measure.param_text or "").split(","):
        if part:
            name, _, value = part.partition("=")
            out[name] = float(value)
    return out


def check_setting(name: str, value: float) -> None:
    """α and β are between 0 and 1, as ndeval requires."""
    if not 0.0 <= value <= 1.0:
        raise MeasureError(f"{name} must be between 0 and 1 (got {value:g}), as ndeval requires")


# ------------------------------------------------------------------------ measures

def _cutoffs(measure: Measure) -> np.ndarray:
    return np.asarray(measure.values, np.int64)


def _normalised_cumulative(ctx: IntentContext, gains: np.ndarray, alpha: float, log: bool,
                           cutoffs: np.ndarray) -> np.ndarray:
    """Σ discounted gain over the top k, divided by the "ideal ideal" (each rank relevant to
    every subtopic) from rank 2 on: ndeval leaves rank 1 undivided. The discount is
    1/log2(rank + 1) (α-DCG) or 1/rank (ERR-IA), applied as ndeval applies it."""
    depth = gains.shape[1]
    ideal_gain = np.cumprod(np.concatenate(
        [ctx.S[:, None].astype(np.float64), np.full((ctx.T, depth - 1), 1.0 - alpha)], axis=1),
        axis=1)
    if log:
        discount = np.log(2.0) / np.log(np.arange(depth) + 2.0)
        cum, ideal = np.cumsum(gains * discount, axis=1), np.cumsum(ideal_gain * discount, axis=1)
    else:
        rank = np.arange(depth) + 1.0
        cum, ideal = np.cumsum(gains / rank, axis=1), np.cumsum(ideal_gain / rank, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        normed = np.where(np.arange(depth)[None, :] >= 1, cum / ideal, cum)
    normed[ctx.S == 0] = 0.0
    return normed[:, cutoffs - 1]


def _run_and_ideal(ctx: IntentContext, measure: Measure, log: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(the run's value, the ideal ranking's value) at each cutoff, T x cutoffs each."""
    cutoffs = _cutoffs(measure)
    run, ideal = ctx.curves(settings(measure)["alpha"], log, int(cutoffs.max()))
    return run[:, cutoffs - 1], ideal[:, cutoffs - 1]


def _over_ideal(run: np.ndarray, ideal: np.ndarray) -> np.ndarray:
    """run / ideal where the run has gain (ndeval leaves the others at 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(run != 0, run / ideal, 0.0)


def alpha_dcg(ctx: IntentContext, measure: Measure) -> np.ndarray:
    return _run_and_ideal(ctx, measure, log=True)[0]


def alpha_ndcg(ctx: IntentContext, measure: Measure) -> np.ndarray:
    return _over_ideal(*_run_and_ideal(ctx, measure, log=True))


def err_ia(ctx: IntentContext, measure: Measure) -> np.ndarray:
    return _run_and_ideal(ctx, measure, log=False)[0]


def nerr_ia(ctx: IntentContext, measure: Measure) -> np.ndarray:
    # ndeval normalises ERR-IA where α-DCG (not ERR-IA) is non-zero: the same ranks.
    return _over_ideal(*_run_and_ideal(ctx, measure, log=False))


def _nrbp_sums(gains: np.ndarray, topic: np.ndarray, position: np.ndarray, T: int,
               S: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """NRBP per topic: Σ gain x β^(rank-1), ranks in order, times (1 - (1-α)β) / S."""
    top = int(position.max()) + 1 if len(position) else 1
    decay = np.cumprod(np.concatenate([[1.0], np.full(top - 1, beta)]))
    total = np.bincount(topic, weights=gains * decay[position], minlength=T)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = total * ((1 - (1 - alpha) * beta) / S)
    out[S == 0] = 0.0
    return out


def nrbp(ctx: IntentContext, measure: Measure) -> np.ndarray:
    s = settings(measure)
    return _nrbp_sums(ctx.gain(s["alpha"]), ctx.topic, ctx.position, ctx.T, ctx.S,
                      s["alpha"], s["beta"])


def nnrbp(ctx: IntentContext, measure: Measure) -> np.ndarray:
    """NRBP over the ideal's NRBP; a topic with no relevant document is 0 / 0 (NaN), as in
    ndeval."""
    s = settings(measure)
    run = nrbp(ctx, measure)
    starts, gains = ctx.j.ideal(s["alpha"])
    size = np.diff(starts)
    qt = np.repeat(np.arange(len(size)), size)
    pos = np.arange(len(gains)) - starts[qt]
    ideal_q = _nrbp_sums(gains, qt, pos, len(size), ctx.j.subtopics, s["alpha"], s["beta"])
    with np.errstate(divide="ignore", invalid="ignore"):
        return run / ideal_q[ctx.qtopic]


def map_ia(ctx: IntentContext, measure: Measure) -> np.ndarray:
    """Mean over the topic's subtopics of each subtopic's average precision."""
    relevant_docs = ctx.j.relevant_docs[ctx.qtopic]
    out = np.zeros(ctx.T)
    rank = ctx.position + 1.0
    for s in range(ctx.R.shape[0]):
        # precision at each document relevant to the slot (others add an exact 0.0)
        total = np.bincount(ctx.topic, weights=ctx.R[s] * ((ctx.before[s] + 1) / rank),
                            minlength=ctx.T)
        has = relevant_docs[:, s] > 0
        out[has] += total[has] / relevant_docs[has, s]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = out / ctx.S
    out[ctx.S == 0] = 0.0
    return out


def p_ia(ctx: IntentContext, measure: Measure) -> np.ndarray:
    """Relevant (document, subtopic) pairs in the top k over k x subtopics."""
    cutoffs = _cutoffs(measure)
    pairs = ctx.R.sum(axis=0).astype(np.float64)
    cum = np.cumsum(ctx.dense(pairs, int(cutoffs.max())), axis=1)[:, cutoffs - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = cum / (cutoffs[None, :] * ctx.S[:, None])
    out[ctx.S == 0] = 0.0
    return out


def subtopic_recall(ctx: IntentContext, measure: Measure) -> np.ndarray:
    """Subtopics with a relevant document in the top k, over the topic's subtopics."""
    cutoffs = _cutoffs(measure)
    firsts = ctx.R & (ctx.before == 0)  # the first document of each subtopic
    new = firsts.sum(axis=0).astype(np.float64)
    cum = np.cumsum(ctx.dense(new, int(cutoffs.max())), axis=1)[:, cutoffs - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = cum / ctx.S[:, None]
    out[ctx.S == 0] = 0.0
    return out
