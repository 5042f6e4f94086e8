"""Evaluating runs against sampled qrels, exactly as NIST's sample_eval.pl does.

`evaluate_sampled(qrels, runs, measures)` returns an `Evaluation` (printed in trec_eval's
layout by `format_trec_runs`); `format_sample_eval` prints one run as the script itself does.
The script's reading of a run (docs/sampling.md#conventions):
- leading zeros are stripped from the run's topic ids (never from the qrels'), so `051` and
  `51` are one topic; a document listed twice keeps its last score;
- documents are ranked by score descending, ties by doc id descending (text order);
- only the first 1000 documents of a topic count;
- topics of the run absent from the qrels are skipped, and qrels topics the run lacks are not
  evaluated (nothing is averaged as 0); topics print in numeric order.
"""

from __future__ import annotations

# printf-style formatting is deliberate: `%6.4f`, `%14.4f` and `%9d` are the script's own.
# ruff: noqa: UP031
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import EvaluationError
from pooling.evaluation.results import Column, Evaluation, RunEvaluation
from pooling.evaluation.trec_input import TrecRun, read_run
from pooling.formats.sampled_qrels import read_sampled_qrels
from pooling.measures.inferred import (
    MAX_RESULTS,
    PRECISION_CUTOFFS,
    RECALL_LEVELS,
    SampledTopic,
    TopicTotals,
    TopicValues,
    infer_topic,
    interpolated_precision,
    perl_number,
    ranked_positions,
    sampled_topics,
    topic_totals,
    unit_weights,
)
from pooling.measures.sampled_names import SampledMeasure, parse_sampled_measures
from pooling.measures.spec import Measure, MeasureSpec
from pooling.measures.statap import statap_topic

SampledQrelsInput = str | Path | pa.Table
SampledRunInput = str | Path | TrecRun


class SampledEvaluationError(EvaluationError):
    """A run cannot be scored against sampled qrels (no shared topic, a bad -G mapping)."""


@dataclass(frozen=True)
class SampledQrels:
    """Sampled qrels ready to score runs: each topic's pool and its run-independent totals."""

    topics: dict[str, SampledTopic]
    totals: dict[str, TopicTotals]


@dataclass(frozen=True)
class RankedRun:
    """A run as the script reads it: per topic (zeros stripped) the top 1000 doc ids and the
    number of lines the file has for it."""

    run_id: str
    ranked: dict[str, pa.Array]
    lines: dict[str, int]


@dataclass(frozen=True)
class ScoredRun:
    """One run's inferred values on the topics it shares with the qrels (numeric order)."""

    run_id: str
    query_ids: list[str]
    values: dict[str, TopicValues]
    positions: dict[str, np.ndarray]
    lines: dict[str, int]


def parse_gains(pairs: Iterable[str]) -> dict[str, str]:
    """sample_eval's `-G grade=gain` pairs: one character of grade, up to three of gain."""
    out: dict[str, str] = {}
    for pair in pairs:
        grade, eq, gain = pair[:1], pair[1:2], pair[2:]
        if eq != "=" or len(gain) > 3 or not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)", gain):
            raise SampledEvaluationError(
                f"-G {pair!r}: write grade=gain with a one-character grade and a gain of up to "
                "three characters (e.g. 2=3), as sample_eval.pl reads it")
        out[grade] = gain
    return out


def load_sampled_qrels(qrels: SampledQrelsInput, gains: Mapping[str, str] | None = None
                       ) -> SampledQrels:
    """Read sampled qrels (a path or a table from `read_sampled_qrels`) into topic pools."""
    table = qrels if isinstance(qrels, pa.Table) else read_sampled_qrels(qrels)
    topics = sampled_topics(table, dict(gains or {}))
    return SampledQrels(topics, {q: topic_totals(t, unit_weights(t)) for q, t in topics.items()})


