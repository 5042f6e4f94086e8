"""Importing a dataset of ir_datasets (allenai/ir_datasets): topics, qrels and documents.

The dataset id is the import's identity. Topics and documents get the `source`
`ir_datasets:<dataset_id>`; the qrels become the version `irds:<dataset_id>` (unless named),
whose `source` is the same text; each `imports` row has that `source` and `details`
`{"ir_datasets": "<dataset_id>", "docs": "<mode>", ...}`. Documents come from the dataset's
docs store: `pooled` fetches by id only those the store needs (in runs, pools, judgments or
the dataset's qrels), `all` streams every document, `none` skips them. Everything happens in
one transaction, and importing the same dataset again writes nothing.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from itertools import islice
from typing import Any, TypeVar

import pyarrow as pa

from pooling.errors import PoolingError, StoreError
from pooling.formats.common import DEFAULT_BATCH_SIZE, FirstSeen, ProblemLog, extra_json
from pooling.formats.jsonl import DOCUMENT_KEYS, TOPIC_KEYS
from pooling.formats.schemas import DOCUMENTS_SCHEMA, TOPICS_SCHEMA
from pooling.store import faults
from pooling.store.database import Database, utcnow
from pooling.store.qrels import QrelsImport, save_qrels
from pooling.store.texts import TextImport
from pooling.terminal.progress import NoProgress, Progress


class DocsMode(StrEnum):
    """Which documents to import: those the store needs, every one, or none."""

    pooled = "pooled"
    all = "all"
    none = "none"


QRELS_PREFIX = "irds:"
SOURCE_PREFIX = "ir_datasets:"
INSTALL_HINT = "pip install 'pooling[irds]'"

# ir_datasets' copy of a document's raw SGML/HTML, from which its other fields were parsed:
# keeping it would store every document twice.
_SKIPPED_FIELDS = frozenset({"marked_up_doc"})

T = TypeVar("T")


@dataclass
class IrDatasetImport:
    """What importing a dataset did, per table; None where the dataset (or `docs`) has none."""

    dataset_id: str
    docs: DocsMode
    topics: TextImport | None = None
    qrels: QrelsImport | None = None
    documents: TextImport | None = None
    documents_missing: int = 0  # doc_ids the store needs that the dataset does not have
    notes: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        return SOURCE_PREFIX + self.dataset_id

    @property
    def status(self) -> str:
        """`imported` when any table changed, else `already imported`."""
        parts = [p for p in (self.topics, self.qrels, self.documents) if p is not None]
        return "imported" if any(p.status == "imported" for p in parts) else "already imported"


@dataclass(frozen=True)
class _Origin:
    """The dataset being imported and how; names it in rows, records and messages."""

    dataset_id: str
    docs: DocsMode

    @property
    def source(self) -> str:
        return SOURCE_PREFIX + self.dataset_id

    def details(self, **more: Any) -> str:
        return json.dumps({"ir_datasets": self.dataset_id, "docs": self.docs.value, **more},
                          sort_keys=True)


def import_ir_dataset(
    store: Database,
    dataset_id: str,
    *,
    docs: DocsMode | str = DocsMode.pooled,
    qrels_name: str | None = None,
    progress: Progress | None = None,
) -> IrDatasetImport:
    """Import an ir_datasets dataset's topics, qrels and documents in one transaction."""
    try:
        mode = DocsMode(docs)
    except ValueError:
        raise StoreError(f"docs must be one of {', '.join(DocsMode)}, not {docs!r}") from None
    dataset = load_dataset(dataset_id)
    origin = _Origin(dataset_id, mode)
    progress = progress or NoProgress()
    report = IrDatasetImport(dataset_id, mode)
    with store.transaction():
        if dataset.has_queries():
            report.topics = _import_topics(store, dataset, origin)
        else:
            report.notes.append(f"{origin.source} has no queries")
        qrels_version = None
        if dataset.has_qrels():
            report.qrels = _import_qrels(store, dataset, origin, qrels_name, report.notes)
            qrels_version = report.qrels.name if report.qrels else None
        else:
            report.notes.append(f"{origin.source} has no qrels")
        if mode is not DocsMode.none:
            if dataset.has_docs():
                _import_documents(store, dataset, origin, qrels_version, progress, report)
            else:
                report.notes.append(f"{origin.source} has no documents")
    return report


