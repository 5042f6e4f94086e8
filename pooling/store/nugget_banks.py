"""Nugget banks: each topic's nuggets, edited append-only and frozen into versions.

A *bank* is a named line of nugget lists, one per topic: the assessors' nuggets, a model's,
an imported set. Nothing in a bank is ever overwritten: every change is a row of
`nugget_edits` (`add`, `reword`, `grade`, `merge`, `delete`, `move`), with who made it and
when, and the bank's current state is the fold of its edits (`current_nuggets`). A nugget
keeps its id (`1`, `2`, ... within its bank and topic) through rewordings and regradings; a
merged or deleted one leaves the list, and its id is never given again.

A *version* is a frozen snapshot of a bank (`freeze`), like a qrels version: a round judges
one version, and its assignments stay attached to it whatever is edited later. Freezing an
unchanged bank gives back its latest version rather than a copy.

The order of a topic's nuggets is by importance (vital first), then by position: a new
nugget goes last among its importance, `move` places it between others.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from pooling.errors import StoreError
from pooling.formats.ids import check_id
from pooling.formats.nugget_files import (
    IKAT_DEFAULT_VITAL,
    IMPORTANCE,
    read_ikat_nuggets,
    read_nuggets,
    write_nuggets,
)
from pooling.formats.source import display_name, sha256_file
from pooling.store.database import Database, utcnow

ACTIONS = ("add", "reword", "grade", "merge", "delete", "move")
PROVENANCE = ("person", "model", "imported")
NUGGET_FORMATS = ("nuggetizer", "ikat")

CURRENT_SCHEMA = pa.schema([
    ("query_id", pa.string()), ("nugget_id", pa.string()), ("position", pa.int32()),
    ("text", pa.string()), ("importance", pa.string()), ("provenance", pa.string()),
    ("made_by", pa.string()),
])


@dataclass(frozen=True)
class Edit:
    """One change to a bank, as the history keeps it."""

    seq: int
    bank: str
    query_id: str
    nugget_id: str
    action: str
    text: str | None
    importance: str | None
    position: float | None
    merged_into: str | None
    provenance: str
    made_by: str | None
    made_at: Any
    note: str | None


@dataclass
class _State:
    text: str
    importance: str
    position: float
    provenance: str
    made_by: str | None


# -- reading the bank ------------------------------------------------------------------

def banks(store: Database) -> list[str]:
    """The banks the store holds, by name."""
    return [r[0] for r in store.sql("nugget banks", "SELECT DISTINCT bank FROM nugget_edits "
                                    "ORDER BY bank").fetchall()]


def history(store: Database, bank: str, query_id: str | None = None) -> list[Edit]:
    """Every edit of `bank` (of one topic), oldest first."""
    where, params = "WHERE bank = ?", [bank]
    if query_id is not None:
        where, params = where + " AND query_id = ?", [*params, query_id]
    rows = store.sql("nugget history", "SELECT seq, bank, query_id, nugget_id, action, text, "
                     "importance, position, merged_into, provenance, made_by, made_at, note "
                     f"FROM nugget_edits {where} ORDER BY seq", params).fetchall()
    return [Edit(*r) for r in rows]


def _fold(edits: Iterable[Edit]) -> dict[str, dict[str, _State]]:
    """query_id -> nugget_id -> state, the bank as its edits leave it."""
    topics: dict[str, dict[str, _State]] = {}
    for e in edits:
        nuggets = topics.setdefault(e.query_id, {})
        if e.action == "add":
            nuggets[e.nugget_id] = _State(e.text or "", e.importance or "okay",
                                          e.position or 0.0, e.provenance, e.made_by)
        elif e.nugget_id not in nuggets:
            continue
        elif e.action == "reword":
            nuggets[e.nugget_id].text = e.text or ""
        elif e.action == "grade":
            nuggets[e.nugget_id].importance = e.importance or "okay"
        elif e.action == "move":
            nuggets[e.nugget_id].position = e.position or 0.0
        elif e.action in ("merge", "delete"):
            del nuggets[e.nugget_id]
    return topics


def _ordered(nuggets: Mapping[str, _State]) -> list[tuple[str, _State]]:
    return sorted(nuggets.items(), key=lambda kv: (IMPORTANCE.index(kv[1].importance)
                                                   if kv[1].importance in IMPORTANCE else 2,
                                                   kv[1].position, _id_order(kv[0])))


def _id_order(nugget_id: str) -> tuple[int, str]:
    return (int(nugget_id), "") if nugget_id.isdigit() else (1 << 62, nugget_id)


def current_nuggets(store: Database, bank: str, query_id: str | None = None) -> pa.Table:
    """The bank as it is now (CURRENT_SCHEMA), each topic's nuggets in their order."""
    require_bank(store, bank)
    rows = []
    for q, nuggets in sorted(_fold(history(store, bank, query_id)).items()):
        for position, (nugget_id, s) in enumerate(_ordered(nuggets)):
            rows.append({"query_id": q, "nugget_id": nugget_id, "position": position,
                         "text": s.text, "importance": s.importance, "provenance": s.provenance,
                         "made_by": s.made_by})
    return pa.Table.from_pylist(rows, schema=CURRENT_SCHEMA)


