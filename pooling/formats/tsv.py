"""Tab-separated topics and documents, one record a line, no header, no quoting.

Topics:    `query_id<TAB>text`               (text becomes the title)
Documents: `doc_id<TAB>text` or `doc_id<TAB>title<TAB>text`. The first record decides which
           layout the whole file has; a later line with another number of fields is a problem.

A header line is not assumed: `qid<TAB>query` would be read as a topic named "qid". Blank lines
are skipped. Fields are stripped of surrounding spaces; ids and texts must not be empty.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from pooling.formats.common import (
    DEFAULT_BATCH_SIZE,
    FirstSeen,
    ProblemLog,
    batches_of,
    iter_lines,
    table_of,
)
from pooling.formats.schemas import DOCUMENTS_SCHEMA, TOPICS_SCHEMA
from pooling.formats.source import PathLike, display_name

TOPICS_HINT = "Expected topics as `query_id<TAB>text`, one a line, each query_id unique, no header."
DOCUMENTS_HINT = (
    "Expected documents as `doc_id<TAB>text` or `doc_id<TAB>title<TAB>text` (the same layout "
    "on every line), each doc_id unique, no header; tabs inside a text must be replaced."
)


def read_tsv_topics(path: PathLike) -> pa.Table:
    """Read `query_id<TAB>text` lines into a table of TOPICS_SCHEMA (text → title)."""
    log = ProblemLog(display_name(path))
    seen = FirstSeen(log, "query_id")
    rows: list[dict[str, str | None]] = []
    for number, line in iter_lines(path, log):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) != 2:
            found = "no tab" if len(fields) == 1 else f"{len(fields)} fields"
            log.add(number, f"expected 2 tab-separated fields (query_id, text), found {found}")
            continue
        query_id, text = fields
        if (_non_empty(log, number, query_id=query_id, text=text)
                and log.good_id(number, query_id, "query_id") and seen.is_new(query_id, number)):
            rows.append({"query_id": query_id, "title": text})
    if not rows and not log.problems:
        log.add(None, "file is empty: expected at least one topic")
    log.raise_if_any(TOPICS_HINT)
    return pa.Table.from_pylist(rows, schema=TOPICS_SCHEMA)


def iter_tsv_documents(
    path: PathLike, batch_size: int = DEFAULT_BATCH_SIZE
) -> Iterator[pa.RecordBatch]:
    """Stream documents as record batches of DOCUMENTS_SCHEMA.

    Valid records are yielded as they are read; when the input had problems, a `FormatError`
    listing all of them is raised after the last batch (load inside a transaction).
    """
    log = ProblemLog(display_name(path))
    yield from batches_of(_document_rows(path, log), DOCUMENTS_SCHEMA, batch_size)
    log.raise_if_any(DOCUMENTS_HINT)


def read_tsv_documents(path: PathLike) -> pa.Table:
    """Read a whole documents TSV into a table of DOCUMENTS_SCHEMA."""
    return table_of(iter_tsv_documents(path), DOCUMENTS_SCHEMA)


def _document_rows(path: PathLike, log: ProblemLog) -> Iterator[dict[str, str | None]]:
    seen = FirstSeen(log, "doc_id")
    layout: tuple[int, int] | None = None  # (field count, line that set it)
    for number, line in iter_lines(path, log):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("\t")]
        if layout is None and len(fields) in (2, 3):
            layout = (len(fields), number)
        expected = layout[0] if layout else None
        if len(fields) != expected:
            found = "no tab" if len(fields) == 1 else f"{len(fields)} fields"
            if expected is None:
                wanted = "2 or 3 tab-separated fields (doc_id, [title,] text)"
            else:
                wanted = f"{expected} tab-separated fields like line {layout[1]}"  # type: ignore[index]
            log.add(number, f"expected {wanted}, found {found}")
            continue
        doc_id, text = fields[0], fields[-1]
        title = fields[1] if len(fields) == 3 else None
        if (_non_empty(log, number, doc_id=doc_id, text=text)
                and log.good_id(number, doc_id, "doc_id") and seen.is_new(doc_id, number)):
            yield {"doc_id": doc_id, "title": title or None, "text": text}
    if layout is None and not log.problems:
        log.add(None, "file is empty: expected at least one document")


def _non_empty(log: ProblemLog, line: int, **fields: str) -> bool:
    """True when every named field has text; otherwise log each empty one."""
    empty = [name for name, value in fields.items() if not value]
    for name in empty:
        log.add(line, f"empty {name}")
    return not empty
