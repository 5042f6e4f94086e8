"""Precision-recall curves: every relevant document's (recall, precision) point, and the
interpolated curve at chosen recall levels.

The raw curve has one point per relevant retrieved document, in trec_eval's ranking order
(score descending, then doc_id descending). Interpolation follows trec_eval 10's
`iprec_at_recall` exactly: at recall level p the value is the highest precision at or after
the lround(p R)-th relevant document (0 when that document was not retrieved), so the mean
interpolated curve is trec_eval's recall-precision table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import EvaluationError
from pooling.evaluation.trec_input import TrecRun, read_qrels, read_run
from pooling.measures.average_precision import lround

STANDARD_LEVELS = tuple(i / 10 for i in range(11))


def _tables(qrels: str | pa.Table, run: str | pa.Table | TrecRun) -> tuple[pa.Table, pa.Table]:
    """Qrels and run as tables, read the way trec_eval reads them when given as paths."""
    qrels_table = read_qrels(qrels) if isinstance(qrels, str) else qrels
    if isinstance(run, TrecRun):
        return qrels_table, run.table
    return qrels_table, read_run(run).table if isinstance(run, str) else run


def precision_recall_points(
    qrels: str | pa.Table,
    run: str | pa.Table | TrecRun,
    *,
    relevance_level: int = 1,
    max_docs: int | None = None,
) -> pa.Table:
    """One row per relevant retrieved document: query_id, rank, recall, precision.

    Only topics present in both the qrels and the run, with at least one relevant document,
    have points. Repeated documents in a topic are an error, as in trec_eval.
    """
    qrels_table, run_table = _tables(qrels, run)
    run_table = run_table.select(["query_id", "doc_id", "score"]).cast(
        pa.schema([("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.float64())])
    )
    ordered = run_table.sort_by(
        [("query_id", "ascending"), ("score", "descending"), ("doc_id", "descending")]
    )
    relevant = qrels_table.filter(pc.greater_equal(qrels_table["relevance"], relevance_level))
    num_rel: dict[str, int] = {}
    for q in relevant["query_id"].to_pylist():
        num_rel[q] = num_rel.get(q, 0) + 1
    rel_pairs = set(zip(relevant["query_id"].to_pylist(), relevant["doc_id"].to_pylist(),
                        strict=True))
    rows: dict[str, list] = {"query_id": [], "rank": [], "recall": [], "precision": []}
    qids = ordered["query_id"].to_pylist()
    docs = ordered["doc_id"].to_pylist()
    start, n = 0, len(qids)
    while start < n:
        q = qids[start]
        end = start
        while end < n and qids[end] == q:
            end += 1
        topic_docs = docs[start:end]
        if len(set(topic_docs)) != len(topic_docs):
            raise EvaluationError(
                f"topic {q!r} of the run lists a document twice; keep one line per (topic, "
                "document), or read the run with --dedupe first to keep the first of each"
            )
        R = num_rel.get(q, 0)
        if R:
            found = 0
            for rank, d in enumerate(topic_docs[:max_docs] if max_docs else topic_docs, start=1):
                if (q, d) in rel_pairs:
                    found += 1
                    rows["query_id"].append(q)
                    rows["rank"].append(rank)
                    rows["recall"].append(found / R)
                    rows["precision"].append(found / rank)
        start = end
    return pa.table(rows, schema=pa.schema([("query_id", pa.string()), ("rank", pa.int64()),
                                            ("recall", pa.float64()),
                                            ("precision", pa.float64())]))


def interpolated_curve(
    points: pa.Table, num_rel: dict[str, int], levels: Sequence[float] = STANDARD_LEVELS
) -> pa.Table:
    """Interpolated precision per topic and recall level: query_id, recall, precision.

    num_rel: relevant documents per topic (the topics to report; a topic with no points
    gets 0 at every level).
    """
    by_topic: dict[str, list[float]] = {}
    for q, p in zip(points["query_id"].to_pylist(), points["precision"].to_pylist(), strict=True):
        by_topic.setdefault(q, []).append(p)
    out: dict[str, list] = {"query_id": [], "recall": [], "precision": []}
    for q in sorted(num_rel):
        prec = np.asarray(by_topic.get(q, []), dtype=np.float64)
        best = np.maximum.accumulate(prec[::-1])[::-1] if len(prec) else prec
        R = num_rel[q]
        for level in levels:
            c = max(int(lround(np.array([level * R]))[0]), 1)
            out["query_id"].append(q)
            out["recall"].append(float(level))
            out["precision"].append(float(best[c - 1]) if R and c <= len(best) else 0.0)
    return pa.table(out)


def mean_interpolated_curve(
    qrels: str | pa.Table,
    run: str | pa.Table | TrecRun,
    *,
    relevance_level: int = 1,
    levels: Sequence[float] = STANDARD_LEVELS,
) -> pa.Table:
    """The recall-precision curve averaged over the topics the run and qrels share:
    recall, precision (the values trec_eval prints as iprec_at_recall)."""
    qrels_table, run_table = _tables(qrels, run)
    shared = set(qrels_table["query_id"].to_pylist()) & set(run_table["query_id"].to_pylist())
    num_rel = {q: 0 for q in shared}
    for q, g in zip(qrels_table["query_id"].to_pylist(), qrels_table["relevance"].to_pylist(),
                    strict=True):
        if q in num_rel and g >= relevance_level:
            num_rel[q] += 1
    points = precision_recall_points(qrels_table, run_table, relevance_level=relevance_level)
    curve = interpolated_curve(points, num_rel, levels)
    means = curve.group_by("recall").aggregate([("precision", "mean")])
    return means.rename_columns(["recall", "precision"]).sort_by("recall")
