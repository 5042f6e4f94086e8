"""Inferred measures from a stratified sample of judgments, as NIST's sample_eval.pl computes them.

xinfAP (infAP extended to strata) and infNDCG are from Yilmaz, Kanoulas & Aslam, "A Simple and
Efficient Sampling Method for Estimating AP and NDCG" (SIGIR 2008). One topic's pool is a set
of pooled documents, each in a stratum and either judged (grade >= 0) or not (-1). Within a
stratum the judged documents are a simple random sample, so a stratum's relevant share is
estimated by its judged relevant share. Documents outside the pool count as non-relevant.

The conventions of sample_eval.pl, kept exactly (docs/sampling.md lists them all):
- the expected precision above a relevant document at rank k is
  1/k + (pooled above / k) * sum over strata of (pooled above in h / pooled above)
  * (relevant above in h + 0.00001) / (judged above in h + 0.00003);
- xinfAP is the sum over strata of (estimated relevant in h / estimated R) times the mean
  of those precisions over the judged relevant documents the run ranks in h;
- the estimated relevant retrieved by rank k (`inum_rel_ret`, and iP@k = it / k) uses the
  same smoothing; infNDCG's ideal DCG places round(estimated count) documents per grade,
  grades in descending text order, and stops each grade at rank 1000;
- strata and grades are visited in text order, and sums are accumulated in that order, so
  values agree with the script to the last bit and print identically.

Every per-topic function takes `weights`, one row per replicate of the judged documents'
multiplicities (ones for the estimate itself): a bootstrap resamples judged documents within
each stratum by changing these counts (`pooling.evaluation.sampled_intervals`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

SMOOTH_RELEVANT = 0.00001  # added to a stratum's relevant count above a rank
SMOOTH_JUDGED = 0.00003  # added to its judged count, so an unjudged stratum counts ~1/3
MAX_RESULTS = 1000  # documents per topic that count (sample_eval's $maxResultSize)
PRECISION_CUTOFFS = (10, 50, MAX_RESULTS)
RECALL_LEVELS = tuple(float(x) for x in ("0", ".1", ".2", ".3", ".4", ".5", ".6", ".7", ".8",
                                         ".9", "1"))
# log2(r + 1) as the script computes it (log(r+1)/log(2)), for ranks 1 .. MAX_RESULTS + 1.
_DISCOUNT = np.array([1.0] + [math.log(r + 1) / math.log(2) for r in range(1, MAX_RESULTS + 2)])


@dataclass(frozen=True)
class SampledTopic:
    """One topic's pool: each pooled document's stratum and value (-1 unsampled, else its
    gain), and per stratum how many documents were pooled. Strata are in text order."""

    query_id: str
    doc_ids: pa.Array  # pooled documents, the lookup set for a run's documents
    stratum: np.ndarray  # per pooled doc: index into `strata`
    value: np.ndarray  # per pooled doc: -1.0 not sampled, 0 judged non-relevant, > 0 gain
    grade: np.ndarray  # per pooled doc: index into `grades` (-1 when not relevant)
    strata: tuple[str, ...]
    grades: tuple[str, ...]  # the relevant grades' texts, in text order (ideal DCG's order)
    pooled: np.ndarray  # per stratum: pooled documents

    @property
    def judged(self) -> np.ndarray:
        """Per pooled doc: whether it was drawn and judged."""
        return self.value >= 0


@dataclass(frozen=True)
class TopicTotals:
    """What a topic's sample says before any run: per replicate and stratum, judged and
    judged-relevant counts, the estimated number relevant and the estimated ideal DCG."""

    judged: np.ndarray  # replicates x strata
    relevant: np.ndarray  # replicates x strata
    num_rel: np.ndarray  # replicates
    ideal_dcg: np.ndarray  # replicates


@dataclass(frozen=True)
class TopicValues:
    """One run's inferred values on one topic, per replicate."""

    inf_ap: np.ndarray
    inf_ndcg: np.ndarray
    rel_ret_by_rank: np.ndarray  # replicates x ranked docs: estimated relevant in the top k
    num_ranked: int

    @property
    def num_rel_ret(self) -> np.ndarray:
        """Estimated relevant documents retrieved (0 for an empty ranking)."""
        if self.num_ranked == 0:
            return np.zeros(len(self.inf_ap))
        return self.rel_ret_by_rank[:, -1]

    def precision_at(self, k: int) -> np.ndarray:
        """iP@k: estimated relevant in the top k over k (the whole ranking when shorter)."""
        if self.num_ranked == 0:
            return np.zeros(len(self.inf_ap))
        return self.rel_ret_by_rank[:, min(k, self.num_ranked) - 1] / k


