"""The evaluator: qrels + runs + parsed measures -> per-topic values and means, in this
process, trec_eval 10.0 exact (`pooling.evaluation.entry.evaluate` is the entry point).

Inputs are converted once into canonical Arrow tables (qrels: query_id, doc_id, relevance;
run: query_id, doc_id, score[, tag]); the qrels are prepared once and shared by every run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, Unpack

import numpy as np
import pyarrow as pa

from pooling.errors import EvaluationError
from pooling.evaluation import kernel
from pooling.evaluation.ahead import Ahead
from pooling.evaluation.inputs import (
    QrelsInput,
    RunInput,
    RunStream,
    qrels_table,
    run_at,
    run_list,
    with_columns,
)
from pooling.evaluation.options import EvalInputs, EvalOptions
from pooling.evaluation.qrels_index import QrelsIndex
from pooling.evaluation.ranking import (
    Ranking,
    RunScan,
    build_ranking,
    keep_judged,
    kernel_ranking,
)
from pooling.evaluation.results import Column, Evaluation, NoTopicsError, RunEvaluation
from pooling.evaluation.topics import MissingTopics, TopicPlan, candidate_topics, plan_topics
from pooling.evaluation.trec_input import RunReader, bom_warning, read_run
from pooling.evaluation.zscores import ZScores
from pooling.formats.source import display_name
from pooling.measures import Kind, Measure
from pooling.measures.context import MIN_GEO_MEAN, Context

# trec_eval -c zeroes these for topics missing from the run (by exact name, trec_eval.c:416-431);
# fallout would count trec_eval's dummy document as a retrieved non-relevant one, so it joins them.
_RESET_ALWAYS = {"num_ret", "unj", "rbp_resid", "Fallout", "set_fallout"}
_RESET_BARE = {"utility", "relstring"}
# A run this long hands Arrow's freed memory back before it is ranked (the memory peak);
# for smaller runs that costs more time than it saves memory.
_RELEASE_ROWS = 2_000_000


def evaluate_qrels(
    qrels: QrelsInput,
    run_or_runs: RunInput | Sequence[RunInput],
    wanted: list[Measure],
    options: EvalOptions | None = None,
    **inputs: Unpack[EvalInputs],
) -> Evaluation:
    """`evaluate` with trec_eval qrels and measures already parsed (and not checked against
    the qrels format: the judgment-group evaluation scores its measures group by group)."""
    options = replace(options or EvalOptions(), **inputs)
    warnings: list[str] = []
    results = [
        compute_ranking(ranking, wanted, options.relevance_level, options.missing_topics,
                        collection_size=options.collection_size, zscores=options.zscores)
        for ranking in rank_runs(qrels, run_or_runs, options, warnings=warnings)
    ]
    columns = results[0].columns if results else []
    return Evaluation(results, wanted, options.missing_topics, options.relevance_level,
                      options.max_docs, columns, warnings)


def rank_runs(
    qrels: QrelsInput | QrelsIndex,
    run_or_runs: RunInput | Sequence[RunInput],
    options: EvalOptions,
    *,
    warnings: list[str] | None = None,
) -> Iterator[Ranking]:
    """Each run's ranking of its judged documents against the qrels, under the options' topic
    policy, topics, -M and -J, one run after another (a run file is parsed while the one
    before it is ranked); notes on the inputs (a BOM) join `warnings`."""
    missing_topics, max_docs = options.missing_topics, options.max_docs
    runs = run_list(run_or_runs)
    warnings = [] if warnings is None else warnings
    in_c = [kernel.eligible(run) for run in runs]  # the others are parsed ahead by pyarrow
    with _Readers([None if c else run for run, c in zip(runs, in_c, strict=True)]) as readers:
        index = qrels if isinstance(qrels, QrelsIndex) else QrelsIndex(
            qrels_table(qrels, warnings))
        candidates = candidate_topics(index.topics, options.topics)
        for position, run in enumerate(runs):
            ranking = None
            if index.kernel_table is not None and (in_c[position] or isinstance(run, RunStream)):
                ranking = _kernel_ranking(run, index, candidates, missing_topics, max_docs)
            if ranking is None:
                reader = RunReader(run) if in_c[position] else readers.take(position)
                ranking = _numpy_ranking(run, position, index, reader, candidates,
                                         missing_topics, max_docs, warnings)
            yield keep_judged(ranking) if options.judged_only else ranking


def _kernel_ranking(
    run: str | os.PathLike[str] | RunStream,
    index: QrelsIndex,
    candidates: np.ndarray,
    missing_topics: MissingTopics,
    max_docs: int | None,
) -> Ranking | None:
    """A run file's (or stream's) ranking through the C kernel; None when it declines."""
    if isinstance(run, RunStream):
        with Ahead(run.batches, name="run-stream") as batches:
            scanned = kernel.scan_columns(index.kernel_table, batches, unique=run.unique)
        if scanned is None:
            return None
        run_id, source = run.run_id, run.source
    else:
        scanned = kernel.scan_file(index.kernel_table, run)
        if scanned is None:
            return None
        try:
            run_id = scanned.tag.decode()
        except UnicodeDecodeError:
            return None
        source = display_name(run)
    plan = _plan(candidates, scanned.num_ret > 0, index, missing_topics, source)
    return kernel_ranking(index, plan, scanned, max_docs=max_docs, run_id=run_id)


def _numpy_ranking(
    run: RunInput,
    position: int,
    index: QrelsIndex,
    reader: RunReader | None,
    candidates: np.ndarray,
    missing_topics: MissingTopics,
    max_docs: int | None,
    warnings: list[str],
) -> Ranking:
    """A run's ranking through the NumPy path (any input; says what is wrong with a file)."""
    scan, run_id, source = _scan(run, position, index, reader, warnings)
    plan = _plan(candidates, scan.covered, index, missing_topics, source)
    if scan.has_nan:
        raise EvaluationError(f"run {source} has NaN scores; scores must be numbers")
    return build_ranking(index, plan, scan, max_docs=max_docs, run_id=run_id, run_name=source)


