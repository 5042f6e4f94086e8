"""Fixing stored runs in place: remove, replace and rename, each recorded.

A campaign finds a run imported under the wrong name, with topic ids written another way, or
from the wrong file; the fix must not cost a new store. Each change is one transaction that
appends a row to `run_changes` (the action, the run before and after, the old content's
checksum, source and size, who did it, when and why) and drops the values cached for the
run (`eval_results`). Qrels versions and judgments are never touched: they are about topics
and documents, not about the runs that brought them.

A run that was pooled (it built a round's pool, or is marked pooled) is refused without
`force`: the pool and the judgments made from it stay as they are, so the collection's
record would then say it was built from a run that is no longer there, or no longer the
same. With `force` the change is made and the rounds that pooled the run are named in the
record; a rename also renames the run in those rounds, so they keep finding it.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pooling.errors import StoreError
from pooling.formats.ids import id_problem
from pooling.formats.run_files import RunMeta
from pooling.formats.topic_map import TopicMap
from pooling.formats.trec_run import Dedupe
from pooling.store.database import Database, utcnow
from pooling.store.runs import ImportReport, import_runs
from pooling.terminal.progress import Progress

REMOVE, REPLACE, RENAME = "remove", "replace", "rename"


class PooledRunError(StoreError):
    """A change to a pooled run asked without `force`."""


@dataclass(frozen=True)
class RunChange:
    """One recorded change to a run (a row of `run_changes`)."""

    run_id: str
    action: str  # remove | replace | rename
    new_run_id: str | None  # a rename's new name; the same run_id for a replacement
    old_sha256: str | None
    old_source: str | None
    old_rows: int
    new_sha256: str | None
    new_source: str | None
    pooled_in: tuple[str, ...]  # the rounds that pooled the run when it changed
    forced: bool
    reason: str | None
    changed_by: str | None
    changed_at: datetime


def remove_run(store: Database, run_id: str, *, force: bool = False, by: str | None = None,
               reason: str | None = None) -> RunChange:
    """Remove a run and its cached evaluation values; recorded (module docstring)."""
    with store.transaction():
        old, pooled_in = _check(store, run_id, force, "remove")
        _drop(store, run_id)
        return _record(store, REMOVE, run_id, old, pooled_in, force, by, reason)


def replace_run(
    store: Database,
    run_id: str,
    file: str | Path,
    *,
    force: bool = False,
    by: str | None = None,
    reason: str | None = None,
    meta: RunMeta | None = None,
    dedupe: Dedupe = "error",
    topic_map: TopicMap | None = None,
    strict: bool = False,
    allow_copy: bool = False,
    progress: Progress | None = None,
) -> tuple[RunChange, ImportReport]:
    """Put the run in `file` in place of run `run_id`, under the same run_id: read as
    `import_runs` reads it (dedupe, topic map, strict), keeping the old run's team,
    description and pooled flag unless `meta` gives them. All or nothing: a file that cannot
    be imported leaves the old run as it was. Recorded (module docstring)."""
    with store.transaction():
        old, pooled_in = _check(store, run_id, force, "replace")
        _drop(store, run_id)
        report = import_runs(store, [file], name=run_id, dedupe=dedupe, strict=strict,
                             topic_map=topic_map, allow_copy=allow_copy, progress=progress)
        kept = RunMeta(team=old.team, description=old.description, pooled=old.pooled)
        given = meta or RunMeta()
        store.sql(
            "keep the run's description",
            "UPDATE runs SET team = ?, description = ?, pooled = ? WHERE run_id = ?",
            [given.team if given.team is not None else kept.team,
             given.description if given.description is not None else kept.description,
             given.pooled if given.pooled is not None else kept.pooled, run_id])
        new = store.one("the new run", "SELECT sha256, source FROM runs WHERE run_id = ?",
                        [run_id])
        change = _record(store, REPLACE, run_id, old, pooled_in, force, by, reason,
                         new_run_id=run_id, new_sha256=new[0], new_source=new[1])
        return change, report


def rename_run(store: Database, run_id: str, new_run_id: str, *, force: bool = False,
               by: str | None = None, reason: str | None = None) -> RunChange:
    """Give run `run_id` the name `new_run_id`: its rows, the imports ledger and, with
    `force`, the rounds that pooled it follow; its cached values are dropped (they are
    filed under the old name). Recorded (module docstring)."""
    why = id_problem(new_run_id, "the run's new name", names_file=True)  # the rule of imports
    if why is not None:
        raise StoreError(why)
    with store.transaction():
        old, pooled_in = _check(store, run_id, force, "rename")
        if new_run_id == run_id:
            raise StoreError(f"run {run_id!r} has that name already; give another run_id")
        if store.has_run(new_run_id):
            raise StoreError(f"run {new_run_id!r} exists already in {store.path}; remove it or "
                             "give another run_id")
        store.sql("drop cached values", "DELETE FROM eval_results WHERE run_id = ?", [run_id])
        for table in ("runs", "run_results"):
            store.sql(f"rename in {table}", f"UPDATE {table} SET run_id = ? WHERE run_id = ?",
                      [new_run_id, run_id])
        _rename_in_ledger(store, run_id, new_run_id)
        for round_id, runs in store.sql(
                "rounds that pooled it",
                "SELECT round_id, pooled_runs FROM rounds WHERE list_contains(pooled_runs, ?)",
                [run_id]).fetchall():
            store.sql("rename in a round that pooled it",
                      "UPDATE rounds SET pooled_runs = ? WHERE round_id = ?",
                      [[new_run_id if r == run_id else r for r in runs], round_id])
        return _record(store, RENAME, run_id, old, pooled_in, force, by, reason,
                       new_run_id=new_run_id)


def run_changes(store: Database, run_id: str | None = None) -> list[RunChange]:
    """The recorded changes, oldest first; with `run_id`, those of the run known by that name
    now, under each name it had (followed back through its renames)."""
    rows = store.sql(
        "list run changes",
        "SELECT run_id, action, new_run_id, old_sha256, old_source, old_rows, new_sha256, "
        "new_source, pooled_in, forced, reason, changed_by, changed_at FROM run_changes "
        "ORDER BY seq").fetchall()
    changes = [RunChange(*r[:8], tuple(r[8] or ()), *r[9:]) for r in rows]
    if run_id is None:
        return changes
    names, kept = {run_id}, []
    for change in reversed(changes):
        if change.run_id in names or change.new_run_id in names:
            kept.append(change)
            if change.action == RENAME and change.new_run_id in names:
                names.add(change.run_id)
    return kept[::-1]


def pooled_in(store: Database, run_id: str) -> list[str]:
    """The rounds whose pool the run helped build, in the order they were made."""
    return [r[0] for r in store.sql(
        "rounds that pooled the run",
        "SELECT round_id FROM rounds WHERE list_contains(pooled_runs, ?) "
        "ORDER BY created_at, round_id", [run_id]).fetchall()]


@dataclass(frozen=True)
class _Old:
    sha256: str | None
    source: str | None
    rows: int
    team: str | None
    description: str | None
    pooled: bool | None


def _check(store: Database, run_id: str, force: bool, verb: str) -> tuple[_Old, list[str]]:
    """The run as it is and the rounds that pooled it; a pooled run without `force` refused."""
    store.require_run(run_id)
    row = store.one("the run", "SELECT sha256, source, n_rows, team, description, pooled "
                    "FROM runs WHERE run_id = ?", [run_id])
    old = _Old(*row)
    rounds = pooled_in(store, run_id)
    if (rounds or old.pooled) and not force:
        why = (f"it built the pool of round(s) {', '.join(rounds)}" if rounds else
               "it is marked pooled")
        raise PooledRunError(
            f"run {run_id!r} was pooled ({why}): its pool and the judgments made from it stay "
            f"as they are whatever is done to the run. To {verb} it all the same, pass --force "
            "(the change is recorded with the rounds that pooled it)")
    return old, rounds


def _drop(store: Database, run_id: str) -> None:
    """The run's rows, its row in `runs` and the values cached for it."""
    for step, table in (("drop cached values", "eval_results"), ("drop the rows", "run_results"),
                        ("drop the run", "runs")):
        store.sql(step, f"DELETE FROM {table} WHERE run_id = ?", [run_id])


