"""What `evaluate` accepts, converted once at the boundary: qrels and runs as Arrow tables.

Qrels: a path or a table of query_id, doc_id, relevance. A run: a path, a table of query_id,
doc_id, score[, tag], a parsed `TrecRun`, or a `RunStream` of batches (e.g. out of a store).
Measures: names or parsed `Measure`s, each evaluated once, in trec_eval's output order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from pooling.errors import EvaluationError
from pooling.evaluation.trec_input import TrecRun, bom_warning, load_qrels
from pooling.measures import Measure, parse_measures
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


QrelsInput = str | os.PathLike[str] | pa.Table | Any  # paths, Arrow tables, DataFrames
RunInput = str | os.PathLike[str] | pa.Table | TrecRun | RunStream | Any


def measure_list(measures: str | Iterable[str | Measure]) -> list[Measure]:
    """The measures named or given, parsed, each once, in trec_eval's output order."""
    if isinstance(measures, str):
        measures = [measures]
    items = list(measures)
    parsed = [m for m in items if isinstance(m, Measure)]
    names = [m for m in items if not isinstance(m, Measure)]
    return sorted(
        {*parse_measures(names), *parsed},
        key=lambda m: (ORDER[m.spec.name], m.rel is not None, m.rel or 0),
    )


def qrels_table(qrels: QrelsInput, warnings: list[str] | None = None) -> pa.Table:
    """The qrels as a table; lines of a qrels file starting with a BOM add a warning."""
    if isinstance(qrels, (str, os.PathLike)):
        loaded = load_qrels(qrels)
        if loaded.bom_lines and warnings is not None:
            warnings.append(bom_warning(loaded.source, loaded.bom_lines))
        return loaded.table
    return with_columns(as_table(qrels), "qrels", ["query_id", "doc_id", "relevance"], "")


def with_columns(table: pa.Table, what: str, needed: list[str], optional: str) -> pa.Table:
    """The table, if it has the needed columns; else an error naming the missing ones."""
    missing = set(needed) - set(table.column_names)
    if missing:
        raise EvaluationError(
            f"{what} table lacks column(s) {', '.join(sorted(missing))}; "
            f"expected {', '.join(needed)}{optional}"
        )
    return table


def run_list(runs: RunInput | Sequence[RunInput]) -> list[RunInput]:
    """One run or a list or tuple of runs, as a list."""
    if isinstance(runs, (list, tuple)):
        return list(runs)
    return [runs]


def run_at(run: RunInput, position: int) -> TrecRun:
    """A run given in memory (paths are scanned as they are read) as a TrecRun."""
    if isinstance(run, TrecRun):
        return run
    table = with_columns(as_table(run), "run", ["query_id", "doc_id", "score"], "[, tag]")
    run_id = f"run{position + 1}"
    if "tag" in table.column_names and table.num_rows:
        run_id = str(table.column("tag")[-1].as_py())
    return TrecRun(table, run_id, run_id)


def as_table(obj: Any) -> pa.Table:
    """An Arrow table or DataFrame as an Arrow table; anything else is an error."""
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


def check_settings(relevance_level: int, max_docs: int | None,
                   collection_size: int | None = None) -> None:
    """Refuse a relevance level (-l), a depth (-M) or a collection size (-N) out of range."""
    if relevance_level < 1:
        raise EvaluationError(
            f"relevance level must be >= 1 (got {relevance_level}); grades below it are "
            "judged non-relevant"
        )
    if max_docs is not None and max_docs < 1:
        raise EvaluationError(f"max_docs (-M) must be >= 1 (got {max_docs})")
    if collection_size is not None and collection_size < 0:
        raise EvaluationError(f"the collection size (-N) must be >= 0 (got {collection_size})")


REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs", "subtopics")  # trec_eval's -R


def relevance_format(measures: list[Measure], rel_format: str) -> str:
    """The relevance format to read: "subtopics" when plain qrels were asked for (the
    default) but a diversity measure is among the measures, else the one asked for."""
    if rel_format == "qrels" and any(m.spec.rel_info == "subtopics" for m in measures):
        return "subtopics"
    return rel_format


def check_rel_format(measures: list[Measure], rel_format: str) -> None:
    """Refuse a relevance format trec_eval does not know, or measures it cannot give."""
    if rel_format not in REL_FORMATS:
        raise EvaluationError(f"unknown relevance format {rel_format!r} (-R); use one of "
                              f"{', '.join(REL_FORMATS)}")
    needed = "prefs" if rel_format == "qrels_prefs" else rel_format
    # subtopic qrels also give plain measures, on the plain qrels derived from them
    allowed = {None, needed, *(("qrels",) if rel_format == "subtopics" else ())}
    wrong = [m for m in measures if m.spec.rel_info not in allowed]
    if wrong:
        names = ", ".join(dict.fromkeys(m.spec.name for m in wrong))
        formats = sorted({m.spec.rel_info or "" for m in wrong})
        given = "prefs or qrels_prefs" if formats == ["prefs"] else " / ".join(formats)
        raise EvaluationError(
            f"{names} need{'s' if len(wrong) == 1 else ''} relevance information in the "
            f"{given} format, not {rel_format}: give it with -R, or pick measures for "
            f"{rel_format} (e.g. -m {_NICKNAME_FOR[needed]})")


_NICKNAME_FOR = {"qrels": "official", "qrels_jg": "qrels_jg", "prefs": "all_prefs",
                 "subtopics": "ndeval"}
