"""`evaluate`: qrels + runs + measures -> per-topic values and means, trec_eval 10.0 exact.

Inputs are converted once into canonical Arrow tables (qrels: query_id, doc_id, relevance;
run: query_id, doc_id, score[, tag]); the qrels are prepared once and shared by every run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from pooling.errors import EvaluationError
from pooling.evaluation import kernel
from pooling.evaluation.ahead import Ahead
from pooling.evaluation.qrels_index import QrelsIndex
from pooling.evaluation.ranking import (
    Ranking,
    RunScan,
    build_ranking,
    keep_judged,
    kernel_ranking,
)
from pooling.evaluation.topics import MissingTopics, TopicPlan, candidate_topics, plan_topics
from pooling.evaluation.trec_input import (
    RunReader,
    TrecRun,
    bom_warning,
    load_qrels,
    read_run,
)
from pooling.evaluation.zscores import ZScores
from pooling.formats.source import display_name
from pooling.measures import Kind, Measure, parse_measures
from pooling.measures.context import MIN_GEO_MEAN, Context
from pooling.measures.registry import ORDER


@dataclass(frozen=True)
class RunStream:
    """A run arriving as Arrow batches (query_id, doc_id, score), e.g. out of a store.

    Each batch is scanned while the next one is read. `rows` is the run's length, so the
    scan sizes its arrays once.
    """

    batches: Callable[[], Iterator[pa.RecordBatch | pa.Table]]
    rows: int
    run_id: str
    source: str
    unique: bool = False  # no doc_id twice in a topic (a stored run): no duplicate check


QrelsInput = str | os.PathLike[str] | pa.Table | Any  # paths, Arrow tables, DataFrames
RunInput = str | os.PathLike[str] | pa.Table | TrecRun | RunStream | Any

# trec_eval -c zeroes these for topics missing from the run (by exact name, trec_eval.c:416-431);
# fallout would count trec_eval's dummy document as a retrieved non-relevant one, so it joins them.
_RESET_ALWAYS = {"num_ret", "unj", "rbp_resid", "Fallout", "set_fallout"}
_RESET_BARE = {"utility", "relstring"}
# A run this long hands Arrow's freed memory back before it is ranked (the memory peak);
# for smaller runs that costs more time than it saves memory.
_RELEASE_ROWS = 2_000_000


# A schema, not an empty table: building tables at import time loads pandas (slow start-up).
_PER_QUERY_SCHEMA = pa.schema(
    [("run_id", pa.string()), ("query_id", pa.string()), ("measure", pa.string()),
     ("value", pa.float64())]
)


class NoTopicsError(EvaluationError):
    """Nothing to evaluate: the run and the qrels share no topic (trec_eval 9 exits 7)."""

    exit_code = 7


@dataclass(frozen=True)
class Column:
    """One output value: its name (`P_5`), how it prints/averages, and its measure."""

    name: str
    kind: Kind
    measure: Measure


@dataclass
class RunEvaluation:
    """One run's values: per topic (evaluated topics, strcmp order) and the summary `all`.

    missing_query_ids: evaluated topics the run has no lines for (scored 0 under "zero").
    """

    run_id: str
    query_ids: list[str]
    columns: list[Column]
    per_query: dict[str, np.ndarray]
    summary: dict[str, Any]
    missing_query_ids: list[str] = field(default_factory=list)
    zscores: bool = False  # values are z-scores (-Z): printed as `Zname`, all as %6.4f


@dataclass
class Evaluation:
    """Results of `evaluate`: one RunEvaluation per run, plus the settings used."""

    runs: list[RunEvaluation]
    measures: list[Measure]
    missing_topics: str
    relevance_level: int
    max_docs: int | None
    columns: list[Column] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # about the inputs (e.g. a BOM)

    @property
    def per_query(self) -> pa.Table:
        """Tidy numeric values, topic by topic: run_id, query_id, measure, value (float64)."""
        parts = []
        for run in self.runs:
            cols = [c.name for c in run.columns if c.kind in (Kind.FLOAT, Kind.COUNT)]
            T = len(run.query_ids)
            matrix = np.column_stack(
                [np.asarray(run.per_query[c], dtype=np.float64) for c in cols]
            ) if cols else np.empty((T, 0))
            names = [("Z" + c if run.zscores else c) for c in cols]
            parts.append(
                pa.table(
                    {
                        "run_id": pa.array([run.run_id] * (T * len(cols)), pa.string()),
                        "query_id": pa.array(np.repeat(run.query_ids, len(cols)), pa.string()),
                        "measure": pa.array(names * T, pa.string()),
                        "value": pa.array(matrix.ravel(), pa.float64()),
                    }
                )
            )
        return pa.concat_tables(parts) if parts else _PER_QUERY_SCHEMA.empty_table()

    @property
    def means(self) -> pa.Table:
        """Tidy summary values (the `all` row): run_id, measure, value (float64)."""
        rows = [
            (run.run_id, ("Z" if run.zscores else "") + col.name, float(run.summary[col.name]))
            for run in self.runs
            for col in run.columns
            if col.kind not in (Kind.TEXT, Kind.RUNID)
        ]
        return pa.table(
            {
                "run_id": pa.array([r[0] for r in rows], pa.string()),
                "measure": pa.array([r[1] for r in rows], pa.string()),
                "value": pa.array([r[2] for r in rows], pa.float64()),
            }
        )


def evaluate(
    qrels: QrelsInput,
    run_or_runs: RunInput | Sequence[RunInput],
    measures: str | Iterable[str | Measure] = ("official",),
    *,
    missing_topics: MissingTopics = "error",
    relevance_level: int = 1,
    max_docs: int | None = None,
    topics: Iterable[str] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    judged_only: bool = False,
    collection_size: int | None = None,
    zscores: ZScores | None = None,
    rel_format: str = "qrels",
) -> Evaluation:
    """Evaluate runs against qrels with trec_eval 10.0's semantics.

    missing_topics: "error" (default, trec_eval 10), "zero" (trec_eval -c) or "skip"
    (only topics the run shares with the qrels). relevance_level is trec_eval's -l,
    max_docs its -M; topics restricts evaluation to those qrels topics. engine "ray"
    spreads the runs over a Ray cluster (`pooling.engine`), with the same results.
    judged_only is -J (only judged docs are ranked), collection_size -N (the documents in
    the collection: utility's D, fallout), zscores -Z (values as z-scores, see
    `pooling.evaluation.zscores`), rel_format -R: "qrels", "qrels_jg" (judgment groups),
    "prefs" or "qrels_prefs" (preferences); `qrels` is then that kind of file or table.
    """
    extended = judged_only or collection_size is not None or zscores is not None or (
        rel_format != "qrels")
    if engine != "local" and extended:
        raise EvaluationError("-J, -N, -Z and -R run with the local engine only; drop --engine")
    if engine != "local":
        from pooling.engine import check_engine
        from pooling.engine.evaluation import evaluate_on_ray

        check_engine(engine)
        return evaluate_on_ray(qrels, run_or_runs, measures, missing_topics=missing_topics,
                               relevance_level=relevance_level, max_docs=max_docs, topics=topics,
                               ray_address=ray_address)
    if relevance_level < 1:
        raise EvaluationError(
            f"relevance level must be >= 1 (got {relevance_level}); grades below it are "
            "judged non-relevant"
        )
    if max_docs is not None and max_docs < 1:
        raise EvaluationError(f"max_docs (-M) must be >= 1 (got {max_docs})")
    if collection_size is not None and collection_size < 0:
        raise EvaluationError(f"the collection size (-N) must be >= 0 (got {collection_size})")
    wanted = _measures(measures)
    check_rel_format(wanted, rel_format)
    if rel_format in ("prefs", "qrels_prefs"):
        from pooling.evaluation.preferences import evaluate_prefs

        return evaluate_prefs(qrels, run_or_runs, wanted, rel_format=rel_format,
                              missing_topics=missing_topics, max_docs=max_docs, topics=topics,
                              zscores=zscores)
    if rel_format == "qrels_jg":
        from pooling.evaluation.judgment_groups import evaluate_judgment_groups

        return evaluate_judgment_groups(
            qrels, run_or_runs, wanted, missing_topics=missing_topics,
            relevance_level=relevance_level, max_docs=max_docs, topics=topics,
            judged_only=judged_only, zscores=zscores)
    return evaluate_qrels(qrels, run_or_runs, wanted, missing_topics=missing_topics,
                          relevance_level=relevance_level, max_docs=max_docs, topics=topics,
                          judged_only=judged_only, collection_size=collection_size,
                          zscores=zscores)


REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")  # trec_eval's -R


def check_rel_format(measures: list[Measure], rel_format: str) -> None:
    """Refuse a relevance format trec_eval does not know, or measures it cannot give."""
    if rel_format not in REL_FORMATS:
        raise EvaluationError(f"unknown relevance format {rel_format!r} (-R); use one of "
                              f"{', '.join(REL_FORMATS)}")
    needed = "prefs" if rel_format == "qrels_prefs" else rel_format
    wrong = [m for m in measures if m.spec.rel_info not in (None, needed)]
    if wrong:
        names = ", ".join(dict.fromkeys(m.spec.name for m in wrong))
        formats = sorted({m.spec.rel_info or "" for m in wrong})
        given = "prefs or qrels_prefs" if formats == ["prefs"] else " / ".join(formats)
        raise EvaluationError(
            f"{names} need{'s' if len(wrong) == 1 else ''} relevance information in the "
            f"{given} format, not {rel_format}: give it with -R, or pick measures for "
            f"{rel_format} (e.g. -m {_NICKNAME_FOR[needed]})")


_NICKNAME_FOR = {"qrels": "official", "qrels_jg": "qrels_jg", "prefs": "all_prefs"}


def evaluate_qrels(
    qrels: QrelsInput,
    run_or_runs: RunInput | Sequence[RunInput],
    wanted: list[Measure],
    *,
    missing_topics: MissingTopics = "error",
    relevance_level: int = 1,
    max_docs: int | None = None,
    topics: Iterable[str] | None = None,
    judged_only: bool = False,
    collection_size: int | None = None,
    zscores: ZScores | None = None,
) -> Evaluation:
    """`evaluate` with trec_eval qrels and measures already parsed (and not checked against
    the qrels format: the judgment-group evaluation scores its measures group by group)."""
    runs = _run_list(run_or_runs)
    results = []
    warnings: list[str] = []
    in_c = [kernel.eligible(run) for run in runs]  # the others are parsed ahead by pyarrow
    with _Readers([None if c else run for run, c in zip(runs, in_c, strict=True)]) as readers:
        index = qrels if isinstance(qrels, QrelsIndex) else QrelsIndex(
            _qrels_table(qrels, warnings))
        candidates = candidate_topics(index.topics, topics)
        for position, run in enumerate(runs):
            ranking = None
            if index.kernel_table is not None and (in_c[position] or isinstance(run, RunStream)):
                ranking = _kernel_ranking(run, index, candidates, missing_topics, max_docs)
            if ranking is None:
                reader = RunReader(run) if in_c[position] else readers.take(position)
                ranking = _numpy_ranking(run, position, index, reader, candidates,
                                         missing_topics, max_docs, warnings)
            if judged_only:
                ranking = keep_judged(ranking)
            results.append(_compute(ranking, wanted, relevance_level, missing_topics,
                                    collection_size=collection_size, zscores=zscores))
    columns = results[0].columns if results else []
    return Evaluation(results, wanted, missing_topics, relevance_level, max_docs, columns,
                      warnings)


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


def _compute(
    ranking: Ranking, measures: list[Measure], level: int, policy: str, *,
    collection_size: int | None = None, zscores: ZScores | None = None,
) -> RunEvaluation:
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


def _measures(measures: str | Iterable[str | Measure]) -> list[Measure]:
    if isinstance(measures, str):
        measures = [measures]
    items = list(measures)
    parsed = [m for m in items if isinstance(m, Measure)]
    names = [m for m in items if not isinstance(m, Measure)]
    return sorted(
        {*parse_measures(names), *parsed},
        key=lambda m: (ORDER[m.spec.name], m.rel is not None, m.rel or 0),
    )


def _qrels_table(qrels: QrelsInput, warnings: list[str] | None = None) -> pa.Table:
    """The qrels as a table; lines of a qrels file starting with a BOM add a warning."""
    if isinstance(qrels, (str, os.PathLike)):
        loaded = load_qrels(qrels)
        if loaded.bom_lines and warnings is not None:
            warnings.append(bom_warning(loaded.source, loaded.bom_lines))
        return loaded.table
    return _with_columns(_as_table(qrels), "qrels", ["query_id", "doc_id", "relevance"], "")


def _with_columns(table: pa.Table, what: str, needed: list[str], optional: str) -> pa.Table:
    """The table, if it has the needed columns; else an error naming the missing ones."""
    missing = set(needed) - set(table.column_names)
    if missing:
        raise EvaluationError(
            f"{what} table lacks column(s) {', '.join(sorted(missing))}; "
            f"expected {', '.join(needed)}{optional}"
        )
    return table


def _run_list(runs: RunInput | Sequence[RunInput]) -> list[RunInput]:
    if isinstance(runs, (list, tuple)):
        return list(runs)
    return [runs]


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
                scan.add(_with_columns(table, "run", ["query_id", "doc_id", "score"], ""),
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
        parsed = _run(run, position)
    if parsed.bom_lines:
        warnings.append(bom_warning(parsed.source, parsed.bom_lines))
    scan.add(parsed.table)
    return scan, parsed.run_id, parsed.source


def _run(run: RunInput, position: int) -> TrecRun:
    """A run given in memory (paths are scanned by `_scan`) as a TrecRun."""
    if isinstance(run, TrecRun):
        return run
    table = _with_columns(_as_table(run), "run", ["query_id", "doc_id", "score"], "[, tag]")
    run_id = f"run{position + 1}"
    if "tag" in table.column_names and table.num_rows:
        run_id = str(table.column("tag")[-1].as_py())
    return TrecRun(table, run_id, run_id)


def _as_table(obj: Any) -> pa.Table:
    if isinstance(obj, pa.Table):
        return obj
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(obj, pd.DataFrame):
        return pa.Table.from_pandas(obj, preserve_index=False)
    raise EvaluationError(
        f"cannot evaluate a {type(obj).__name__}; pass a path, an Arrow table or a DataFrame"
    )