def _rename_in_ledger(store: Database, run_id: str, new_run_id: str) -> None:
    """The imports that made the run name it by its new name, so its file is still
    recognised as imported (`pooling.store.imports.live_run_imports`)."""
    rows = store.sql(
        "imports that made the run",
        "SELECT rowid, target FROM imports WHERE kind = 'run' "
        "AND list_contains(string_split(target, ','), ?)", [run_id]).fetchall()
    for rowid, target in rows:
        renamed = ",".join(new_run_id if t == run_id else t for t in target.split(","))
        store.sql("rename in the imports ledger", "UPDATE imports SET target = ? WHERE rowid = ?",
                  [renamed, rowid])


def _record(store: Database, action: str, run_id: str, old: _Old, rounds: list[str],
            forced: bool, by: str | None, reason: str | None, *, new_run_id: str | None = None,
            new_sha256: str | None = None, new_source: str | None = None) -> RunChange:
    change = RunChange(run_id, action, new_run_id, old.sha256, old.source, old.rows, new_sha256,
                       new_source, tuple(rounds), forced, reason, by or getpass.getuser(),
                       utcnow())
    store.sql(
        "record the change",
        "INSERT INTO run_changes (run_id, action, new_run_id, old_sha256, old_source, old_rows, "
        "new_sha256, new_source, pooled_in, forced, reason, changed_by, changed_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [change.run_id, change.action, change.new_run_id, change.old_sha256, change.old_source,
         change.old_rows, change.new_sha256, change.new_source, list(rounds), forced, reason,
         change.changed_by, change.changed_at])
    return change
