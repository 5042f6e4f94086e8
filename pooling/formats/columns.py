"""Whitespace-separated column files (TREC runs and qrels): one vectorised parser with exact errors.

The happy path normalises whitespace with C-speed byte operations (keeping every newline, so
row i is still line i + 1) and hands the bytes to pyarrow's CSV reader. Anything irregular
(comment or blank lines, a wrong field count, an unparsable number) falls back to a
line-by-line parse that reports every problem with its line number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.csv as pacsv

from pooling.errors import Problem

_OTHER_WHITESPACE = bytes.maketrans(b"\t\r\v\f", b"    ")


@dataclass(frozen=True)
class Column:
    """One field of a line: its name, Arrow type, and a converter for the slow path."""

    name: str
    type: pa.DataType
    convert: Callable[[str], object]
    expected: str  # what a valid value looks like, for messages


@dataclass
class ParsedColumns:
    """A parsed file: the table (plus a `line` column of 1-based line numbers) and its problems."""

    table: pa.Table
    problems: list[Problem]
    lines_total: int


def _to_int(text: str) -> int:
    return int(text, 10)


def _to_float(text: str) -> float:
    value = float(text)
    if math.isnan(value) or math.isinf(value):
        raise ValueError(text)
    return value


def int_column(name: str) -> Column:
    return Column(name, pa.int64(), _to_int, "an integer")


def float_column(name: str) -> Column:
    return Column(name, pa.float64(), _to_float, "a finite number")


def str_column(name: str) -> Column:
    return Column(name, pa.string(), str, "text")


def normalise_whitespace(data: bytes) -> bytes:
    """Turn every run of blanks into one space and strip line ends, keeping every newline."""
    if any(data.find(c) >= 0 for c in (b"\t", b"\r", b"\v", b"\f")):
        data = data.translate(_OTHER_WHITESPACE)
    while data.find(b"  ") >= 0:
        data = data.replace(b"  ", b" ")
    if data.find(b" \n") >= 0:
        data = data.replace(b" \n", b"\n")
    if data.find(b"\n ") >= 0:
        data = data.replace(b"\n ", b"\n")
    if data.startswith(b" "):
        data = data[1:]
    if data.endswith(b" "):
        data = data[:-1]
    return data


def _has_irregular_lines(data: bytes) -> bool:
    """Comment or blank lines break the row-index = line-number correspondence."""
    return (
        data.startswith((b"#", b"\n"))
        or data.find(b"\n#") >= 0
        or data.find(b"\n\n") >= 0
    )


def parse_columns(
    data: bytes,
    source: str,
    columns: Sequence[Column],
    *,
    extra_fields: str = "error",
    skip_comments: bool = True,
) -> ParsedColumns:
    """Parse whitespace-separated lines into typed columns.

    `extra_fields` is "error" (exactly len(columns) fields) or "ignore" (at least that many;
    the rest is dropped, as trec_eval does for runs). Lines whose first character is `#` are
    comments when `skip_comments`; blank lines are skipped.
    """
    data = normalise_whitespace(data)
    if not data.strip():
        return ParsedColumns(_empty(columns), [Problem(source, None, "the file is empty")], 0)
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if not _has_irregular_lines(data):
        table = _parse_fast(data, columns)
        if table is not None and table.num_rows == n_lines:
            lines = pa.array(range(1, n_lines + 1), pa.int64())
            return ParsedColumns(table.append_column("line", lines), [], n_lines)
    return _parse_slow(data, source, columns, extra_fields, skip_comments, n_lines)


def _empty(columns: Sequence[Column]) -> pa.Table:
    fields = [pa.field(c.name, c.type) for c in columns] + [pa.field("line", pa.int64())]
    return pa.schema(fields).empty_table()


def _parse_fast(data: bytes, columns: Sequence[Column]) -> pa.Table | None:
    """pyarrow's multi-threaded reader; None when any row does not fit (the slow path explains)."""
    names = [c.name for c in columns]
    try:
        table = pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(
                delimiter=" ", quote_char=False, double_quote=False, escape_char=False
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={c.name: c.type for c in columns},
                strings_can_be_null=False,
                null_values=[],
                true_values=[],
                false_values=[],
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    for c in columns:
        if pa.types.is_floating(c.type):
            import pyarrow.compute as pc

            if not pc.all(pc.is_finite(table[c.name])).as_py():
                return None
    return table


def _parse_slow(
    data: bytes,
    source: str,
    columns: Sequence[Column],
    extra_fields: str,
    skip_comments: bool,
    n_lines: int,
) -> ParsedColumns:
    """Line-by-line parse that collects every problem with its line number."""
    width = len(columns)
    values: list[list[object]] = [[] for _ in columns]
    line_numbers: list[int] = []
    problems: list[Problem] = []
    text = data.decode("utf-8", errors="replace")
    layout = " ".join(c.name for c in columns)
    for number, line in enumerate(text.split("\n"), start=1):
        if not line or (skip_comments and line.startswith("#")):
            continue
        fields = line.split(" ")
        if len(fields) < width or (len(fields) > width and extra_fields == "error"):
            problems.append(
                Problem(
                    source,
                    number,
                    f"expected {'' if extra_fields == 'error' else 'at least '}{width} fields "
                    f"({layout}), found {len(fields)}",
                )
            )
            continue
        row: list[object] = []
        for col, field in zip(columns, fields, strict=False):
            try:
                row.append(col.convert(field))
            except ValueError:
                problems.append(
                    Problem(source, number, f"{col.name} must be {col.expected}, found {field!r}")
                )
                break
        else:
            for store, value in zip(values, row, strict=True):
                store.append(value)
            line_numbers.append(number)
    arrays = [pa.array(v, c.type) for v, c in zip(values, columns, strict=True)]
    arrays.append(pa.array(line_numbers, pa.int64()))
    table = pa.table(arrays, names=[c.name for c in columns] + ["line"])
    if table.num_rows == 0 and not problems:
        problems.append(Problem(source, None, "the file has no data lines (only comments or blanks)"))
    return ParsedColumns(table, problems, n_lines)