def _plan(
    candidates: np.ndarray,
    covered: np.ndarray,
    index: QrelsIndex,
    missing_topics: MissingTopics,
    source: str,
) -> TopicPlan:
    """The run's topics under the missing-topics policy; none at all is an error."""
    plan = plan_topics(candidates, covered, index.topics, missing_topics, source)
    if len(plan.topics) == 0:
        raise NoTopicsError(f"run {source} shares no topic with the qrels; check the query_ids")
    return plan


def compute_ranking(
    ranking: Ranking, measures: list[Measure], level: int, policy: str, *,
    collection_size: int | None = None, zscores: ZScores | None = None,
) -> RunEvaluation:
    """One run's values of the measures from its ranking (policy: the missing-topics one)."""
    contexts: dict[int, Context] = {}
    values: list[tuple[Measure, list[str], np.ndarray]] = []
    for m in measures:
        if m.spec.kind in (Kind.RUNID, Kind.NUM_Q):
            values.append((m, m.columns, np.empty((ranking.num_topics, 0))))
            continue
        lv = m.level(level)
        if lv not in contexts:
            contexts[lv] = Context(ranking, lv, collection_size)
        computed = m.spec.compute(contexts[lv], m)
        values.append((m, m.columns, computed if computed.ndim == 2 else computed[:, None]))
    overrides = {}
    if policy == "zero":
        # trec_eval -c recounts num_rel from the qrels as grades > 0, ignoring -l.
        overrides["num_rel"] = int(ranking.qrels.count(ranking.qrels.grade > 0).sum())
    return assemble_run(ranking.run_id, ranking.query_ids, ranking.missing, values,
                        zscores=zscores, overrides=overrides)


def assemble_run(
    run_id: str,
    query_ids: list[str],
    missing: np.ndarray,
    values: list[tuple[Measure, list[str], np.ndarray]],
    *,
    zscores: ZScores | None = None,
    overrides: dict[str, Any] | None = None,
) -> RunEvaluation:
    """One run's result from its measures' per-topic values (a T x columns matrix each).

    Applies what trec_eval does after the measures, in its order: the reset of some values
    for topics the run lacks (-c), the conversion to z-scores (-Z), then the summaries
    (`_summarise`; `overrides` replaces a measure's summary, by its spec name).
    """
    T = len(query_ids)
    columns: list[Column] = []
    per_query: dict[str, np.ndarray] = {}
    summary: dict[str, Any] = {}
    for m, names, matrix in values:
        kind = m.spec.kind
        if kind is Kind.RUNID:
            columns.append(Column(names[0], kind, m))
            summary[names[0]] = run_id
            continue
        if kind is Kind.NUM_Q:
            columns.append(Column(names[0], kind, m))
            summary[names[0]] = T
            continue
        for j, name in enumerate(names):
            v = matrix[:, j].copy()
            if missing.any() and (m.spec.name in _RESET_ALWAYS or (
                    m.spec.name in _RESET_BARE and m.param_text is None)):
                v[missing] = "" if kind is Kind.TEXT else 0
            columns.append(Column(name, kind, m))
            if zscores is not None and kind is not Kind.TEXT:
                if kind is Kind.GEO:  # trec_eval stores ln(value) per topic: that is converted
                    v = np.log(np.maximum(v.astype(np.float64), MIN_GEO_MEAN))
                v = zscores.convert(query_ids, name, v)
                summary[name] = _summarise_z(v, kind, T)
            else:
                summary[name] = _summarise(v, kind, T)
            per_query[name] = v
            if overrides and m.spec.name in overrides:
                summary[name] = overrides[m.spec.name]
    missing_ids = [q for q, lacks in zip(query_ids, missing.tolist(), strict=True) if lacks]
    return RunEvaluation(run_id, query_ids, columns, per_query, summary, missing_ids,
                         zscores is not None)


