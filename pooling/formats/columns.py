"""Whitespace-separated column files (TREC runs and qrels): one vectorised parser with exact errors.

The happy path normalises whitespace with C-speed byte operations (keeping every newline, so
row i is still line i + 1) and hands the bytes to pyarrow's CSV reader. Anything irregular
(comment or blank lines, a wrong field count, an unparsable number) falls back to a
line-by-line parse that reports every problem with its line number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.csv as pacsv

from pooling.errors import Problem
from pooling.formats.common import MAX_PROBLEMS, utf8_error
from pooling.formats.ids import id_column_problems, shown

_OTHER_WHITESPACE = bytes.maketrans(b"\t\r\v\f", b"    ")


@dataclass(frozen=True)
class Column:
    """One field of a line: its name, Arrow type, and a converter for the slow path."""

    name: str
    type: pa.DataType
    convert: Callable[[str], object]
    expected: str  # what a valid value looks like, for messages
    is_id: bool = False  # held to the id rule (pooling.formats.ids)


@dataclass
class ParsedColumns:
    """A parsed file: the table (plus a `line` column of 1-based line numbers) and its problems."""

    table: pa.Table
    problems: list[Problem]
    lines_total: int


class _OutOfRange(ValueError):
    pass


INT64_MAX = (1 << 63) - 1


def _to_int(text: str) -> int:
    value = int(text, 10)
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise _OutOfRange(f"beyond the 64-bit integer range (at most {INT64_MAX:,} either way)")
    return value


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


def id_column(name: str) -> Column:
    """An id (query_id, doc_id, a run tag, ...): text held to the id rule."""
    return Column(name, pa.string(), str, "an id", is_id=True)


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
    comments when `skip_comments`; blank lines are skipped. Lines that are not UTF-8 and ids
    that break the id rule are problems at their lines.
    """
    return parse_column_blocks([(1, data)], source, columns, extra_fields=extra_fields,
                               skip_comments=skip_comments)


def parse_column_blocks(
    blocks: Iterable[tuple[int, bytes]],
    source: str,
    columns: Sequence[Column],
    *,
    extra_fields: str = "error",
    skip_comments: bool = True,
    check: Callable[[pa.Table], pa.Table | None] | None = None,
) -> ParsedColumns:
    """`parse_columns` over blocks of whole lines (first line number, bytes), as
    `pooling.formats.source.line_blocks` gives them, read one at a time.

    Reading stops after the first block with a problem, and `check(table)` (which raises)
    sees each block's rows before the next is read: a file of gigabytes of bad or repeated
    lines is refused after its first block instead of being held whole. A check may return
    the rows of the block to keep instead (None: all of them), so a rule that drops rows
    (repeats kept once) holds what it keeps, never the whole file.
    """
    tables: list[pa.Table] = []
    problems: list[Problem] = []
    lines_total = 0
    has_text = False
    for first, block in blocks:
        table, problems, lines, text = _parse_block(
            normalise_whitespace(block), source, columns, extra_fields, skip_comments, first)
        lines_total = first + lines - 1
        has_text = has_text or text
        problems += id_column_problems(table, [c.name for c in columns if c.is_id], source)
        if problems:
            problems.sort(key=lambda p: p.line or 0)
            break
        if check is not None:
            kept = check(table)
            table = table if kept is None else kept
        tables.append(table)
    table = pa.concat_tables(tables) if tables else _empty(columns)
    if not problems and not has_text:
        problems.append(Problem(source, None, "the file is empty"))
    elif not problems and table.num_rows == 0:
        problems.append(Problem(source, None, "the file has no data lines (only comments or blanks)"))
    return ParsedColumns(table, problems, lines_total)


def _parse_block(
    data: bytes, source: str, columns: Sequence[Column], extra_fields: str,
    skip_comments: bool, first: int,
) -> tuple[pa.Table, list[Problem], int, bool]:
    """(table, problems, lines, whether it has any text) of one block of normalised lines."""
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if not data.strip():
        return _empty(columns), [], n_lines, False
    if not _has_irregular_lines(data):
        table = _parse_fast(data, columns)
        if table is not None and table.num_rows == n_lines:
            lines = pa.array(range(first, first + n_lines), pa.int64())
            return table.append_column("line", lines), [], n_lines, True
    table, problems = _parse_slow(data, source, columns, extra_fields, skip_comments, first)
    return table, problems, n_lines, True


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
    first: int,
) -> tuple[pa.Table, list[Problem]]:
    """Line-by-line parse that collects every problem with its line number (up to
    MAX_PROBLEMS: past that many the file is not what was expected, and reading stops)."""
    width = len(columns)
    values: list[list[object]] = [[] for _ in columns]
    line_numbers: list[int] = []
    problems: list[Problem] = []
    layout = " ".join(c.name for c in columns)
    for number, raw in enumerate(_lines(data), start=first):
        if len(problems) >= MAX_PROBLEMS:
            problems.append(Problem(source, number, f"reading stopped here after {MAX_PROBLEMS:,} "
                                    "problems: is this the right file?"))
            break
        if not raw or (skip_comments and raw.startswith(b"#")):
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(source, number, utf8_error(raw, exc)))
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
            except ValueError as exc:
                why = f": {exc}" if isinstance(exc, _OutOfRange) else ""
                problems.append(Problem(source, number, f"{col.name} must be {col.expected}, "
                                        f"found {shown(field)}{why}"))
                break
        else:
            for store, value in zip(values, row, strict=True):
                store.append(value)
            line_numbers.append(number)
    arrays = [pa.array(v, c.type) for v, c in zip(values, columns, strict=True)]
    arrays.append(pa.array(line_numbers, pa.int64()))
    return pa.table(arrays, names=[c.name for c in columns] + ["line"]), problems


def _lines(data: bytes) -> Iterator[bytes]:
    """The lines of `data` one at a time (a list of a block's millions of short lines would
    take gigabytes)."""
    start = 0
    while start <= len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        yield data[start:end]
        start = end + 1