def rank_run(run: SampledRunInput) -> RankedRun:
    """The run read and ranked by the script's rules (see the module docstring)."""
    trec = run if isinstance(run, TrecRun) else read_run(run)
    table = trec.table
    query = pc.replace_substring_regex(table["query_id"], "^0*", "")
    rows = pa.table({"query_id": query, "doc_id": table["doc_id"], "score": table["score"],
                     "row": pa.array(np.arange(table.num_rows, dtype=np.int64))})
    counts = pc.value_counts(query)
    lines = dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(),
                     strict=True))
    last = rows.group_by(["query_id", "doc_id"]).aggregate([("row", "max")])
    kept = rows.take(last["row_max"])
    ordered = kept.sort_by([("query_id", "ascending"), ("score", "descending"),
                            ("doc_id", "descending")])
    queries = ordered["query_id"].to_numpy(zero_copy_only=False)
    ranked: dict[str, pa.Array] = {}
    if len(queries):
        starts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1]])
        ends = np.r_[starts[1:], len(queries)]
        docs = ordered["doc_id"].combine_chunks()
        for begin, end in zip(starts.tolist(), ends.tolist(), strict=True):
            ranked[str(queries[begin])] = docs.slice(begin, min(end - begin, MAX_RESULTS))
    return RankedRun(trec.run_id, ranked, lines)


def numeric_order(query_ids: Iterable[str]) -> list[str]:
    """Topic ids in the script's order: by their numeric value (Perl's reading), then text."""
    return sorted(query_ids, key=lambda q: (perl_number(q), q))


def score_run(qrels: SampledQrels, run: RankedRun) -> ScoredRun:
    """The inferred values of one ranked run on every topic it shares with the qrels."""
    shared = numeric_order(q for q in run.ranked if q in qrels.topics)
    values, positions = {}, {}
    for q in shared:
        topic = qrels.topics[q]
        positions[q] = ranked_positions(topic, run.ranked[q])
        values[q] = infer_topic(topic, qrels.totals[q], positions[q], unit_weights(topic))
    return ScoredRun(run.run_id, shared, values, positions, run.lines)


def _per_topic(qrels: SampledQrels, run: ScoredRun, m: SampledMeasure, q: str) -> float:
    v = run.values[q]
    if m.base == "infAP":
        return float(v.inf_ap[0])
    if m.base == "infNDCG":
        return float(v.inf_ndcg[0])
    if m.base == "iP":
        return float(v.precision_at(int(m.cutoff or 0))[0])
    if m.base == "iprec@rec":
        curve = interpolated_precision(v.rel_ret_by_rank[0], float(qrels.totals[q].num_rel[0]))
        return float(curve[RECALL_LEVELS.index(m.cutoff or 0.0)])
    if m.base == "inum_rel_ret":
        return float(v.num_rel_ret[0])
    if m.base == "inum_rel":
        return float(qrels.totals[q].num_rel[0])
    if m.base == "num_ret":
        return run.lines[q]
    return statap_topic(qrels.topics[q], run.positions[q]).estimate


def _summary(qrels: SampledQrels, run: ScoredRun, m: SampledMeasure, per_topic: np.ndarray
             ) -> float | int:
    """The `all` value the script prints: a mean over the evaluated topics, except the
    counts: inum_rel_ret summed, inum_rel summed over every qrels topic, num_ret the ranked
    documents (at most 1000 a topic) summed. Sums run in the script's topic order."""
    if m.base == "num_ret":
        return int(sum(run.values[q].num_ranked for q in run.query_ids))
    if m.base == "inum_rel":
        total = 0.0
        for q in sorted(qrels.totals):
            total += float(qrels.totals[q].num_rel[0])
        return total
    if m.base == "iprec@rec":  # the script adds these in text order of the topics
        by_text = sorted(range(len(run.query_ids)), key=lambda i: run.query_ids[i])
        total = 0.0
        for i in by_text:
            total += float(per_topic[i])
        return total / len(run.query_ids)
    total = 0.0
    for value in per_topic.tolist():
        total += value
    return total if m.base == "inum_rel_ret" else total / len(run.query_ids)


_SPEC = MeasureSpec("sample_eval", "sampled", "Inferred measures from sampled qrels.",
                    lambda *_: None, rel_info="sampled", trec=False)


def run_evaluation(qrels: SampledQrels, run: ScoredRun, measures: Sequence[SampledMeasure]
                   ) -> RunEvaluation:
    """One scored run's values as a RunEvaluation (trec_eval's layout prints it)."""
    if not run.query_ids:
        raise SampledEvaluationError(
            f"run {run.run_id} shares no topic with the sampled qrels; check its topic ids "
            "(leading zeros are stripped from the run's ids only, as sample_eval.pl does)")
    columns, per_query, summary = [], {}, {}
    for m in measures:
        column = Column(m.name, m.kind, Measure(_SPEC, m.name, ()))
        values = [_per_topic(qrels, run, m, q) for q in run.query_ids]
        array = np.array(values, dtype=np.int64 if m.base == "num_ret" else np.float64)
        columns.append(column)
        per_query[m.name] = array
        summary[m.name] = _summary(qrels, run, m, array)
    return RunEvaluation(run.run_id, list(run.query_ids), columns, per_query, summary)