def perl_number(text: str) -> float:
    """A string read as a number the way Perl reads one: its leading number, else 0."""
    import re

    m = re.match(r"\s*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))", text)
    return float(m.group(1)) if m else 0.0


def sampled_topics(table: pa.Table, gains: dict[str, str] | None = None) -> dict[str, SampledTopic]:
    """Each topic's pool from a sampled qrels table (query_id, doc_id, stratum, relevance).

    gains: sample_eval's `-G`: a grade's text -> the text of the gain it is read as (a gain
    of -1 makes the grade unsampled, 0 non-relevant)."""
    gains = gains or {}
    out: dict[str, SampledTopic] = {}
    ordered = table.select(["query_id", "doc_id", "stratum", "relevance"]).sort_by("query_id")
    queries = ordered["query_id"].to_numpy(zero_copy_only=False)
    if len(queries) == 0:
        return out
    starts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1]])
    ends = np.r_[starts[1:], len(queries)]
    strata_all = ordered["stratum"].to_numpy(zero_copy_only=False)
    grades_all = ordered["relevance"].to_numpy()
    for begin, end in zip(starts.tolist(), ends.tolist(), strict=True):
        texts = [str(g) for g in grades_all[begin:end].tolist()]
        mapped = [gains.get(t, t) for t in texts]
        number = {t: perl_number(t) for t in set(mapped)}  # a handful of grades per topic
        value = np.array([number[t] for t in mapped], dtype=float)
        strata, stratum = np.unique(strata_all[begin:end].astype(str), return_inverse=True)
        relevant = value > 0
        grade_texts = sorted({t for t, r in zip(mapped, relevant.tolist(), strict=True) if r})
        grade_index = {t: i for i, t in enumerate(grade_texts)}
        grade = np.array([grade_index[t] if r else -1 for t, r in zip(mapped, relevant.tolist(),
                                                                        strict=True)], dtype=np.int64)
        qid = str(queries[begin])
        out[qid] = SampledTopic(qid, ordered["doc_id"].slice(begin, end - begin).combine_chunks(),
                                stratum.astype(np.int64), value, grade, tuple(strata.tolist()),
                                tuple(grade_texts), np.bincount(stratum, minlength=len(strata)))
    return out


def unit_weights(topic: SampledTopic) -> np.ndarray:
    """The weights of the estimate itself: every pooled document counted once (1 x docs)."""
    return np.ones((1, len(topic.value)))


def topic_totals(topic: SampledTopic, weights: np.ndarray) -> TopicTotals:
    """The run-independent part of a topic: judged and relevant counts per stratum, the
    estimated number relevant, the estimated ideal DCG; one row per replicate.

    Weights are multiplicities, whole numbers, so the counts are exact whatever the order of
    their sums: each is one matrix product over the pooled documents."""
    n_strata = len(topic.strata)
    n_grades = len(topic.grades)
    in_stratum = np.eye(n_strata)[topic.stratum]  # pooled docs x strata, one-hot
    judged = weights @ (in_stratum * topic.judged[:, None])
    relevant = weights @ (in_stratum * (topic.value > 0)[:, None])
    # pooled docs x (stratum, grade) pairs, stratum-major: a relevant doc's one cell
    cell = np.zeros((len(topic.value), n_strata * n_grades))
    graded = np.flatnonzero(topic.grade >= 0)
    cell[graded, topic.stratum[graded] * n_grades + topic.grade[graded]] = 1.0
    counts = weights @ cell
    replicates = len(weights)
    num_rel = np.zeros(replicates)
    scale = np.zeros((replicates, n_strata))
    for h in range(n_strata):  # strata in text order, as the script sums them
        ok = judged[:, h] != 0
        scale[ok, h] = topic.pooled[h] / judged[ok, h]
        estimate = np.zeros(replicates)
        estimate[ok] = relevant[ok, h] * topic.pooled[h] / judged[ok, h]
        num_rel = num_rel + estimate
    per_grade = np.zeros((replicates, n_grades))
    for h in range(n_strata):
        for g in range(n_grades):
            count = counts[:, h * n_grades + g]
            ok = judged[:, h] != 0
            add = np.zeros(replicates)
            add[ok] = count[ok] * topic.pooled[h] / judged[ok, h]
            per_grade[:, g] = per_grade[:, g] + add
    values = [perl_number(g) for g in topic.grades]
    ideal = np.array([_ideal_dcg(values, per_grade[b]) for b in range(replicates)])
    return TopicTotals(judged, relevant, num_rel, ideal)