def load_dataset(dataset_id: str) -> Any:
    """`ir_datasets.load(dataset_id)`, with unknown ids and a missing package told plainly."""
    try:
        import ir_datasets
    except ImportError as exc:
        raise StoreError(
            f"importing from ir_datasets needs the ir_datasets package: {INSTALL_HINT}"
        ) from exc
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        close = difflib.get_close_matches(dataset_id, list(ir_datasets.registry), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise StoreError(
            f"ir_datasets has no dataset {dataset_id!r}{hint}; list the dataset ids with "
            "`ir_datasets list`"
        ) from None
    except Exception as exc:
        raise _failure(dataset_id, "definition", exc) from exc


# -- topics ---------------------------------------------------------------------------------
def _import_topics(store: Database, dataset: Any, origin: _Origin) -> TextImport:
    if _done(store, "topics", origin):
        return TextImport("topics", origin.source, "already imported")
    log = ProblemLog(f"{origin.source} queries")
    seen = FirstSeen(log, "query_id")
    rows = []
    for number, record in enumerate(_guarded(origin, "queries", dataset.queries_iter), start=1):
        row = _canonical(record, TOPIC_KEYS)
        if row["query_id"] is None:
            log.add(number, "query has an empty query_id")
        elif seen.is_new(row["query_id"], number):
            rows.append(row)
    log.raise_if_any("Record numbers count the dataset's queries_iter() from 1.")
    table = pa.Table.from_pylist(rows, schema=TOPICS_SCHEMA)
    added, unchanged = insert_texts(store, "topics", table, origin.source)
    digest = hashlib.sha256()
    _update_digest(digest, table)
    _record(store, "topics", origin, digest.hexdigest(), "topics", origin.details())
    return TextImport("topics", origin.source, "imported", added, unchanged)


# -- qrels ----------------------------------------------------------------------------------
def _import_qrels(
    store: Database, dataset: Any, origin: _Origin, name: str | None, notes: list[str]
) -> QrelsImport | None:
    done = _done(store, "qrels", origin)
    if done:
        return QrelsImport(done, "already imported")
    log = ProblemLog(f"{origin.source} qrels")
    query_ids, doc_ids, grades, lines = [], [], [], []
    for number, record in enumerate(_guarded(origin, "qrels", dataset.qrels_iter), start=1):
        query_id = _text(getattr(record, "query_id", None))
        doc_id = _text(getattr(record, "doc_id", None))
        relevance = getattr(record, "relevance", None)
        if query_id is None or doc_id is None:
            log.add(number, "a judgment needs a query_id and a doc_id")
        elif not isinstance(relevance, int) or isinstance(relevance, bool):
            log.add(number, f"relevance should be an integer, found {relevance!r}")
        else:
            query_ids.append(query_id)
            doc_ids.append(doc_id)
            grades.append(relevance)
            lines.append(number)
    log.raise_if_any("Record numbers count the dataset's qrels_iter() from 1.")
    if not lines:
        notes.append(f"{origin.source} has no judgments; no qrels version was made")
        return None
    table = pa.table({
        "query_id": pa.array(query_ids, pa.string()),
        "doc_id": pa.array(doc_ids, pa.string()),
        "relevance": pa.array(grades, pa.int64()),
        "line": pa.array(lines, pa.int64()),
    })
    version = name or QRELS_PREFIX + origin.dataset_id
    # The dataset's declared grades make the scale (a subset may not use every grade).
    declared = _declared_grades(dataset)
    result = save_qrels(store, table, version, method="imported", source=origin.source,
                        grades=sorted(declared | set(grades)))
    store.sql(
        "record ir_datasets qrels",
        "UPDATE imports SET details = ? WHERE kind = 'qrels' AND source = ? AND target = ?",
        [origin.details(), origin.source, version],
    )
    return result


def _declared_grades(dataset: Any) -> set[int]:
    try:
        defs = dataset.qrels_defs() or {}
    except Exception:  # optional metadata: a dataset without it still imports
        return set()
    return {g for g in defs if isinstance(g, int) and not isinstance(g, bool)}


# -- documents ------------------------------------------------------------------------------
_WANTED_DOCS = """
-- Documents the store refers to (runs, pools, judgments, the dataset's qrels) but lacks.
SELECT doc_id FROM (
    SELECT doc_id FROM run_results
    UNION SELECT doc_id FROM pool_entries
    UNION SELECT doc_id FROM judgments
    UNION SELECT doc_id FROM qrels WHERE version = ?
) wanted
WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.doc_id = wanted.doc_id)
ORDER BY doc_id
"""


def _import_documents(
    store: Database,
    dataset: Any,
    origin: _Origin,
    qrels_version: str | None,
    progress: Progress,
    report: IrDatasetImport,
) -> None:
    earlier = [
        json.loads(d).get("docs") if d else None
        for (d,) in store.sql(
            "find import",
            "SELECT details FROM imports WHERE kind = 'documents' AND source = ?",
            [origin.source],
        ).fetchall()
    ]
    if DocsMode.all in earlier:
        report.documents = TextImport("documents", origin.source, "already imported")
        return
    if origin.docs is DocsMode.all:
        total = _docs_count(dataset)
        progress.start(f"importing documents of {origin.dataset_id}", total=total)
        records = _guarded(origin, "documents", dataset.docs_iter)
        details: dict[str, Any] = {}
    else:
        wanted = [r[0] for r in store.sql("pooled doc_ids", _WANTED_DOCS, [qrels_version]).fetchall()]
        if not wanted and earlier:
            report.documents = TextImport("documents", origin.source, "already imported")
            return
        progress.start(f"looking up {len(wanted):,} documents in {origin.dataset_id}",
                       total=len(wanted))
        records = _lookup(origin, dataset, wanted, progress)
        details = {"requested": len(wanted)}
    result = TextImport("documents", origin.source, "imported")
    digest = hashlib.sha256()
    without_id = 0
    for chunk in _chunks(records, DEFAULT_BATCH_SIZE):
        rows = [_canonical(r, DOCUMENT_KEYS) for r in chunk]
        kept = [r for r in rows if r["doc_id"] is not None]
        without_id += len(rows) - len(kept)
        table = pa.Table.from_pylist(kept, schema=DOCUMENTS_SCHEMA)
        added, unchanged = insert_texts(store, "documents", table, origin.source)
        result.added += added
        result.unchanged += unchanged
        _update_digest(digest, table)
        faults.rows_written(result.added)
        if origin.docs is DocsMode.all:
            progress.advance(len(chunk))
    progress.finish()
    if without_id:
        report.notes.append(f"{without_id:,} documents of {origin.source} have no doc_id "
                            "and were skipped")
    if origin.docs is DocsMode.pooled:
        (report.documents_missing,) = store.one(
            "count missing docs", f"SELECT count(*) FROM ({_WANTED_DOCS})", [qrels_version]
        )
        details["missing"] = report.documents_missing
        if report.documents_missing:
            report.notes.append(
                f"{report.documents_missing:,} of {details['requested']:,} documents the store "
                f"needs are not in {origin.source}"
            )
        if result.added == 0 and earlier:
            report.documents = TextImport("documents", origin.source, "already imported")
            return
    details["added"] = result.added
    _record(store, "documents", origin, digest.hexdigest(), "documents",
            origin.details(**details))
    report.documents = result


def _lookup(origin: _Origin, dataset: Any, doc_ids: Sequence[str], progress: Progress) -> Iterator[Any]:
    """The dataset's records for these ids, fetched in batches from its docs store."""
    if not doc_ids:
        return
    docstore = _call(origin, "documents", dataset.docs_store)
    for start in range(0, len(doc_ids), DEFAULT_BATCH_SIZE):
        batch = doc_ids[start:start + DEFAULT_BATCH_SIZE]
        yield from _guarded(origin, "documents", lambda b=batch: docstore.get_many_iter(b))
        progress.advance(len(batch))


def _docs_count(dataset: Any) -> int | None:
    try:
        count = dataset.docs_count()
    except Exception:  # only sizes the progress bar
        return None
    return count if isinstance(count, int) else None


# -- shared steps ---------------------------------------------------------------------------
_TEXT_COLUMNS = {
    "topics": ("query_id", ["title", "description", "narrative", "extra"]),
    "documents": ("doc_id", ["title", "text", "url", "extra"]),
}


def insert_texts(store: Database, kind: str, table: pa.Table, source: str) -> tuple[int, int]:
    """Add topics or documents with new ids; returns (added, already there).

    A repeated id keeps its first row. An id stored from another source with other content
    is refused, as `pooling import topics|docs` refuses it: stored rows are never replaced.
    """
    key, fields = _TEXT_COLUMNS[kind]
    batch = table.append_column("_pos", pa.array(range(table.num_rows), pa.int64()))
    store.con.register("_batch", batch)
    try:
        changed = store.sql(
            f"check {kind}",
            f"SELECT b.{key} FROM _batch b JOIN {kind} s USING ({key}) "
            "WHERE s.source IS DISTINCT FROM ? AND ("
            + " OR ".join(f"b.{f} IS DISTINCT FROM s.{f}" for f in fields)
            + f") ORDER BY b.{key} LIMIT 11",
            [source],
        ).fetchall()
        if changed:
            ids = [r[0] for r in changed]
            shown = ", ".join(ids[:10]) + (" ..." if len(ids) > 10 else "")
            raise StoreError(
                f"nothing was imported: {source} changes {kind} already in the store "
                f"({key}: {shown}); stored {kind} are not replaced — import into a new store"
            )
        (added,) = store.one(
            f"insert {kind}",
            f"INSERT INTO {kind} SELECT {key}, {', '.join(fields)}, ? FROM _batch b "
            f"WHERE NOT EXISTS (SELECT 1 FROM {kind} s WHERE s.{key} = b.{key}) "
            f"QUALIFY row_number() OVER (PARTITION BY {key} ORDER BY _pos) = 1",
            [source],
        )
    finally:
        store.con.unregister("_batch")
    return added, table.num_rows - added


def _done(store: Database, kind: str, origin: _Origin) -> str | None:
    """The target of an earlier import of this kind from the dataset, if there was one."""
    row = store.one(
        "find import", "SELECT target FROM imports WHERE kind = ? AND source = ?",
        [kind, origin.source],
    )
    return row[0] if row else None


def _record(store: Database, kind: str, origin: _Origin, sha256: str, target: str, details: str) -> None:
    store.sql(
        "record import",
        "INSERT INTO imports (sha256, kind, source, target, imported_at, details) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [sha256, kind, origin.source, target, utcnow(), details],
    )


def _canonical(record: Any, keys: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """A record (a NamedTuple) as canonical columns; its other fields go to `extra`."""
    fields = getattr(record, "_fields", None)
    if fields is None:
        raise StoreError(f"expected ir_datasets records to be NamedTuples, found {type(record).__name__}")
    rest = {f: getattr(record, f) for f in fields if f not in _SKIPPED_FIELDS}
    row: dict[str, Any] = {}
    for column, aliases in keys.items():
        name = next((k for k in aliases if k in rest), None)
        value = rest.pop(name) if name is not None else None
        row[column] = _text(value)
    row["extra"] = extra_json({k: _jsonable(v) for k, v in rest.items() if v not in (None, "")})
    return row


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    text = value if isinstance(value, str) else str(value)
    return text.strip() or None


def _jsonable(value: Any) -> Any:
    """A field value as JSON: nested NamedTuples become objects, bytes text, dates ISO text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if hasattr(value, "_asdict"):
        return {k: _jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def _update_digest(digest: Any, table: pa.Table) -> None:
    """Add a canonical table to the content checksum recorded as the import's `sha256`."""
    for batch in table.to_batches():
        digest.update(batch.serialize())


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _guarded(origin: _Origin, what: str, make: Callable[[], Iterable[T]]) -> Iterator[T]:
    """Iterate what ir_datasets gives, each step through `_call`."""
    it = _call(origin, what, lambda: iter(make()))
    done = object()
    while (item := _call(origin, what, lambda: next(it, done))) is not done:
        yield item  # type: ignore[misc]


def _call(origin: _Origin, what: str, step: Callable[[], T]) -> T:
    """Run one step of ir_datasets; its own failures become a StoreError naming the dataset."""
    try:
        return step()
    except PoolingError:
        raise
    except Exception as exc:  # ir_datasets raises anything: KeyError, OSError, RuntimeError ...
        raise _failure(origin.dataset_id, what, exc) from exc


def _failure(dataset_id: str, what: str, exc: Exception) -> StoreError:
    return StoreError(
        f"nothing was imported: ir_datasets failed reading the {what} of {dataset_id!r}: "
        f"{type(exc).__name__}: {exc}"
    )