def live_nuggets(store: Database, bank: str) -> dict[str, list[str]]:
    """Each topic's live nugget ids in `bank` (a topic whose nuggets were all merged or
    deleted has none; {} for a bank not made yet)."""
    return {q: list(nuggets) for q, nuggets in _fold(history(store, bank)).items()}


def require_bank(store: Database, bank: str) -> None:
    if not store.one("find bank", "SELECT 1 FROM nugget_edits WHERE bank = ? LIMIT 1", [bank]):
        known = banks(store)
        raise StoreError(f"no nugget bank {bank!r} in {store.path}; the store holds "
                         f"{', '.join(map(repr, known)) or 'none'} (make one with `pooling "
                         "nuggets import` or `pooling nuggets add`)")


# -- editing ---------------------------------------------------------------------------

def _append(store: Database, rows: list[dict[str, Any]]) -> None:
    table = pa.Table.from_pylist(rows, schema=pa.schema([
        ("bank", pa.string()), ("query_id", pa.string()), ("nugget_id", pa.string()),
        ("action", pa.string()), ("text", pa.string()), ("importance", pa.string()),
        ("position", pa.float64()), ("merged_into", pa.string()), ("provenance", pa.string()),
        ("made_by", pa.string()), ("made_at", pa.timestamp("us")), ("note", pa.string())]))
    store.insert_arrow("record nugget edits", "nugget_edits", table)


def _edit(bank: str, query_id: str, nugget_id: str, action: str, made_by: str | None,
          provenance: str, **fields: Any) -> dict[str, Any]:
    row = {"bank": bank, "query_id": query_id, "nugget_id": nugget_id, "action": action,
           "text": None, "importance": None, "position": None, "merged_into": None,
           "provenance": provenance, "made_by": made_by, "made_at": utcnow(), "note": None}
    row.update(fields)
    return row


def _check_importance(importance: str) -> str:
    if importance not in IMPORTANCE:
        raise StoreError(f"importance {importance!r} is not one of {', '.join(IMPORTANCE)}")
    return importance


def _check_text(text: str) -> str:
    if not text or not text.strip():
        raise StoreError("a nugget's text is empty; write what the answer should say")
    return text.strip()


def _check_provenance(provenance: str) -> str:
    if provenance not in PROVENANCE:
        raise StoreError(f"provenance {provenance!r} is not one of {', '.join(PROVENANCE)}")
    return provenance


def _topic_state(store: Database, bank: str, query_id: str) -> dict[str, _State]:
    return _fold(history(store, bank, query_id)).get(query_id, {})


def _next_id(store: Database, bank: str, query_id: str) -> int:
    row = store.one("last nugget id", "SELECT max(TRY_CAST(nugget_id AS BIGINT)) FROM "
                    "nugget_edits WHERE bank = ? AND query_id = ?", [bank, query_id])
    return int(row[0] or 0) + 1


