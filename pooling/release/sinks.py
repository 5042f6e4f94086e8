"""Writing a table batch by batch to Parquet, TSV and JSON lines, so no table is held whole.

A query's batches are handed to one or more sinks as they come (`pump`); memory stays one
batch wide however large the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

import pyarrow as pa
import pyarrow.parquet as pq

BATCH_ROWS = 1 << 17


class Sink(Protocol):
    """Takes batches one at a time, then is closed."""

    def write(self, batch: pa.RecordBatch) -> None: ...

    def close(self) -> None: ...


class ParquetSink:
    """One Parquet file (zstd). Closed with no rows, it still holds the schema, so every
    listed dataset config loads."""

    def __init__(self, path: Path, schema: pa.Schema):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.schema = schema
        self.rows = 0
        self._writer = pq.ParquetWriter(path, schema, compression="zstd")

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            table = pa.Table.from_batches([batch]).select(self.schema.names).cast(self.schema)
            self._writer.write_table(table)
            self.rows += batch.num_rows

    def close(self) -> None:
        self._writer.close()


class TextSink:
    """Text lines, each made from a row (a dict) by `line`; an optional first line."""

    def __init__(self, path: Path, line: Callable[[dict], str], head: str | None = None):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.rows = 0
        self._line = line
        self._fh = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        if head is not None:
            self._fh.write(head)

    def write(self, batch: pa.RecordBatch) -> None:
        self._fh.writelines(self._line(row) for row in batch.to_pylist())
        self.rows += batch.num_rows

    def close(self) -> None:
        self._fh.close()


def tsv_sink(path: Path, columns: list[str]) -> TextSink:
    """Tab-separated text with a header line; null is an empty field, and whitespace inside
    a value becomes one space (ids never hold any)."""
    return TextSink(path, lambda row: "\t".join(field(row[c]) for c in columns) + "\n",
                    head="\t".join(columns) + "\n")


def jsonl_sink(path: Path, shape: Callable[[dict], dict]) -> TextSink:
    """One JSON object a line, each row shaped by `shape`."""
    return TextSink(path, lambda row: json.dumps(shape(row), ensure_ascii=False) + "\n")


def pump(batches: Iterable[pa.RecordBatch], *sinks: Sink) -> int:
    """Hand every batch to every sink, then close them (also on failure); returns the rows."""
    rows = 0
    try:
        for batch in batches:
            for sink in sinks:
                sink.write(batch)
            rows += batch.num_rows
    finally:
        for sink in sinks:
            sink.close()
    return rows


def one_line(value: object) -> str:
    """A value as text on one line: None is empty; whitespace runs become one space."""
    return "" if value is None else " ".join(str(value).split())


def field(value: object) -> str:
    """A TSV field: floats as Python's shortest exact text, everything else on one line."""
    if isinstance(value, float):
        return repr(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()  # type: ignore[union-attr]
    return one_line(value)
