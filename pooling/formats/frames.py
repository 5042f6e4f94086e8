"""Runs and qrels given as tables: pandas DataFrames, Arrow tables, Parquet or CSV files.

Converted once, here, into the canonical schemas (pooling.formats.schemas) with a `line` column
holding the 1-based row number, so later errors can point at the row.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem

ALIASES = {
    "query_id": ("query_id", "qid", "query", "topic", "topic_id"),
    "doc_id": ("doc_id", "docid", "docno", "doc"),
    "score": ("score",),
    "rank": ("rank",),
    "tag": ("tag", "run_id", "system"),
    "relevance": ("relevance", "rel", "label", "grade", "judgment"),
}


def is_table_like(obj: Any) -> bool:
    """A DataFrame or Arrow table (as opposed to a path)."""
    return isinstance(obj, pa.Table) or type(obj).__name__ == "DataFrame"


def to_arrow(obj: Any) -> tuple[pa.Table, str]:
    """An Arrow table and a name for messages, from a table-like object or a .parquet/.csv path."""
    if isinstance(obj, pa.Table):
        return obj, "<table>"
    if type(obj).__name__ == "DataFrame":
        return pa.Table.from_pandas(obj, preserve_index=False), "<DataFrame>"
    if isinstance(obj, (str, os.PathLike)):
        path = Path(obj)
        name = path.name.lower().removesuffix(".gz")
        if name.endswith(".parquet"):
            import pyarrow.parquet as pq

            return pq.read_table(path), str(obj)
        if name.endswith(".csv"):
            import pyarrow.csv as pacsv

            return pacsv.read_csv(path), str(obj)
        raise FormatError([Problem(str(obj), None, "expected a .parquet or .csv file")])
    raise FormatError(
        [Problem(repr(type(obj)), None, "expected a DataFrame, Arrow table, or .parquet/.csv path")]
    )


def _pick(table: pa.Table, source: str, want: str, required: bool) -> pa.ChunkedArray | None:
    lower = {c.lower(): c for c in table.column_names}
    for alias in ALIASES[want]:
        if alias in lower:
            return table[lower[alias]]
    if required:
        raise FormatError(
            [Problem(source, None, f"no {want} column (accepted names: {', '.join(ALIASES[want])}); "
                     f"columns are: {', '.join(table.column_names)}")]
        )
    return None


def _as(col: pa.ChunkedArray, typ: pa.DataType, name: str, source: str) -> pa.ChunkedArray:
    if pa.types.is_string(typ) and not pa.types.is_string(col.type):
        return pc.cast(col, pa.string())
    try:
        return pc.cast(col, typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise FormatError([Problem(source, None, f"column {name} cannot be read as {typ}: {exc}")]) from exc


def _null_problems(table: pa.Table, source: str) -> list[Problem]:
    problems = []
    for name in table.column_names:
        if name == "rank":
            continue
        nulls = pc.is_null(table[name])
        if pc.any(nulls).as_py():
            idx = pc.indices_nonzero(nulls).to_pylist()[:5]
            problems += [Problem(source, None, f"row {i + 1}: {name} is missing") for i in idx]
    return problems


def _rows(n: int) -> pa.Array:
    return pa.array(range(1, n + 1), pa.int64())


def run_from_any(obj: Any, *, default_tag: str) -> pa.Table:
    """Canonical run table (query_id, doc_id, rank, score, tag, line) from a table or file."""
    table, source = to_arrow(obj)
    n = table.num_rows
    score = _as(_pick(table, source, "score", True), pa.float64(), "score", source)
    rank = _pick(table, source, "rank", False)
    tag = _pick(table, source, "tag", False)
    out = pa.table(
        {
            "query_id": _as(_pick(table, source, "query_id", True), pa.string(), "query_id", source),
            "doc_id": _as(_pick(table, source, "doc_id", True), pa.string(), "doc_id", source),
            "rank": _as(rank, pa.int64(), "rank", source) if rank is not None else pa.nulls(n, pa.int64()),
            "score": score,
            "tag": _as(tag, pa.string(), "tag", source) if tag is not None else pa.array([default_tag] * n),
            "line": _rows(n),
        }
    )
    problems = _null_problems(out, source)
    bad = pc.invert(pc.fill_null(pc.is_finite(score), True))
    if pc.any(bad).as_py():
        problems += [
            Problem(source, None, f"row {i + 1}: score must be a finite number")
            for i in pc.indices_nonzero(bad).to_pylist()[:5]
        ]
    if n == 0:
        problems.append(Problem(source, None, "the run has no rows"))
    if problems:
        raise FormatError(problems)
    return out


def qrels_from_any(obj: Any) -> pa.Table:
    """Canonical qrels table (query_id, doc_id, relevance, line) from a table or file."""
    table, source = to_arrow(obj)
    rel = _pick(table, source, "relevance", True)
    if pa.types.is_floating(rel.type):
        frac = pc.not_equal(rel, pc.floor(rel))
        if pc.any(frac).as_py():
            raise FormatError([Problem(source, None, "relevance must be whole numbers (grades)")])
    out = pa.table(
        {
            "query_id": _as(_pick(table, source, "query_id", True), pa.string(), "query_id", source),
            "doc_id": _as(_pick(table, source, "doc_id", True), pa.string(), "doc_id", source),
            "relevance": _as(rel, pa.int64(), "relevance", source),
            "line": _rows(table.num_rows),
        }
    )
    problems = _null_problems(out, source)
    if problems:
        raise FormatError(problems)
    return out
