"""Sampled qrels: `query_id iter doc_id stratum relevance`, the file NIST's sample_eval.pl reads.

Every pooled (query_id, doc_id) pair has a line: its stratum (a token, compared as text) and
its grade, or -1 when the pair was pooled but not drawn for judging. The table keeps -1 for
those pairs (not null), so it round-trips to the file unchanged and `relevance >= 0` means
"judged", as in the file. A pair listed twice is an error naming both lines.

`stratum_counts` gives, per (query_id, stratum), the pooled and judged counts and the
inclusion probability judged / pooled that every estimator weighs a judged document by.
"""

from __future__ import annotations

from typing import IO

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError
from pooling.formats.columns import id_column, int_column, parse_column_blocks, str_column
from pooling.formats.source import (
    PathLike,
    compression_of,
    display_name,
    line_blocks,
    open_file,
    sniff_decompressed,
    write_lines,
)
from pooling.formats.trec_qrels import check_lowest_grade, check_unique_judgments

UNSAMPLED = -1  # the grade of a pooled pair that was not drawn for judging

SAMPLED_QRELS_COLUMNS = [
    id_column("query_id"),
    str_column("iter"),
    id_column("doc_id"),
    str_column("stratum"),
    int_column("relevance"),
]

_LINE = "query_id iter doc_id stratum relevance (relevance -1: pooled, not judged)"

STRATUM_COUNTS_SCHEMA = pa.schema([
    ("query_id", pa.string()), ("stratum", pa.string()), ("pooled", pa.int64()),
    ("judged", pa.int64()), ("inclusion_probability", pa.float64()),
])


def read_sampled_qrels(path: PathLike) -> pa.Table:
    """Read a sampled qrels file (gzip transparently): query_id, doc_id, stratum, relevance, line."""
    return parse_sampled_qrels(path, display_name(path))


def parse_sampled_qrels(data: PathLike | bytes, source: str) -> pa.Table:
    """Parse sampled qrels text (bytes, or a path read block by block); a FormatError names
    every malformed line and repeated pair (of the first block that has any)."""
    blocks = line_blocks(data, source, f"a sampled qrels line ({_LINE})")
    parsed = parse_column_blocks(
        blocks, source, SAMPLED_QRELS_COLUMNS, extra_fields="error",
        check=lambda block: check_unique_judgments(block, source))
    if parsed.problems:
        raise FormatError(parsed.problems, hint=f"Fix these lines; a sampled qrels line is: {_LINE}")
    table = parsed.table.drop_columns(["iter"])
    check_lowest_grade(table, source, "A grade is 0 or more when judged and -1 when the pair "
                       "was pooled but not sampled; fix these lines.", UNSAMPLED)
    check_unique_judgments(table, source)
    return table


def is_sampled_qrels(data: bytes) -> bool:
    """True when the first data line (not blank, not `#`) has five fields; a qrels line has four."""
    for line in data.splitlines():
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            return len(fields) == 5
    return False


def looks_sampled(path: PathLike) -> bool:
    """Whether the file at `path` is sampled qrels by its first data line (`-` never is: stdin
    can be read once only). A compressed file is decompressed to look."""
    if str(path) == "-":
        return False
    with open_file(path) as f:
        head = f.read(1 << 16)
    if compression_of(head) is not None:
        head = sniff_decompressed(head, 1 << 16)
        head = head[: head.rfind(b"\n") + 1] or head
    return is_sampled_qrels(head)


def write_sampled_qrels(table: pa.Table, out: PathLike | IO[str]) -> None:
    """Write sampled qrels text sorted by query_id, doc_id; `read_sampled_qrels` reads it back."""
    ordered = table.sort_by([("query_id", "ascending"), ("doc_id", "ascending")])
    body = (
        f"{q} 0 {d} {s} {r}\n"
        for q, d, s, r in zip(*(ordered[c].to_pylist() for c in
                                ("query_id", "doc_id", "stratum", "relevance")), strict=True)
    )
    write_lines(body, out)


def stratum_counts(table: pa.Table) -> pa.Table:
    """Per (query_id, stratum): pooled pairs, judged pairs (relevance >= 0) and the inclusion
    probability judged / pooled (0 for a stratum nothing was drawn from)."""
    judged = pc.cast(pc.greater_equal(table["relevance"], 0), pa.int64())
    grouped = (pa.table({"query_id": table["query_id"], "stratum": table["stratum"],
                         "judged": judged})
               .group_by(["query_id", "stratum"])
               .aggregate([("judged", "count"), ("judged", "sum")])
               .sort_by([("query_id", "ascending"), ("stratum", "ascending")]))
    pooled = grouped["judged_count"].cast(pa.int64())
    sampled = grouped["judged_sum"].cast(pa.int64())
    probability = pc.divide(pc.cast(sampled, pa.float64()), pc.cast(pooled, pa.float64()))
    return pa.table([grouped["query_id"], grouped["stratum"], pooled, sampled, probability],
                    schema=STRATUM_COUNTS_SCHEMA)
