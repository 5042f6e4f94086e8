"""Importing topics and documents: new ids are added, identical ones skipped, changed ones refused."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from pooling.errors import StoreError
from pooling.formats import iter_documents, read_topics
from pooling.formats.source import display_name, open_file
from pooling.store import faults
from pooling.store.database import Database, utcnow
from pooling.terminal.progress import NoProgress, Progress

_FIELDS = {
    "topics": ("query_id", ["title", "description", "narrative", "extra"]),
    "documents": ("doc_id", ["title", "text", "url", "extra"]),
}


@dataclass
class TextImport:
    """Outcome of importing topics or documents."""

    kind: str
    source: str
    status: str  # "imported" | "already imported"
    added: int = 0
    unchanged: int = 0


def import_topics(store: Database, path: str | Path, *, format: str | None = None,
                  **options: object) -> TextImport:
    """Add the topics of a file (TREC SGML, TSV or JSONL) to the store."""
    return _import(store, "topics", path, lambda: iter([read_topics(path, format, **options)]), NoProgress())


def import_documents(
    store: Database, path: str | Path, *, format: str | None = None, progress: Progress | None = None
) -> TextImport:
    """Add the documents of a file (JSONL, TSV or TREC SGML), streamed in batches."""
    batches = lambda: (pa.Table.from_batches([b]) for b in iter_documents(path, format))  # noqa: E731
    return _import(store, "documents", path, batches, progress or NoProgress())


def _import(store: Database, kind: str, path, tables, progress: Progress) -> TextImport:
    source = display_name(path)
    sha = _sha256(path)
    done = store.one(
        "find import", "SELECT target FROM imports WHERE sha256 = ? AND kind = ?", [sha, kind]
    )
    if done:
        return TextImport(kind, source, "already imported")
    key, fields = _FIELDS[kind]
    result = TextImport(kind, source, "imported")
    progress.start(f"importing {kind} from {source}")
    with store.transaction() as con:
        for table in tables():
            con.register("_batch", table)
            try:
                changed = con.execute(
                    f"SELECT b.{key} FROM _batch b JOIN {kind} s USING ({key}) WHERE "
                    + " OR ".join(f"b.{f} IS DISTINCT FROM s.{f}" for f in fields)
                    + f" ORDER BY b.{key} LIMIT 11"
                ).fetchall()
                if changed:
                    ids = [r[0] for r in changed]
                    shown = ", ".join(ids[:10]) + (" ..." if len(ids) > 10 else "")
                    raise StoreError(
                        f"nothing was imported: {source} changes {kind} already in the store "
                        f"({key}: {shown}); stored {kind} are not replaced — use new ids"
                    )
                added = con.execute(
                    f"INSERT INTO {kind} SELECT {key}, {', '.join(fields)}, ? FROM _batch b "
                    f"WHERE NOT EXISTS (SELECT 1 FROM {kind} s WHERE s.{key} = b.{key})",
                    [source],
                ).fetchall()[0][0]
            finally:
                con.unregister("_batch")
            result.added += added
            result.unchanged += table.num_rows - added
            faults.rows_written(result.added)
            progress.advance(table.num_rows)
        con.execute("INSERT INTO imports (sha256, kind, source, target, imported_at) VALUES (?, ?, ?, ?, ?)", [sha, kind, source, kind, utcnow()])
    progress.finish()
    return result


def _sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open_file(path) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