def _live(state: Mapping[str, _State], bank: str, query_id: str, nugget_id: str) -> _State:
    if nugget_id not in state:
        ids = [n for n, _ in _ordered(state)]
        shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "") or "none"
        raise StoreError(f"bank {bank!r} topic {query_id!r} has no nugget {nugget_id!r} (it has "
                         f"{shown}; a merged or deleted nugget stays in the history only)")
    return state[nugget_id]


def add_nugget(store: Database, bank: str, query_id: str, text: str, importance: str = "okay",
               *, made_by: str | None = None, provenance: str = "person",
               note: str | None = None) -> str:
    """Add a nugget to a topic of `bank` (made if new), last among its importance; its id."""
    check_id(bank, "bank name", names_file=True)
    check_id(query_id, "topic id")
    text, importance = _check_text(text), _check_importance(importance)
    _check_provenance(provenance)
    with store.transaction():
        state = _topic_state(store, bank, query_id)
        position = max((s.position for s in state.values()), default=0.0) + 1.0
        nugget_id = str(_next_id(store, bank, query_id))
        _append(store, [_edit(bank, query_id, nugget_id, "add", made_by, provenance, text=text,
                              importance=importance, position=position, note=note)])
    return nugget_id


def reword_nugget(store: Database, bank: str, query_id: str, nugget_id: str, text: str, *,
                  made_by: str | None = None, provenance: str = "person",
                  note: str | None = None) -> None:
    """Give a nugget new text (its id, importance and place stay)."""
    text = _check_text(text)
    with store.transaction():
        if _live(_topic_state(store, bank, query_id), bank, query_id, nugget_id).text == text:
            return
        _append(store, [_edit(bank, query_id, nugget_id, "reword", made_by,
                              _check_provenance(provenance), text=text, note=note)])


def grade_nugget(store: Database, bank: str, query_id: str, nugget_id: str, importance: str, *,
                 made_by: str | None = None, provenance: str = "person",
                 note: str | None = None) -> None:
    """Set a nugget's importance (vital or okay)."""
    importance = _check_importance(importance)
    with store.transaction():
        if _live(_topic_state(store, bank, query_id), bank, query_id, nugget_id).importance == importance:
            return
        _append(store, [_edit(bank, query_id, nugget_id, "grade", made_by,
                              _check_provenance(provenance), importance=importance, note=note)])


def merge_nuggets(store: Database, bank: str, query_id: str, nugget_id: str, into: str, *,
                  text: str | None = None, made_by: str | None = None,
                  provenance: str = "person", note: str | None = None) -> None:
    """Fold `nugget_id` into `into` (which may take new `text`); the folded one leaves the list."""
    if nugget_id == into:
        raise StoreError(f"nugget {nugget_id!r} cannot be merged into itself")
    _check_provenance(provenance)
    with store.transaction():
        state = _topic_state(store, bank, query_id)
        _live(state, bank, query_id, nugget_id)
        target = _live(state, bank, query_id, into)
        rows = [_edit(bank, query_id, nugget_id, "merge", made_by, provenance, merged_into=into,
                      note=note)]
        if text is not None and _check_text(text) != target.text:
            rows.append(_edit(bank, query_id, into, "reword", made_by, provenance,
                              text=_check_text(text), note=note))
        _append(store, rows)


def delete_nugget(store: Database, bank: str, query_id: str, nugget_id: str, *,
                  made_by: str | None = None, provenance: str = "person",
                  note: str | None = None) -> None:
    """Take a nugget off the list (its edits stay in the history)."""
    with store.transaction():
        _live(_topic_state(store, bank, query_id), bank, query_id, nugget_id)
        _append(store, [_edit(bank, query_id, nugget_id, "delete", made_by,
                              _check_provenance(provenance), note=note)])