def _ideal_dcg(values: list[float], counts: np.ndarray) -> float:
    """The estimated ideal DCG: grades from the last in text order to the first, each taking
    round(count) ranks; a grade that reaches rank 1000 stops there, and every later grade
    still adds the one rank after where the previous one would have ended (the script's loop).
    The terms are added one by one in rank order, as the script adds them."""
    total = 0.0
    start = 0
    for g in range(len(values) - 1, -1, -1):
        n = int(counts[g] + 0.5)
        if n > 0:
            last = start + 1 if start + 1 >= MAX_RESULTS else min(start + n, MAX_RESULTS)
            ranks = np.arange(start + 1, last + 1)
            if last < len(_DISCOUNT):
                terms = values[g] / _DISCOUNT[ranks]
            else:  # one rank past the table, after an earlier grade reached rank 1000
                terms = np.array([values[g] / (math.log(r + 1) / math.log(2))
                                  for r in ranks.tolist()])
            total = float(np.add.accumulate(np.r_[total, terms])[-1])
        start += n
    return total


def ranked_positions(topic: SampledTopic, ranked_doc_ids: pa.Array) -> np.ndarray:
    """Each ranked document's index among the topic's pooled documents (-1 outside the pool)."""
    index = pc.index_in(ranked_doc_ids, value_set=topic.doc_ids)
    return index.fill_null(-1).to_numpy().astype(np.int64)