def evaluate_sampled(
    qrels: SampledQrelsInput,
    run_or_runs: SampledRunInput | Sequence[SampledRunInput],
    measures: str | Iterable[str] = ("sample_eval",),
    *,
    gains: Mapping[str, str] | Iterable[str] | None = None,
) -> Evaluation:
    """Score runs against sampled qrels with sample_eval.pl's measures and conventions.

    measures: `sample_eval` (everything the script prints), or names such as `xinfAP`,
    `infNDCG`, `iP@10`, `statAP` (`pooling.measures.sampled_names`). gains: the script's
    `-G`, as {"2": "3"} or ["2=3"]. Values equal the script's at its printed precision."""
    gain_map = _gains(gains)
    wanted = parse_sampled_measures([measures] if isinstance(measures, str) else measures)
    pools = load_sampled_qrels(qrels, gain_map)
    runs = [run_or_runs] if isinstance(run_or_runs, str | Path | TrecRun) else list(run_or_runs)
    results = [run_evaluation(pools, score_run(pools, rank_run(r)), wanted) for r in runs]
    return Evaluation(results, [c.measure for c in results[0].columns] if results else [],
                      "skip", 1, MAX_RESULTS, columns=results[0].columns if results else [])


def _gains(gains: Mapping[str, str] | Iterable[str] | None) -> dict[str, str]:
    if gains is None:
        return {}
    if isinstance(gains, Mapping):
        return parse_gains(f"{k}={v}" for k, v in gains.items())
    return parse_gains(gains)


def format_sample_eval(qrels: SampledQrels, run: ScoredRun, per_query: bool = False) -> str:
    """The text sample_eval.pl prints for this run, byte for byte (`-q` adds each topic)."""
    measures = parse_sampled_measures(["sample_eval"])
    ev = run_evaluation(qrels, run, measures)
    parts = []
    if per_query:
        for t, q in enumerate(run.query_ids):
            parts.append("infAP\t\t%s\t\t%6.4f\n" % (q, ev.per_query["infAP"][t]))
            parts.append("infNDCG\t\t%s\t\t%6.4f\n" % (q, ev.per_query["infNDCG"][t]))
            for k in PRECISION_CUTOFFS:
                parts.append("iP%d\t\t%s\t\t%6.4f\n" % (k, q, ev.per_query[f"iP{k}"][t]))
            parts.append("inum_rel_ret\t%s\t%14.4f\n" % (q, ev.per_query["inum_rel_ret"][t]))
            parts.append("inum_rel\t%s\t%14.4f\n" % (q, ev.per_query["inum_rel"][t]))
            parts.append("num_ret\t\t%s\t%9d\n" % (q, ev.per_query["num_ret"][t]))
    s = ev.summary
    parts.append("infAP\t\tall\t\t%6.4f\n" % s["infAP"])
    parts.append("infNDCG\t\tall\t\t%6.4f\n" % s["infNDCG"])
    for x in RECALL_LEVELS:
        parts.append("iprec@rec%4.2f\tall\t\t%6.4f\n" % (x, s[f"iprec@rec{x:4.2f}"]))
    for k in PRECISION_CUTOFFS:
        parts.append("iP%d\t\tall\t\t%6.4f\n" % (k, s[f"iP{k}"]))
    parts.append("inum_rel_ret\tall\t%14.4f\n" % s["inum_rel_ret"])
    parts.append("inum_rel\tall\t%14.4f\n" % s["inum_rel"])
    parts.append("num_ret\t\tall\t%9d\n" % s["num_ret"])
    return "".join(parts)


def sample_eval_text(qrels: SampledQrelsInput, run: SampledRunInput, *, per_query: bool = False,
                     gains: Mapping[str, str] | Iterable[str] | None = None) -> str:
    """`perl sample_eval.pl [-q] QRELS RUN [-G ...]`'s output, computed here."""
    pools = load_sampled_qrels(qrels, _gains(gains))
    return format_sample_eval(pools, score_run(pools, rank_run(run)), per_query)
