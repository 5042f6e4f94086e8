"""Subtopic qrels, the file ndeval reads: `query_id subtopic doc_id relevance`, one line per
judgment of a document against one subtopic (intent) of a topic.

A plain qrels is derived from one by a stated rule (`plain_qrels`): a document's grade is
its highest grade over the topic's subtopics, so it is relevant when it is relevant to any
subtopic. docs/diversity.md says how the diversity measures read these judgments.
"""

from __future__ import annotations

from typing import IO

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem
from pooling.formats.columns import id_column, int_column, parse_column_blocks
from pooling.formats.keys import duplicate_groups, has_duplicates
from pooling.formats.source import PathLike, display_name, line_blocks, write_lines
from pooling.formats.trec_qrels import check_lowest_grade

SUBTOPIC_LINE = "a subtopic qrels line (query_id subtopic doc_id relevance)"
SUBTOPIC_COLUMNS = [
    id_column("query_id"),
    id_column("subtopic"),
    id_column("doc_id"),
    int_column("relevance"),
]
_KEY = ["query_id", "subtopic", "doc_id"]


def read_subtopic_qrels(path: PathLike) -> pa.Table:
    """Read a subtopic qrels file (gzip transparently) into (query_id, subtopic, doc_id,
    relevance, line); every malformed line and repeated judgment is reported at once."""
    return parse_subtopic_qrels(path, display_name(path))


def parse_subtopic_qrels(data: PathLike | bytes, source: str) -> pa.Table:
    """Parse subtopic qrels text: four fields a line, an integer grade of -1 or more (-1 and 0
    count as not relevant), one grade per (query_id, subtopic, doc_id)."""
    parsed = parse_column_blocks(
        line_blocks(data, source, SUBTOPIC_LINE), source, SUBTOPIC_COLUMNS, extra_fields="error",
        check=lambda block: check_unique_subtopic_judgments(block, source))
    if parsed.problems:
        raise FormatError(
            parsed.problems,
            hint="Fix these lines; a subtopic qrels line (ndeval's format) is: "
            "query_id subtopic doc_id relevance",
        )
    check_lowest_grade(parsed.table, source, "A subtopic grade is 0 or more, or -1 for a "
                       "document pooled but not judged; fix these lines.")
    check_unique_subtopic_judgments(parsed.table, source)
    return parsed.table


def check_unique_subtopic_judgments(table: pa.Table, source: str) -> None:
    """One grade per (query_id, subtopic, doc_id): report repeats with their lines.

    ndeval would count a repeated judgment twice towards the subtopic's relevant documents
    (MAP-IA's denominator) while keeping only one of the grades, so a repeat is refused.
    """
    if not has_duplicates(table, _KEY):
        return
    groups = duplicate_groups(table, _KEY)
    problems = [
        Problem(source, g.lines[1], f"doc {g.key[2]!r} judged again for subtopic {g.key[1]!r} "
                f"of query {g.key[0]!r} (first at line {g.lines[0]})")
        for g in groups
    ]
    raise FormatError(problems, hint=f"{len(groups)} (query_id, subtopic, doc_id) judgment(s) "
                      "given more than once; keep one line each.")


def subtopic_qrels_table(table: pa.Table, source: str = "subtopic qrels table") -> pa.Table:
    """A subtopic qrels table given in memory, checked: the four columns with the right
    kinds (query_id, subtopic, doc_id as text, relevance an integer), no repeated judgment."""
    missing = [c for c in ("query_id", "subtopic", "doc_id", "relevance")
               if c not in table.column_names]
    if missing:
        raise FormatError([Problem(source, None, f"no column(s) {', '.join(missing)}; expected "
                                   "query_id, subtopic, doc_id, relevance")])
    if not pa.types.is_integer(table.schema.field("relevance").type):
        raise FormatError([Problem(source, None, "relevance must be an integer column, found "
                                   f"{table.schema.field('relevance').type}")])
    out = pa.table({
        "query_id": pc.cast(table.column("query_id"), pa.string()),
        "subtopic": pc.cast(table.column("subtopic"), pa.string()),
        "doc_id": pc.cast(table.column("doc_id"), pa.string()),
        "relevance": pc.cast(table.column("relevance"), pa.int64()),
        "line": pa.array(range(1, table.num_rows + 1), pa.int64()),
    })
    check_unique_subtopic_judgments(out, source)
    return out


def plain_qrels(subtopic_qrels: pa.Table) -> pa.Table:
    """The plain qrels a subtopic qrels stands for: one row per judged (query_id, doc_id),
    its grade the highest over the topic's subtopics ("relevant to any subtopic").

    Columns: query_id, doc_id, relevance; rows in order of each pair's first judgment.
    A document judged only below the relevance level (or only negatively) keeps that
    grade, so it stays judged for bpref, infAP and the other measures that look at it.
    """
    keyed = subtopic_qrels.select(["query_id", "doc_id", "relevance"]).append_column(
        "order", pa.array(range(subtopic_qrels.num_rows), pa.int64()))
    grouped = keyed.group_by(["query_id", "doc_id"], use_threads=False).aggregate(
        [("relevance", "max"), ("order", "min")])
    grouped = grouped.sort_by("order_min")
    return pa.table({
        "query_id": grouped.column("query_id"),
        "doc_id": grouped.column("doc_id"),
        "relevance": grouped.column("relevance_max"),
    })


def write_subtopic_qrels(table: pa.Table, out: PathLike | IO[str]) -> None:
    """Write a subtopic qrels table as ndeval's text, one judgment a line, in the table's
    order (atomically when `out` is a path); `read_subtopic_qrels` reads it back as it was.
    An empty id, or one holding whitespace, would not read back: it is refused."""
    problems = []
    for column in ("query_id", "subtopic", "doc_id"):
        values = pc.cast(table.column(column), pa.string())
        bad = pc.or_(pc.match_substring_regex(values, r"\s"), pc.equal(pc.utf8_length(values), 0))
        for row in pc.indices_nonzero(pc.fill_null(bad, True)).to_pylist()[:20]:
            problems.append(Problem("subtopic qrels table", row + 1,
                                    f"{column} {values[row].as_py()!r} is empty or holds whitespace"))
    if problems:
        raise FormatError(problems, hint="ids in a subtopic qrels file are single words; "
                          "map them to ids without whitespace before writing")
    body = (
        f"{q} {s} {d} {r}\n"
        for q, s, d, r in zip(
            table.column("query_id").to_pylist(),
            table.column("subtopic").to_pylist(),
            table.column("doc_id").to_pylist(),
            table.column("relevance").to_pylist(),
            strict=True,
        )
    )
    write_lines(body, out)