def infer_topic(topic: SampledTopic, totals: TopicTotals, positions: np.ndarray,
                weights: np.ndarray, *, by_rank: bool = True) -> TopicValues:
    """xinfAP, infNDCG and the estimated relevant by rank for one ranking (at most 1000 docs,
    best first, as `ranked_positions`), one value per replicate row of `weights`.

    Only judged documents change a weighted count, and only judged relevant ones add to
    xinfAP and infNDCG: each stratum's counts are accumulated over its own judged documents
    in the ranking and read at the judged relevant ones. The zeros left out add nothing, not
    even a bit, and a bootstrap's arrays shrink from replicates x ranked to replicates x judged.
    by_rank=False leaves the estimated relevant by rank out (what an interval needs).
    """
    n = len(positions)
    replicates = len(weights)
    if n == 0:
        zero = np.zeros(replicates)
        return TopicValues(zero, zero.copy(), np.zeros((replicates, 0)), 0)
    pooled = positions >= 0
    safe = np.where(pooled, positions, 0)
    stratum = np.where(pooled, topic.stratum[safe], -1)
    value = np.where(pooled, topic.value[safe], -1.0)
    cols = np.flatnonzero(pooled & (value >= 0))  # ranks (0-based) of the judged documents
    mult = weights[:, safe[cols]]  # replicates x judged: each one's multiplicity
    judged_stratum = stratum[cols]
    hits = np.flatnonzero(value[cols] > 0)  # the judged relevant ones, among the judged
    at = cols[hits]  # and their ranks
    rank = np.arange(1, n + 1, dtype=float)
    pool_in = np.cumsum(pooled).astype(float)
    pool_above = pool_in - pooled
    above = np.zeros((replicates, len(hits)))
    rel_by_rank = np.zeros((replicates, n if by_rank else 0))
    own_hits = []
    n_strata = len(topic.strata)
    docs_in = []
    judged_in = []
    for h in range(n_strata):
        in_h = stratum == h
        d_in = np.cumsum(in_h).astype(float)
        d_above = d_in - in_h
        mine = np.flatnonzero(judged_stratum == h)  # this stratum's judged, among the judged
        j_in = np.cumsum(mult[:, mine], axis=1)
        r_in = np.cumsum(mult[:, mine] * (value[cols[mine]] > 0), axis=1)
        # At each judged relevant document: the counts up to it, and its own step (it adds
        # its multiplicity to both the judged and the relevant count of its stratum).
        upto = np.searchsorted(mine, hits, side="right")
        own = judged_stratum[hits] == h
        step = np.where(own, mult[:, hits], 0.0)
        share = np.divide(d_above, pool_above, out=np.zeros(n), where=pool_above != 0)
        above = above + share[at] * (_count_at(r_in, upto) - step + SMOOTH_RELEVANT) / (
            _count_at(j_in, upto) - step + SMOOTH_JUDGED)
        if by_rank:
            upto_rank = np.searchsorted(cols[mine], np.arange(n), side="right")
            rel_by_rank = rel_by_rank + d_in * (_count_at(r_in, upto_rank) + SMOOTH_RELEVANT) / (
                _count_at(j_in, upto_rank) + SMOOTH_JUDGED)
        docs_in.append(d_in[-1])
        judged_in.append(j_in[:, -1] if len(mine) else np.zeros(replicates))
        own_hits.append(own)
    precision = 1.0 / rank[at] + (pool_above[at] / rank[at]) * above
    inf_ap = np.zeros(replicates)
    for h in range(n_strata):
        # Accumulated left to right (not pairwise), as the script adds them.
        sap = _running_total(mult[:, hits[own_hits[h]]] * precision[:, own_hits[h]])
        judged_h = totals.judged[:, h]
        relevant_h = totals.relevant[:, h]
        ok = (judged_h != 0) & (totals.num_rel != 0)
        estimate = np.divide(relevant_h * topic.pooled[h], judged_h, out=np.zeros(replicates),
                             where=ok)
        share = np.divide(estimate, totals.num_rel, out=np.zeros(replicates), where=ok)
        mean_prec = np.divide(sap, relevant_h, out=np.zeros(replicates), where=relevant_h != 0)
        inf_ap = inf_ap + np.where(ok, share * mean_prec, 0.0)
    dcg = np.zeros(replicates)
    depth = pool_in[-1]
    for h in range(n_strata):
        if depth == 0:
            break
        share = docs_in[h] / depth
        ranks_h = at[own_hits[h]]
        g = _running_total(mult[:, hits[own_hits[h]]] * (value[ranks_h] / _DISCOUNT[ranks_h + 1]))
        dcg = dcg + np.divide(share * g, judged_in[h], out=np.zeros(replicates),
                              where=judged_in[h] != 0)
    ndcg = np.divide(depth * dcg, totals.ideal_dcg, out=np.zeros(replicates),
                     where=totals.ideal_dcg != 0)
    return TopicValues(inf_ap, ndcg, rel_by_rank, n)


def _count_at(counts: np.ndarray, upto: np.ndarray) -> np.ndarray:
    """Running counts (replicates x documents) read after the first `upto` documents of each
    position (0: before any, a count of 0)."""
    if counts.shape[1] == 0:
        return np.zeros((len(counts), len(upto)))
    return np.where(upto > 0, counts[:, np.maximum(upto - 1, 0)], 0.0)


def _running_total(values: np.ndarray) -> np.ndarray:
    """Per row, the sum added left to right (the script's order; np.sum adds pairwise)."""
    if values.shape[1] == 0:
        return np.zeros(len(values))
    return np.add.accumulate(values, axis=1)[:, -1]


def interpolated_precision(rel_by_rank: np.ndarray, num_rel: float) -> np.ndarray:
    """Estimated interpolated precision at the 11 recall levels for one ranking, the script's
    way: level i's cut is i/10 of the estimated R; walking ranks from the last up, with the
    running best precision, each rank closes at most one level whose cut lies above the
    estimated relevant retrieved by that rank; levels left open take the final best."""
    out = np.zeros(len(RECALL_LEVELS))
    cuts = [level * num_rel for level in RECALL_LEVELS]
    level = len(cuts) - 1
    retrieved = float(rel_by_rank[-1]) if len(rel_by_rank) else 0.0
    while level >= 0 and cuts[level] > retrieved:
        level -= 1
    best = 0.0
    for k in range(len(rel_by_rank), 0, -1):
        found = float(rel_by_rank[k - 1])
        best = max(best, found / k)
        if level >= 0 and cuts[level] > found:
            out[level] += best
            level -= 1
    while level >= 0:
        out[level] += best
        level -= 1
    return out