def _summarise(values: np.ndarray, kind: Kind, T: int) -> Any:
    if kind is Kind.TEXT:
        return None
    if kind is Kind.COUNT:
        return int(np.sum(values))
    if kind is Kind.GEO:
        logs = np.log(np.maximum(values.astype(np.float64), MIN_GEO_MEAN))
        return float(np.exp(np.cumsum(logs)[-1] / T))
    # An ordered (sequential) sum over topics, as trec_eval accumulates.
    return float(np.cumsum(values.astype(np.float64))[-1] / T)


def _summarise_z(z: np.ndarray, kind: Kind, T: int) -> float:
    """The summary of z-scores: summed for counts, exp of the mean for gm_* (already logs),
    else the mean; always a float (trec_eval prints every z-score with %6.4f)."""
    total = float(np.cumsum(z)[-1])
    if kind is Kind.COUNT:
        return total
    if kind is Kind.GEO:
        return float(np.exp(total / T))
    return total / T


class _Readers:
    """Background readers for the run files, each opened when the one before has parsed its
    file: a run is parsed while the qrels, or the runs before it, are scanned and ranked.

    At most one reader runs at a time, so at most a couple of pieces wait in memory.
    """

    def __init__(self, runs: list[RunInput]):
        self._runs = runs
        self._open: dict[int, RunReader] = {}
        self._lock = threading.RLock()  # a stdin reader calls `then` at once, in `_start`
        self._closed = False
        self._next = 0
        self._start(0)

    def _start(self, position: int) -> None:
        """Open the reader of the first file at or after `position` (called from threads)."""
        with self._lock:
            while position < len(self._runs) and not isinstance(
                self._runs[position], (str, os.PathLike)
            ):
                position += 1
            if self._closed or position >= len(self._runs) or position < self._next:
                return
            self._next = position + 1
            self._open[position] = RunReader(
                self._runs[position], then=lambda: self._start(position + 1)
            )

    def take(self, position: int) -> RunReader | None:
        """The reader of runs[position] (None if that run is not a file)."""
        if isinstance(self._runs[position], (str, os.PathLike)):
            self._start(position)  # not opened yet if an earlier reader was closed early
        with self._lock:
            return self._open.pop(position, None)

    def __enter__(self) -> _Readers:
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._closed = True
        while self._open:
            with self._lock:
                position = min(self._open)
                reader = self._open.pop(position)
            reader.close()


def _scan(
    run: RunInput, position: int, index: QrelsIndex, reader: RunReader | None,
    warnings: list[str] | None = None,
) -> tuple[RunScan, str, str]:
    """(the run's rows scanned against the qrels, its run_id, its name for messages).

    A run file is scanned while its reader parses it (see `scan_run`), a stream while it
    arrives; other inputs in one piece. Lines starting with a BOM add to `warnings`.
    """
    warnings = [] if warnings is None else warnings
    if isinstance(run, RunStream):
        scan = RunScan(index, unique=run.unique)
        seen = 0
        with Ahead(run.batches, name="run-stream") as batches:
            for batch in batches:
                table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
                seen += table.num_rows
                scan.add(with_columns(table, "run", ["query_id", "doc_id", "score"], ""),
                         seen / run.rows if run.rows else 1.0)
        return scan, run.run_id, run.source
    scan = RunScan(index)
    if reader is not None:
        run_id = reader.scan(scan.add)
        if scan.rows >= _RELEASE_ROWS:  # the pieces' dropped columns go back to the OS
            pa.default_memory_pool().release_unused()
        if run_id is not None:  # a clean file: no line starts with a byte-order mark
            return scan, run_id, display_name(run)
        scan = RunScan(index)  # not a clean file: drop what was scanned, read it strictly
        parsed = read_run(run, fast=False)
    else:
        parsed = run_at(run, position)
    if parsed.bom_lines:
        warnings.append(bom_warning(parsed.source, parsed.bom_lines))
    scan.add(parsed.table)
    return scan, parsed.run_id, parsed.source


