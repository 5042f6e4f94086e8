"""Evaluating runs against subtopic qrels: ndeval's diversity measures, and any plain
measure asked with them on the plain qrels derived from the subtopic ones, from one
ranking of each run.

Each judged (query_id, doc_id) gets a number; the run is ranked against those numbers by
the same code as every evaluation (so the run reading, ties, -M, -c and -J are the usual
ones), and the number then finds the document's subtopics, or its plain grade.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Unpack

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import EvaluationError
from pooling.evaluation.engine import assemble_run, compute_ranking, rank_runs
from pooling.evaluation.inputs import QrelsInput, RunInput, as_table, measure_list
from pooling.evaluation.options import EvalInputs, EvalOptions
from pooling.evaluation.qrels_index import QrelsIndex
from pooling.evaluation.ranking import Ranking
from pooling.evaluation.results import Evaluation, RunEvaluation
from pooling.evaluation.zscores import ZScores
from pooling.formats.subtopic_qrels import read_subtopic_qrels, subtopic_qrels_table
from pooling.measures import Measure
from pooling.measures.intent_aware import IntentContext, LevelJudgments


def evaluate_diversity(
    qrels: QrelsInput,
    run_or_runs: RunInput | Sequence[RunInput],
    measures: str | Iterable[str | Measure] = ("ndeval",),
    options: EvalOptions | None = None,
    **inputs: Unpack[EvalInputs],
) -> pa.Table:
    """Per-topic values of diversity measures (and plain ones, on the derived plain qrels):
    run_id, query_id, measure, value. `qrels` is a subtopic qrels file (ndeval's `query_id
    subtopic doc_id relevance`) or a table with those columns; measures default to ndeval's
    full set. The options are `evaluate`'s: missing_topics "skip" averages as ndeval does,
    "zero" as ndeval -c. The means: `evaluate(..., rel_format="subtopics").means`.
    """
    options = replace(options or EvalOptions(), **inputs)
    options.check()
    return evaluate_subtopics(qrels, run_or_runs, measure_list(measures), options).per_query


def evaluate_subtopics(
    qrels: QrelsInput,
    run_or_runs: RunInput | Sequence[RunInput],
    wanted: list[Measure],
    options: EvalOptions,
) -> Evaluation:
    """`evaluate` with subtopic qrels (-R subtopics), measures already parsed."""
    table = subtopic_table(qrels)
    judgments = SubtopicJudgments(table)
    index = QrelsIndex(judgments.docs)
    warnings: list[str] = []
    if table.num_rows and pc.count_distinct(table.column("subtopic")).as_py() == 1:
        warnings.append("every judgment of the subtopic qrels names the same subtopic: if it "
                        "is a plain qrels file (query_id iter doc_id relevance), the diversity "
                        "measures see one subtopic per topic")
    plain = [m for m in wanted if m.spec.rel_info != "subtopics"]
    intent = [m for m in wanted if m.spec.rel_info == "subtopics"]
    level = options.relevance_level
    results = []
    for ranking in rank_runs(index, run_or_runs, options, warnings=warnings):
        parts = []
        if plain:
            parts.append(compute_ranking(judgments.plain_ranking(ranking), plain, level,
                                         options.missing_topics,
                                         collection_size=options.collection_size,
                                         zscores=options.zscores))
        if intent:
            parts.append(_intent_values(judgments, ranking, intent, level, options.zscores))
        results.append(_joined(parts))
    columns = results[0].columns if results else []
    return Evaluation(results, wanted, options.missing_topics, level, options.max_docs,
                      columns, warnings)


def subtopic_table(qrels: QrelsInput) -> pa.Table:
    """The subtopic qrels as a checked table (query_id, subtopic, doc_id, relevance)."""
    if isinstance(qrels, QrelsIndex):  # plain qrels already prepared (a store's)
        raise EvaluationError(
            "diversity measures need subtopic qrels (query_id subtopic doc_id relevance), and "
            "these qrels hold one grade per document; score them with `pooling eval -m "
            "ndeval SUBTOPIC_QRELS RUN`")
    if isinstance(qrels, (str, os.PathLike)):
        table = read_subtopic_qrels(qrels)
    else:
        table = subtopic_qrels_table(as_table(qrels))
    return table.select(["query_id", "subtopic", "doc_id", "relevance"])


def _intent_values(judgments: SubtopicJudgments, ranking: Ranking, measures: list[Measure],
                   level: int, zscores: ZScores | None) -> RunEvaluation:
    """The diversity measures of one ranking; topics the run lacks (-c) score 0."""
    # pyndeval's order: score ties by doc_id ascending (rank_asc), topic by topic
    key = ranking.topic * (int(ranking.rank_asc.max(initial=0)) + 1) + ranking.rank_asc
    order = np.argsort(key, kind="stable")
    topic, position = ranking.topic[order], ranking.rank_asc[order] - 1
    doc = ranking.rel[order]
    qtopic = np.array([judgments.topic_index[q] for q in ranking.query_ids], np.int64)
    contexts: dict[int, IntentContext] = {}
    values: list[tuple[Measure, list[str], np.ndarray]] = []
    for m in measures:
        lv = m.level(level)
        if lv not in contexts:
            contexts[lv] = IntentContext(judgments.at_level(lv), qtopic, topic, position, doc)
        matrix = m.spec.compute(contexts[lv], m)
        matrix = matrix if matrix.ndim == 2 else matrix[:, None]
        matrix[ranking.missing] = 0.0
        values.append((m, m.columns, matrix))
    return assemble_run(ranking.run_id, ranking.query_ids, ranking.missing, values,
                        zscores=zscores)


