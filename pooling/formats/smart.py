"""SMART collections (Cranfield, CACM, CISI, MED, NPL): `.I id` records with `.T/.A/.B/.W/.X`
fields, and their relevance files.

A record starts at a line `.I <id>`; each field starts at a line `.<letter>` and runs until
the next such line. `.T` is the title, `.W` the text (a query's text for topics), `.A` the
authors and `.B` the source (kept in `extra`), any other field goes to `extra` by its letter.
Relevance files number queries 1..N in the order of the query file, not by its `.I` ids (in
Cranfield the query whose `.I` is 004 is query 3), so topics are numbered by position by
default and keep their `.I` in `extra` as `smart_id`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

import pyarrow as pa

from pooling.errors import FormatError, Problem
from pooling.formats.common import ProblemLog, extra_json, iter_lines
from pooling.formats.schemas import DOCUMENTS_SCHEMA, QRELS_SCHEMA, TOPICS_SCHEMA
from pooling.formats.source import PathLike, display_name

FIELD = re.compile(r"^\.([A-Z])(?:\s+(.*))?$")
NAMES = {"T": "title", "A": "authors", "B": "source", "W": "text", "X": "references",
         "K": "keywords", "C": "categories", "N": "entry", "M": "mesh"}
HINT = "Expected SMART records: a line `.I <id>`, then fields `.T`, `.A`, `.B`, `.W`, ... each on its own line."
Numbering = Literal["position", "id"]
Grades = Literal["cranfield", "binary", "as-is"]


def iter_records(path: PathLike, log: ProblemLog) -> Iterator[tuple[int, str, dict[str, str]]]:
    """(line of `.I`, id, {field letter: text}) for each record, text whitespace-collapsed."""
    current: tuple[int, str, dict[str, list[str]]] | None = None
    letter: str | None = None
    for number, line in iter_lines(path, log):
        match = FIELD.match(line.rstrip("\n").rstrip())
        if match and match.group(1) == "I":
            if current is not None:
                yield _finish(current)
            ident = (match.group(2) or "").strip()
            if not ident:
                log.add(number, "`.I` without an id")
            current, letter = (number, ident, {}), None
        elif match:
            if current is None:
                log.add(number, f"field .{match.group(1)} before the first `.I` record")
                continue
            letter = match.group(1)
            current[2].setdefault(letter, [])
            if match.group(2):
                current[2][letter].append(match.group(2))
        elif line.strip():
            if current is None or letter is None:
                log.add(number, f"text outside a field: {line.strip()[:40]!r}")
                continue
            current[2][letter].append(line.strip())
    if current is not None:
        yield _finish(current)


def _finish(record: tuple[int, str, dict[str, list[str]]]) -> tuple[int, str, dict[str, str]]:
    line, ident, fields = record
    return line, ident, {k: " ".join(" ".join(v).split()) for k, v in fields.items()}


def _extra(fields: dict[str, str], used: tuple[str, ...], **more: str) -> str | None:
    rest = {NAMES.get(k, k): v for k, v in fields.items() if k not in used and v}
    return extra_json({**rest, **more})


def read_smart_documents(path: PathLike) -> pa.Table:
    """Documents as DOCUMENTS_SCHEMA: doc_id from `.I`, title `.T`, text `.W`, others in extra."""
    return pa.Table.from_batches(list(iter_smart_documents(path)), schema=DOCUMENTS_SCHEMA)


def iter_smart_documents(path: PathLike, batch_size: int = 10_000) -> Iterator[pa.RecordBatch]:
    """Documents in batches; every problem is reported (with its line) after the last batch."""
    log = ProblemLog(display_name(path))
    seen: dict[str, int] = {}
    rows: list[dict] = []
    for line, ident, fields in iter_records(path, log):
        if ident in seen:
            log.add(line, f"duplicate document id {ident!r} (first at line {seen[ident]})")
            continue
        seen[ident] = line
        # Empty .T and .W occur in real collections (Cranfield 471, 995): kept, not refused.
        title, text = fields.get("T") or None, fields.get("W") or None
        rows.append({"doc_id": ident, "title": title, "text": text, "url": None,
                     "extra": _extra(fields, ("T", "W"))})
        if len(rows) >= batch_size:
            yield pa.RecordBatch.from_pylist(rows, schema=DOCUMENTS_SCHEMA)
            rows = []
    if not seen and not log.problems:
        log.add(None, "no `.I` record found")
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=DOCUMENTS_SCHEMA)
    log.raise_if_any(HINT)


def read_smart_topics(path: PathLike, numbering: Numbering = "position") -> pa.Table:
    """Queries as TOPICS_SCHEMA, title from `.W`. numbering='position' (default) numbers them
    1..N in file order, as SMART relevance files do, keeping `.I` in extra as `smart_id`;
    numbering='id' uses the `.I` id as written (leading zeros kept)."""
    if numbering not in ("position", "id"):
        raise FormatError([Problem(display_name(path), None, f"unknown numbering {numbering!r}")],
                          hint="Use 'position' (as the relevance files count) or 'id'.")
    log = ProblemLog(display_name(path))
    rows = []
    seen: dict[str, int] = {}
    for position, (line, ident, fields) in enumerate(iter_records(path, log), start=1):
        query_id = str(position) if numbering == "position" else ident
        if query_id in seen:
            log.add(line, f"duplicate query id {query_id!r} (first at line {seen[query_id]})")
            continue
        seen[query_id] = line
        text = fields.get("W") or fields.get("T")
        if not text:
            log.add(line, f"query {ident!r} has no .W text")
            continue
        rows.append({"query_id": query_id, "title": text, "description": None, "narrative": None,
                     "extra": _extra(fields, ("W",) if fields.get("W") else ("T",),
                                     **({"smart_id": ident} if numbering == "position" else {}))})
    if not rows and not log.problems:
        log.add(None, "no `.I` record found")
    log.raise_if_any(HINT)
    return pa.Table.from_pylist(rows, schema=TOPICS_SCHEMA)


def read_smart_qrels(path: PathLike, grades: Grades = "cranfield") -> pa.Table:
    """A SMART relevance file (`query doc [grade ...]`, whitespace separated) as QRELS_SCHEMA.

    grades='cranfield': Cranfield's 1 (complete answer) .. 4 (minimal interest) become 5 - g
    (4 .. 1) and -1 (not relevant) becomes 0; 'binary': every listed pair is relevant (1), as
    CACM/CISI/MED files list only relevant pairs; 'as-is': the third column as written.
    """
    if grades not in ("cranfield", "binary", "as-is"):
        raise FormatError([Problem(display_name(path), None, f"unknown grade mapping {grades!r}")],
                          hint="Use cranfield, binary or as-is.")
    log = ProblemLog(display_name(path))
    rows: dict[tuple[str, str], tuple[int, int]] = {}
    for number, line in iter_lines(path, log):
        fields = line.split()
        if not fields:
            continue
        needed = 2 if grades == "binary" else 3
        if len(fields) < needed:
            log.add(number, f"expected at least {needed} fields (query doc grade), found {len(fields)}")
            continue
        query_id, doc_id = fields[0], fields[1]
        if grades == "binary":
            relevance = 1
        else:
            try:
                grade = int(fields[2])
            except ValueError:
                log.add(number, f"grade must be a whole number, found {fields[2]!r}")
                continue
            if grades == "as-is":
                relevance = grade
            elif grade == -1:
                relevance = 0
            elif 1 <= grade <= 4:
                relevance = 5 - grade
            else:
                log.add(number, f"a Cranfield grade is 1..4 or -1, found {grade}")
                continue
        key = (query_id, doc_id)
        if key in rows:
            log.add(number, f"doc {doc_id!r} judged twice for query {query_id!r} (first at line {rows[key][1]})")
            continue
        rows[key] = (relevance, number)
    log.raise_if_any("Expected a SMART relevance file: query_number doc_id grade per line.")
    return pa.table({"query_id": [q for q, _ in rows], "doc_id": [d for _, d in rows],
                     "relevance": [r for r, _ in rows.values()]}, schema=QRELS_SCHEMA)
