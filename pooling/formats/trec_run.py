"""TREC run files: `query_id Q0 doc_id rank score tag`, strict reading for the store, and writing.

Reading collects every problem with file:line before failing. Fields after the sixth are
ignored (trec_eval does the same). The rank column is kept as given but never used for
ordering: trec_eval orders by score descending, then doc_id descending.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Literal

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem
from pooling.formats.columns import (
    float_column,
    id_column,
    int_column,
    parse_column_blocks,
    str_column,
)
from pooling.formats.keys import duplicate_groups, has_duplicates
from pooling.formats.source import PathLike, display_name, line_blocks, write_lines

if TYPE_CHECKING:
    from pooling.formats.topic_map import TopicMap

RUN_COLUMNS = [
    id_column("query_id"),
    str_column("q0"),
    id_column("doc_id"),
    int_column("rank"),
    float_column("score"),
    id_column("tag"),
]
RUN_LINE = "a run line (query_id Q0 doc_id rank score tag)"
RUN_HINT = "Fix these lines; a run line is: query_id Q0 doc_id rank score tag"
Q0_VALUES = ("Q0", "q0", "0")
Dedupe = Literal["error", "first"]
DEDUPE_HINT = "Use --dedupe first to keep the first occurrence of each repeated document."


@dataclass(frozen=True)
class ParsedRun:
    """One run read from a file: rows in file order (query_id, doc_id, rank, score, tag, line)."""

    tag: str
    table: pa.Table
    source: str
    duplicates_dropped: int = 0
    topics_mapped: dict[str, str] = field(default_factory=dict)  # written -> canonical ids


def read_trec_run(
    path: PathLike, *, split_by_tag: bool = False, dedupe: Dedupe = "error"
) -> list[ParsedRun]:
    """Read a run file (compressed transparently); one ParsedRun, or one per tag with
    `split_by_tag`."""
    return parse_trec_run(path, display_name(path), split_by_tag=split_by_tag, dedupe=dedupe)


def parse_trec_run(
    data: PathLike | bytes, source: str, *, split_by_tag: bool = False, dedupe: Dedupe = "error",
    topic_map: TopicMap | None = None,
) -> list[ParsedRun]:
    """Parse run text (bytes, or a path read block by block); raise FormatError naming every
    malformed line, NaN score or duplicate (of the first block that has any).

    A topic map is applied before the duplicate check (two ids of one topic may share docs).
    Both act on each block as it is read: with one tag, a repeat is refused in the first
    block that has one, and `dedupe="first"` keeps only what it keeps (`FirstSeen`), so a
    file of gigabytes of one repeated line costs the memory of one line.
    """
    used: dict[str, str] = {}
    first_seen = FirstSeen() if dedupe == "first" else None

    def check(block: pa.Table) -> pa.Table:
        """Refuse a block's bad Q0 fields, map its topics, and apply the duplicate rule to
        it: with one tag, its repeats are refused at once; kept once, they are dropped."""
        if problems := _q0_problems(block, source):
            raise FormatError(problems, hint=RUN_HINT)
        if topic_map is not None:
            block, mapped = topic_map.apply(block)
            used.update(mapped)
        if dedupe == "error" and pc.count_distinct(block["tag"]).as_py() == 1:
            apply_dedupe(block, source, "error")
        return block if first_seen is None else first_seen.keep(block)

    parsed = parse_column_blocks(line_blocks(data, source, RUN_LINE), source, RUN_COLUMNS,
                                 extra_fields="ignore", check=check)
    if parsed.problems:
        raise FormatError(parsed.problems, hint=RUN_HINT)
    table = parsed.table.drop_columns(["q0"])
    runs = split_checked(table, source, split_by_tag=split_by_tag, dedupe=dedupe)
    dropped = first_seen.dropped if first_seen is not None else {}
    return [ParsedRun(r.tag, r.table, r.source, r.duplicates_dropped + dropped.get(r.tag, 0), used)
            for r in runs]


class FirstSeen:
    """`dedupe="first"` over a run read block by block: each block's rows whose (tag,
    query_id, doc_id) no earlier row had, so what is held grows with the distinct pairs, not
    with the lines; `dropped` counts the repeats left out, per tag."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.dropped: Counter[str] = Counter()

    def keep(self, block: pa.Table) -> pa.Table:
        # Each key's first line in the block (Arrow), then those no earlier block had: the
        # Python work is per distinct key, not per line.
        keys = pc.binary_join_element_wise(block["tag"], block["query_id"], block["doc_id"], "\0")
        firsts = pa.table({"key": keys, "line": block["line"]}).group_by(
            "key", use_threads=False).aggregate([("line", "min")])
        new = [(k, n) for k, n in zip(firsts["key"].to_pylist(), firsts["line_min"].to_pylist(),
                                      strict=True) if k not in self.seen]
        self.seen.update(k for k, _ in new)
        if len(new) == block.num_rows:
            return block
        kept = block.filter(pc.is_in(block["line"], pa.array([n for _, n in new], pa.int64())))
        self.dropped.update(_per_tag(block) - _per_tag(kept))
        return kept


