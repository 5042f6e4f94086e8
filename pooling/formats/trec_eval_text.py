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
from pooling.formats.source import check_line_lengths, decompress

RUN_LINE = "a run line (query_id iter doc_id rank score tag)"
QRELS_LINE = "a qrels line (query_id iter doc_id relevance)"
_ATOF = re.compile(rb"^\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.I)


class TrecInputError(FormatError):
    """A run or qrels file trec_eval would refuse (exit code 2, like trec_eval)."""

    exit_code = 2


def text_lines(data: bytes, name: str) -> pa.StringArray:
    """The file's lines as an Arrow string array (a final newline adds no line)."""
    try:
        text = pa.array([data], pa.binary()).cast(pa.string())
    except pa.ArrowInvalid as exc:
        raise TrecInputError([Problem(name, None, "not UTF-8 text")]) from exc
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


def parse_run_rows(data: bytes, name: str = "<run>") -> pa.Table:
    """trec_eval's reading of run text, keeping each row's tag and line number.

    Columns: query_id, doc_id, score (C atof), tag, line (1-based), in file order.
    """
    data = decompress(data, name)
    check_line_lengths(data, name, RUN_LINE)
    lines = text_lines(data, name)
    tokens, count = line_fields(lines)
    first = pc.list_element(tokens.filter(pa.array(count > 0)), 0)
    is_data = count > 0
    comment = np.zeros(len(count), dtype=bool)
    comment[is_data] = pc.starts_with(first, "#").to_numpy(zero_copy_only=False)
    is_data &= ~comment
    short = np.flatnonzero(is_data & (count < 6))
    if len(short):
        raise TrecInputError(
            [Problem(name, int(i) + 1, f"expected at least 6 fields, found {count[i]}") for i in short],
            hint="Run lines are: query_id iter doc_id rank score tag.",
        )
    rows = tokens.filter(pa.array(is_data))
    if len(rows) == 0:
        raise TrecInputError([Problem(name, None, "no run lines")])
    score_text = pc.list_element(rows, 4)
    scores = atof_column(score_text)
    line_no = np.flatnonzero(is_data) + 1
    bad = np.flatnonzero(np.isnan(scores))
    if len(bad):
        raise TrecInputError(
            [Problem(name, int(line_no[i]), "score is NaN; scores must be numbers") for i in bad]
        )
    return pa.table(
        {
            "query_id": pc.list_element(rows, 0),
            "doc_id": pc.list_element(rows, 2),
            "score": pa.array(scores, pa.float64()),
            "tag": pc.list_element(rows, 5),
            "line": pa.array(line_no, pa.int64()),
        }
    )


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
