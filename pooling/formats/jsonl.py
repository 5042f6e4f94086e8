"""JSON Lines topics and documents: one JSON object a line, field names from common exports.

Each canonical column accepts a few aliases (BEIR, ir_datasets, Pyserini, ...). When a line has
several aliases of one column, the first in the order below wins and the others go to `extra`
with every key that is not an alias. Ids may be JSON strings or integers; texts are strings or
null. Blank lines are skipped.

Topics:    query_id ← query_id|qid|id|_id; title ← title|query|text; description; narrative.
Documents: doc_id ← doc_id|docno|docid|id|_id; title; text ← text|contents|body; url.
A topic needs an id and a title; a document needs an id and a title or a text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from pooling.errors import FormatError, Problem
from pooling.formats.common import (
    DEFAULT_BATCH_SIZE,
    FirstSeen,
    ProblemLog,
    batches_of,
    extra_json,
    iter_lines,
    table_of,
)
from pooling.formats.schemas import DOCUMENTS_SCHEMA, TOPICS_SCHEMA
from pooling.formats.source import PathLike, display_name

# Canonical column -> accepted keys, in order of preference. The first column is the id.
TOPIC_KEYS: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "id", "_id"),
    "title": ("title", "query", "text"),
    "description": ("description",),
    "narrative": ("narrative",),
}
DOCUMENT_KEYS: dict[str, tuple[str, ...]] = {
    "doc_id": ("doc_id", "docno", "docid", "id", "_id"),
    "title": ("title",),
    "text": ("text", "contents", "body"),
    "url": ("url",),
}

TOPICS_HINT = (
    'Expected one JSON object a line, like {"query_id": "301", "title": "...", '
    '"description": "..."}, each query_id unique.'
)
DOCUMENTS_HINT = (
    'Expected one JSON object a line, like {"doc_id": "D1", "title": "...", "text": "..."}, '
    "each doc_id unique."
)


def read_jsonl_topics(path: PathLike, fields: Mapping[str, str] | None = None) -> pa.Table:
    """Read a topics JSONL file into a table of TOPICS_SCHEMA, in file order.

    fields: {canonical column: the file's key}, e.g. {"query_id": "qid", "title": "query"}
    for a track's own names; a mapped key wins over the built-in aliases.
    """
    log = ProblemLog(display_name(path))
    keys = dict(TOPIC_KEYS)
    for column, key in (fields or {}).items():
        if column not in TOPIC_KEYS:
            raise FormatError([Problem(display_name(path), None, f"--field names an unknown column {column!r}")],
                              hint=f"Map one of: {', '.join(TOPIC_KEYS)} (as canonical=key).")
        keys[column] = (key, *(k for k in TOPIC_KEYS[column] if k != key))
    rows = list(_rows(path, log, keys, required=("title",), what="topic"))
    log.raise_if_any(TOPICS_HINT)
    return pa.Table.from_pylist(rows, schema=TOPICS_SCHEMA)


def iter_jsonl_documents(
    path: PathLike, batch_size: int = DEFAULT_BATCH_SIZE
) -> Iterator[pa.RecordBatch]:
    """Stream documents as record batches of DOCUMENTS_SCHEMA.

    Valid records are yielded as they are read; when the input had problems, a `FormatError`
    listing all of them is raised after the last batch (load inside a transaction).
    """
    log = ProblemLog(display_name(path))
    rows = _rows(path, log, DOCUMENT_KEYS, required=("title", "text"), what="document")
    yield from batches_of(rows, DOCUMENTS_SCHEMA, batch_size)
    log.raise_if_any(DOCUMENTS_HINT)


def read_jsonl_documents(path: PathLike) -> pa.Table:
    """Read a whole documents JSONL file into a table of DOCUMENTS_SCHEMA."""
    return table_of(iter_jsonl_documents(path), DOCUMENTS_SCHEMA)


def _rows(
    path: PathLike,
    log: ProblemLog,
    keys: Mapping[str, tuple[str, ...]],
    required: tuple[str, ...],
    what: str,
) -> Iterator[dict[str, Any]]:
    """Canonical rows of a JSONL file; `required` names columns of which one must have text."""
    id_column = next(iter(keys))
    seen = FirstSeen(log, id_column)
    any_line = False
    for number, line in iter_lines(path, log):
        if not line.strip():
            continue
        any_line = True
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            log.add(number, f"invalid JSON ({exc.msg}: column {exc.colno})")
            continue
        except RecursionError:
            log.add(number, "invalid JSON (arrays and objects nested too deeply to read)")
            continue
        if not isinstance(obj, dict):
            log.add(number, f"expected a JSON object, found {type(obj).__name__}")
            continue
        row = _canonical(obj, keys, number, log)
        if row is None:
            continue
        if row[id_column] is None:
            log.add(
                number,
                f"missing or empty {id_column}: expected one of the keys {', '.join(keys[id_column])}",
            )
        elif not any(row[c] for c in required):
            wanted = ", ".join(k for c in required for k in keys[c])
            log.add(
                number, f"{what} {row[id_column]} has no text: expected one of the keys {wanted}"
            )
        elif log.good_id(number, row[id_column], id_column) and seen.is_new(row[id_column], number):
            yield row
    if not any_line and not log.problems:
        log.add(None, f"file is empty: expected at least one {what}")


def _canonical(
    obj: dict[str, Any], keys: Mapping[str, tuple[str, ...]], line: int, log: ProblemLog
) -> dict[str, Any] | None:
    """Map one JSON object onto the canonical columns; None (after logging) on a bad value."""
    rest = dict(obj)
    row: dict[str, Any] = {}
    ok = True
    for i, (column, aliases) in enumerate(keys.items()):
        key = next((k for k in aliases if k in rest), None)
        value = rest.pop(key) if key is not None else None
        if i == 0 and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # integer ids are common ({"qid": 301})
        if value is not None and not isinstance(value, str):
            kind = "a string" if i else "a string or an integer"
            log.add(line, f"{key} should be {kind}, found {json.dumps(value)[:40]}")
            ok = False
        row[column] = (value.strip() or None) if isinstance(value, str) else None
    row["extra"] = extra_json(rest)
    return row if ok else None