def move_nugget(store: Database, bank: str, query_id: str, nugget_id: str, before: str | None, *,
                made_by: str | None = None, provenance: str = "person") -> None:
    """Place a nugget just before `before` (None: last) within its importance."""
    with store.transaction():
        state = _topic_state(store, bank, query_id)
        moving = _live(state, bank, query_id, nugget_id)
        same = [(n, s) for n, s in _ordered(state) if s.importance == moving.importance and n != nugget_id]
        if before is None:
            position = (same[-1][1].position + 1.0) if same else moving.position
        else:
            target = _live(state, bank, query_id, before)
            if target.importance != moving.importance:
                raise StoreError(f"nugget {before!r} is {target.importance} and {nugget_id!r} is "
                                 f"{moving.importance}: nuggets are ordered within their importance; "
                                 "grade it first")
            index = [n for n, _ in same].index(before)
            lower = same[index - 1][1].position if index > 0 else target.position - 1.0
            position = (lower + target.position) / 2
        _append(store, [_edit(bank, query_id, nugget_id, "move", made_by,
                              _check_provenance(provenance), position=position)])


# -- versions --------------------------------------------------------------------------

def nugget_versions(store: Database, bank: str | None = None) -> list[tuple]:
    """(name, bank, created_at, method, source, n_nuggets, n_topics) of each version."""
    where, params = ("WHERE bank = ?", [bank]) if bank else ("", [])
    return store.sql("nugget versions", "SELECT name, bank, created_at, method, source, "
                     f"n_nuggets, n_topics FROM nugget_versions {where} ORDER BY created_at, name",
                     params).fetchall()


def freeze(store: Database, bank: str, name: str | None = None, *, method: str = "freeze",
           source: str | None = None, sha256: str | None = None,
           topics: Iterable[str] = (), params: Mapping[str, Any] | None = None) -> str:
    """Snapshot `bank` as version `name` (default `BANK-vN`); an unchanged bank gives back its
    latest version. `topics`: topics of the version that have no nugget (kept, as are the
    previous version's, so an answer to one counts as 0)."""
    require_bank(store, bank)
    with store.transaction():
        last = store.one("last edit", "SELECT max(seq) FROM nugget_edits WHERE bank = ?", [bank])[0]
        latest = store.one("latest version", "SELECT name, last_seq FROM nugget_versions WHERE "
                           "bank = ? ORDER BY created_at DESC, last_seq DESC LIMIT 1", [bank])
        if latest is not None and latest[1] == last and name in (None, latest[0]):
            return latest[0]
        if name is None:
            count = store.one("count versions", "SELECT count(*) FROM nugget_versions WHERE bank = ?",
                              [bank])[0]
            name = f"{bank}-v{count + 1}"
        check_id(name, "version name", names_file=True)
        if store.one("find version", "SELECT 1 FROM nugget_versions WHERE name = ?", [name]):
            raise StoreError(f"nugget version {name!r} exists already; versions never change: "
                             "give another name")
        current = current_nuggets(store, bank)
        with_nuggets = set(current.column("query_id").to_pylist())
        known = set(topics) | (set(version_topics(store, latest[0])) if latest else set())
        empty = sorted(known - with_nuggets)
        rows = current.append_column("version", pa.array([name] * current.num_rows, pa.string()))
        store.insert_arrow("freeze nuggets", "nuggets", rows)
        store.sql("record nugget version", "INSERT INTO nugget_versions VALUES (?, ?, ?, ?, ?, ?, "
                  "?, ?, ?, ?)", [name, bank, utcnow(), method, source, sha256, last,
                                  current.num_rows, len(with_nuggets) + len(empty),
                                  json.dumps({**(params or {}), "empty_topics": empty})])
    return name


def version_nuggets(store: Database, version: str) -> pa.Table:
    """A version's nuggets (CURRENT_SCHEMA), each topic's in their order."""
    require_version(store, version)
    return store.arrow("version nuggets", "SELECT query_id, nugget_id, position, text, importance, "
                       "provenance, made_by FROM nuggets WHERE version = ? ORDER BY query_id, "
                       "position", [version]).cast(CURRENT_SCHEMA)


def version_topics(store: Database, version: str) -> list[str]:
    """Every topic of a version, those it gives no nugget included."""
    require_version(store, version)
    params = store.one("version params", "SELECT params FROM nugget_versions WHERE name = ?",
                       [version])[0]
    empty = json.loads(params).get("empty_topics", []) if params else []
    rows = store.sql("version topics", "SELECT DISTINCT query_id FROM nuggets WHERE version = ?",
                     [version]).fetchall()
    return sorted({r[0] for r in rows} | set(empty))


