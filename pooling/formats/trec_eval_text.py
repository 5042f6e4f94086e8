"""trec_eval's reading of a line of text: whitespace-separated fields (C isspace), numbers
read like C `atof`; and run text read that way, row by row (`parse_run_rows`).

Shared by the evaluator's reader (`pooling.evaluation.trec_input`) and the run-file reader
(`pooling.formats.run_files`), so both read a messy run exactly as trec_eval does.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem
from pooling.formats.common import utf8_error
from pooling.formats.source import PathLike, line_blocks

RUN_LINE = "a run line (query_id iter doc_id rank score tag)"
QRELS_LINE = "a qrels line (query_id iter doc_id relevance)"
# Text a trec_eval-dialect reader takes at a time: its columns per line cost more than the text,
# so a block of millions of short lines stays within a few hundred MB.
BLOCK_BYTES = 1 << 22
_ATOF = re.compile(rb"^\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.I)


class TrecInputError(FormatError):
    """A run or qrels file trec_eval would refuse (exit code 2, like trec_eval)."""

    exit_code = 2


def text_lines(data: bytes, name: str, first_line: int = 1) -> pa.StringArray:
    """The lines of `data` (starting at line `first_line`) as an Arrow string array (a final
    newline adds no line); lines that are not UTF-8 are refused at their file:line."""
    try:
        text = pa.array([data], pa.binary()).cast(pa.string())
    except pa.ArrowInvalid as exc:
        problems = []
        for number, raw in enumerate(data.split(b"\n"), start=first_line):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as bad:
                problems.append(Problem(name, number, utf8_error(raw, bad)))
                if len(problems) >= 20:
                    break
        raise TrecInputError(problems or [Problem(name, None, "not UTF-8 text")]) from exc
    lines = pc.list_flatten(pc.split_pattern(text, "\n"))
    if len(lines) and data.endswith(b"\n"):
        lines = lines.slice(0, len(lines) - 1)
    return lines


def line_fields(lines: pa.Array) -> tuple[pa.ListArray, np.ndarray]:
    """Whitespace-separated fields of each line (C isspace), and their count (0 if blank)."""
    trimmed = pc.ascii_trim_whitespace(lines)
    tokens = pc.ascii_split_whitespace(trimmed)
    count = pc.list_value_length(tokens).to_numpy(zero_copy_only=False).copy()
    count[pc.equal(pc.binary_length(trimmed), 0).to_numpy(zero_copy_only=False)] = 0
    return tokens, count


def parse_run_rows(data: PathLike | bytes, name: str = "<run>") -> pa.Table:
    """trec_eval's reading of run text (bytes, or a path read block by block), keeping each
    row's tag and line number; the first block with a bad line stops the reading.

    Columns: query_id, doc_id, score (C atof), tag, line (1-based), in file order.
    """
    return read_run_rows(data, name)[0]


def read_run_rows(data: PathLike | bytes, name: str = "<run>") -> tuple[pa.Table, list[int]]:
    """`parse_run_rows`, and the numbers of the lines that start with a UTF-8 byte-order mark
    (trec_eval keeps it in the topic id; the evaluator warns about them)."""
    tables: list[pa.Table] = []
    boms: list[int] = []
    for first, block in line_blocks(data, name, RUN_LINE, size=BLOCK_BYTES):
        table, block_boms = _run_rows(block, name, first)
        tables.append(table)
        boms += block_boms
    table = pa.concat_tables(tables) if tables else None
    if table is None or table.num_rows == 0:
        raise TrecInputError([Problem(name, None, "no run lines")])
    return table, boms


def _run_rows(data: bytes, name: str, first_line: int) -> tuple[pa.Table, list[int]]:
    """`read_run_rows` of one block of whole lines starting at `first_line`."""
    lines = text_lines(data, name, first_line)
    boms = (np.flatnonzero(pc.starts_with(lines, "\ufeff").to_numpy(zero_copy_only=False))
            + first_line).tolist()
    tokens, count = line_fields(lines)
    first = pc.list_element(tokens.filter(pa.array(count > 0)), 0)
    is_data = count > 0
    comment = np.zeros(len(count), dtype=bool)
    comment[is_data] = pc.starts_with(first, "#").to_numpy(zero_copy_only=False)
    is_data &= ~comment
    short = np.flatnonzero(is_data & (count < 6))
    if len(short):
        raise TrecInputError(
            [Problem(name, int(i) + first_line, f"expected at least 6 fields, found {count[i]}")
             for i in short[:1000]],
            hint="Run lines are: query_id iter doc_id rank score tag.",
        )
    rows = tokens.filter(pa.array(is_data))
    score_text = pc.list_element(rows, 4)
    scores = atof_column(score_text)
    line_no = np.flatnonzero(is_data) + first_line
    bad = np.flatnonzero(np.isnan(scores))
    if len(bad):
        raise TrecInputError(
            [Problem(name, int(line_no[i]), "score is NaN; scores must be numbers")
             for i in bad[:1000]]
        )
    return pa.table(
        {
            "query_id": pc.list_element(rows, 0),
            "doc_id": pc.list_element(rows, 2),
            "score": pa.array(scores, pa.float64()),
            "tag": pc.list_element(rows, 5),
            "line": pa.array(line_no, pa.int64()),
        },
        schema=_RUN_ROWS,
    ), boms


_RUN_ROWS = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
                       ("score", pa.float64()), ("tag", pa.string()), ("line", pa.int64())])


def atof_column(text: pa.Array) -> np.ndarray:
    """C `atof` over a string array: the longest numeric prefix, 0.0 when there is none."""
    try:
        return pc.cast(text, pa.float64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:
        pass
    out = np.empty(len(text), dtype=np.float64)
    for i, s in enumerate(text.to_pylist()):
        m = _ATOF.match(s.encode())
        out[i] = float(m.group(1)) if m else 0.0
    return out