def _joined(parts: list[RunEvaluation]) -> RunEvaluation:
    """One run's plain and diversity values as one result (plain measures first)."""
    if len(parts) == 1:
        return parts[0]
    first, second = parts
    return replace(first, columns=first.columns + second.columns,
                   per_query={**first.per_query, **second.per_query},
                   summary={**first.summary, **second.summary})


class SubtopicJudgments:
    """A subtopic qrels prepared for evaluating runs: its judged documents, numbered.

    Documents are numbered in (topic, doc_id byte order); `docs` (query_id, doc_id, and the
    number as relevance) is what a run is ranked against; `plain_grade` is each document's
    highest grade over the subtopics.
    Topics are in strcmp order of query_id, as the evaluation holds them.
    """

    def __init__(self, table: pa.Table):
        query_id = pc.cast(table.column("query_id"), pa.string()).combine_chunks()
        self.topics: list[str] = sorted(pc.unique(query_id).to_pylist())
        self.topic_index = {q: i for i, q in enumerate(self.topics)}
        topic = pc.index_in(query_id, value_set=pa.array(self.topics, pa.string()))
        doc_id = pc.cast(table.column("doc_id"), pa.string()).combine_chunks()
        order = pc.sort_indices(
            pa.table({"t": topic, "d": doc_id.cast(pa.binary())}),
            sort_keys=[("t", "ascending"), ("d", "ascending")],
        ).to_numpy()
        t = topic.to_numpy(zero_copy_only=False).astype(np.int64)[order]
        docs = doc_id.take(pa.array(order))
        new = np.ones(len(order), bool)
        if len(order):
            same_doc = pc.equal(docs.slice(1), docs.slice(0, len(docs) - 1))
            new[1:] = (t[1:] != t[:-1]) | ~same_doc.to_numpy(zero_copy_only=False)
        number = np.cumsum(new) - 1
        self._row_doc = np.empty(len(order), np.int64)
        self._row_doc[order] = number
        first = np.flatnonzero(new)
        grade = pc.cast(table.column("relevance"), pa.int64()).to_numpy(zero_copy_only=False)
        self._grade = grade
        self.doc_topic = t[first]
        self.plain_grade = (np.maximum.reduceat(grade[order], first) if len(first)
                            else np.empty(0, np.int64))
        self.docs = pa.table({
            "query_id": pa.array(self.topics, pa.string()).take(pa.array(self.doc_topic)),
            "doc_id": docs.take(pa.array(first)),
            "relevance": pa.array(np.arange(len(first), dtype=np.int64)),
        })
        self._subtopic_rank = _subtopic_order(table.column("subtopic"))
        self._levels: dict[int, LevelJudgments] = {}

    def plain_ranking(self, ranking: Ranking) -> Ranking:
        """A ranking against the document numbers, as one against the derived plain qrels
        (each judged document's grade its highest over the subtopics)."""
        grade = self.plain_grade[ranking.rel]
        return replace(ranking, rel=np.where(grade < 0, -2, grade),
                       qrels=replace(ranking.qrels, grade=self.plain_grade[ranking.qrels.grade]))

    def at_level(self, level: int) -> LevelJudgments:
        """The judgments read at relevance level `level` (cached)."""
        if level not in self._levels:
            self._levels[level] = self._read_level(level)
        return self._levels[level]

    def _read_level(self, level: int) -> LevelJudgments:
        Q = len(self.topics)
        rows = np.flatnonzero(self._grade >= level)
        doc = self._row_doc[rows]
        topic = self.doc_topic[doc]
        sub = self._subtopic_rank[rows]
        # each topic's relevant subtopics, in ndeval's order, numbered from 0 (its slots)
        width = int(sub.max()) + 1 if len(sub) else 1
        keys = topic * width + sub
        pairs = np.unique(keys)
        counts = np.bincount(pairs // width, minlength=Q).astype(np.int64)
        S = int(counts.max()) if len(pairs) else 0
        slot = np.searchsorted(pairs, keys) - (np.cumsum(counts) - counts)[topic]
        rel = np.zeros((len(self.doc_topic), max(S, 1)), bool)
        rel[doc, slot] = True
        relevant_docs = np.zeros((Q, max(S, 1)), np.int64)
        np.add.at(relevant_docs, (topic, slot), 1)
        return LevelJudgments(rel, counts, relevant_docs, self.doc_topic)


def _subtopic_order(subtopic: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Each judgment's subtopic as a rank in the order ndeval sums subtopics in: by number
    when every subtopic is a natural number (ndeval's own files), else in order of first
    appearance in the qrels (pyndeval numbers subtopics so)."""
    text = pc.cast(subtopic, pa.string())
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    codes = pc.dictionary_encode(text)
    values = codes.dictionary.to_pylist()
    index = codes.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    if values and all(v.isascii() and v.isdigit() for v in values):
        rank = np.argsort(np.argsort([int(v) for v in values], kind="stable"))
        return rank[index].astype(np.int64)
    return index  # dictionary codes follow first appearance