def _per_tag(table: pa.Table) -> Counter[str]:
    """Rows per run tag."""
    return Counter({v["values"]: v["counts"] for v in pc.value_counts(table["tag"]).to_pylist()})


def split_checked(
    table: pa.Table, source: str, *, split_by_tag: bool, dedupe: Dedupe
) -> list[ParsedRun]:
    """Split a parsed run by tag (or insist on one tag) and apply the duplicate rule."""
    tags = pc.unique(table["tag"]).to_pylist()
    if len(tags) > 1 and not split_by_tag:
        firsts = []
        for tag in tags[:5]:
            idx = pc.index(table["tag"], tag).as_py()
            firsts.append(f"{tag!r} (first at line {table['line'][idx].as_py()})")
        raise FormatError(
            [Problem(source, None, f"{len(tags)} different run tags in one file: {', '.join(firsts)}")],
            hint="Read each tag as its own run with --split-by-tag, or fix the tag column.",
        )
    runs = []
    for tag in tags:
        part = table if len(tags) == 1 else table.filter(pc.equal(table["tag"], tag))
        part, dropped = apply_dedupe(part, source, dedupe)
        runs.append(ParsedRun(tag, part, source, dropped))
    return runs


def apply_dedupe(table: pa.Table, source: str, dedupe: Dedupe) -> tuple[pa.Table, int]:
    """Reject repeated (query_id, doc_id) pairs, or keep only the first occurrence of each."""
    keys = ["query_id", "doc_id"]
    if not has_duplicates(table, keys):
        return table, 0
    groups = duplicate_groups(table, keys)
    if dedupe == "first":
        drop = {line for g in groups for line in g.lines[1:]}
        mask = pc.invert(pc.is_in(table["line"], pa.array(sorted(drop), pa.int64())))
        return table.filter(mask), len(drop)
    repeated = sum(len(g.lines) - 1 for g in groups)
    examples = [
        Problem(source, g.lines[1], f"doc {g.key[1]!r} repeated for query {g.key[0]!r} "
                f"(first at line {g.lines[0]})")
        for g in groups[:5]
    ]
    # The count is a problem of this file (a refusal of many files names each file's count);
    # the advice, the same for every file, is the hint.
    count = Problem(source, None, f"{repeated} repeated (query_id, doc_id) line(s) in "
                    f"{len(groups)} pair(s)")
    raise FormatError(examples + [count], hint=DEDUPE_HINT)


def _q0_problems(table: pa.Table, source: str) -> list[Problem]:
    bad = pc.invert(pc.is_in(table["q0"], pa.array(Q0_VALUES)))
    if not pc.any(bad).as_py():
        return []
    rows = table.filter(bad).select(["q0", "line"]).slice(0, 20).to_pylist()
    return [Problem(source, r["line"], f"second field must be Q0, found {r['q0']!r}") for r in rows]


def trec_order(table: pa.Table) -> pa.Table:
    """Rows in trec_eval's order: query_id, then score descending, then doc_id descending."""
    return table.sort_by([("query_id", "ascending"), ("score", "descending"), ("doc_id", "descending")])


def format_score(score: float) -> str:
    """Shortest text that reads back as exactly the same double."""
    text = repr(float(score))
    return text[:-2] if text.endswith(".0") else text


def write_trec_run(table: pa.Table, out: PathLike | IO[str], tag: str | None = None) -> None:
    """Write a run as TREC text in trec_eval order; rank as stored, scores round-trip exactly."""
    ordered = trec_order(table)
    tags: Iterable[str]
    if tag is not None:
        tags = [tag] * ordered.num_rows
    else:
        tags = ordered["tag"].to_pylist()
    lines = (
        f"{q} Q0 {d} {r} {format_score(s)} {t}\n"
        for q, d, r, s, t in zip(
            ordered["query_id"].to_pylist(),
            ordered["doc_id"].to_pylist(),
            ordered["rank"].to_pylist(),
            ordered["score"].to_pylist(),
            tags,
            strict=True,
        )
    )
    write_lines(lines, out)
