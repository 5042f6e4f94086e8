"""TREC qrels files: `query_id iter doc_id relevance`, strict reading for the store, and writing.

Negative grades are kept (they mean "pooled but not judged" to bpref and infAP). A
(query_id, doc_id) pair judged twice is an error: a qrels version holds one grade per pair.
"""

from __future__ import annotations

from typing import IO

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem
from pooling.formats.columns import id_column, int_column, parse_column_blocks, str_column
from pooling.formats.keys import duplicate_groups, has_duplicates
from pooling.formats.source import PathLike, display_name, line_blocks, write_lines

QRELS_COLUMNS = [
    id_column("query_id"),
    str_column("iter"),
    id_column("doc_id"),
    int_column("relevance"),
]
QRELS_LINE = "a qrels line (query_id iter doc_id relevance)"


def read_trec_qrels(path: PathLike) -> pa.Table:
    """Read a qrels file (compressed transparently) into (query_id, doc_id, relevance, line),
    block by block (see `pooling.formats.source.line_blocks`)."""
    return parse_trec_qrels(path, display_name(path))


def parse_trec_qrels(data: PathLike | bytes, source: str) -> pa.Table:
    """Parse qrels text (bytes, or a path read block by block); raise FormatError naming every
    malformed line and repeated pair (of the first block that has any)."""
    blocks = line_blocks(data, source, QRELS_LINE)
    parsed = parse_column_blocks(blocks, source, QRELS_COLUMNS, extra_fields="error",
                                 check=lambda block: check_unique_judgments(block, source))
    if parsed.problems:
        raise FormatError(
            parsed.problems, hint="Fix these lines; a qrels line is: query_id iter doc_id relevance"
        )
    table = parsed.table.drop_columns(["iter"])
    check_unique_judgments(table, source)
    return table


def check_lowest_grade(table: pa.Table, source: str, hint: str, lowest: int = -1) -> None:
    """Refuse grades below `lowest` (-1: "pooled but not judged"; anything lower is a typo),
    naming each line (up to 20)."""
    bad = pc.less(table["relevance"], lowest)
    if not pc.any(bad).as_py():
        return
    rows = table.filter(bad).select(["line", "relevance"]).slice(0, 20).to_pylist()
    raise FormatError([Problem(source, r["line"], f"relevance {r['relevance']} is below {lowest}")
                       for r in rows], hint=hint)


def check_unique_judgments(table: pa.Table, source: str) -> None:
    """One grade per (query_id, doc_id): report repeats with the lines where they occur."""
    keys = ["query_id", "doc_id"]
    if not has_duplicates(table, keys):
        return
    groups = duplicate_groups(table, keys)
    problems = [
        Problem(source, g.lines[1], f"doc {g.key[1]!r} judged again for query {g.key[0]!r} "
                f"(first at line {g.lines[0]})")
        for g in groups
    ]
    raise FormatError(problems, hint=f"{len(groups)} (query_id, doc_id) pair(s) judged more than "
                      "once; keep one line per pair.")


def write_trec_qrels(
    table: pa.Table, out: PathLike | IO[str], *, header: list[str] | None = None
) -> None:
    """Write qrels as TREC text sorted by query_id, doc_id; optional `# ` header comment lines."""
    ordered = table.sort_by([("query_id", "ascending"), ("doc_id", "ascending")])
    head = [f"# {h}\n" for h in header or []]
    body = (
        f"{q} 0 {d} {r}\n"
        for q, d, r in zip(
            ordered["query_id"].to_pylist(),
            ordered["doc_id"].to_pylist(),
            ordered["relevance"].to_pylist(),
            strict=True,
        )
    )
    write_lines(_chain(head, body), out)


def _chain(*parts):
    for part in parts:
        yield from part