def require_version(store: Database, version: str) -> None:
    if not store.one("find version", "SELECT 1 FROM nugget_versions WHERE name = ?", [version]):
        known = [v[0] for v in nugget_versions(store)]
        raise StoreError(f"no nugget version {version!r} in {store.path}; the store holds "
                         f"{', '.join(map(repr, known[:10])) or 'none'}")


# -- files -----------------------------------------------------------------------------

@dataclass
class NuggetImport:
    """What `import_nuggets` did."""

    bank: str
    version: str
    n_nuggets: int
    n_topics: int
    n_vital: int
    status: str = "imported"  # or "already imported"


def import_nuggets(store: Database, path: str | Path, bank: str, *, format: str | None = None,
                   version: str | None = None, vital_from: int = IKAT_DEFAULT_VITAL,
                   replace: bool = False) -> NuggetImport:
    """Import a nugget file into `bank` and freeze it as a version, all or nothing.

    `format`: nuggetizer (JSONL, default for .jsonl) or ikat (its JSON; importance from each
    nugget's passage grade, vital from `vital_from`). A topic the bank already has nuggets
    for is refused, unless `replace`: its nuggets are then deleted first (recorded)."""
    check_id(bank, "bank name", names_file=True)
    fmt = format or ("ikat" if str(path).endswith(".json") else "nuggetizer")
    if fmt not in NUGGET_FORMATS:
        raise StoreError(f"unknown nugget format {fmt!r}; use one of {', '.join(NUGGET_FORMATS)}")
    source = display_name(path)
    sha = sha256_file(path)
    done = store.one("find nugget import", "SELECT name, n_nuggets, n_topics FROM nugget_versions "
                     "WHERE sha256 = ? AND bank = ?", [sha, bank])
    if done is not None:
        return NuggetImport(bank, done[0], done[1], done[2], 0, "already imported")
    read = read_ikat_nuggets(path, vital_from) if fmt == "ikat" else read_nuggets(path)
    table, topics = read.nuggets, read.topics
    with store.transaction():
        state = live_nuggets(store, bank)
        taken = sorted(q for q in topics if state.get(q))
        rows = []
        if taken and not replace:
            raise StoreError(f"bank {bank!r} has nuggets already for {len(taken)} topic(s) of "
                             f"{source} ({', '.join(map(repr, taken[:5]))}); import into another "
                             "bank, or pass --replace to replace them (recorded in the history)")
        for q in taken:
            rows += [_edit(bank, q, n, "delete", source, "imported", note="replaced by an import")
                     for n in state[q]]
        next_ids: dict[str, int] = {}
        for r in table.to_pylist():
            q = r["query_id"]
            if q not in next_ids:
                next_ids[q] = _next_id(store, bank, q) if q in state else 1
            rows.append(_edit(bank, q, str(next_ids[q]), "add", source, "imported", text=r["text"],
                              importance=r["importance"], position=float(r["position"] + 1),
                              note=None if r["grade"] is None else f"passage grade {r['grade']}"))
            next_ids[q] += 1
        if not rows:
            raise StoreError(f"{source} holds no nugget")
        _append(store, rows)
        params = {"format": fmt, **({"vital_from": vital_from} if fmt == "ikat" else {})}
        name = freeze(store, bank, version, method=f"import {fmt}", source=source, sha256=sha,
                      topics=topics, params=params)
    vital = sum(1 for i in table.column("importance").to_pylist() if i == "vital")
    return NuggetImport(bank, name, table.num_rows, len(topics), vital)


def export_nuggets(store: Database, version: str, out: io.TextIOBase | None = None) -> str:
    """A version as nuggetizer's nuggets JSONL (qid, query, nuggets), topics in id order;
    returns the text when `out` is None."""
    table = version_nuggets(store, version)
    titles = dict(store.sql("topic titles", "SELECT query_id, title FROM topics").fetchall())
    buffer = out if out is not None else io.StringIO()
    write_nuggets(buffer, table, titles)
    return buffer.getvalue() if out is None else ""
