"""A run file imported again under other reading options: what would change, and the refusal.

The same file with the same options is "already imported" (exit 0). The same file read
otherwise would store something else: topic ids mapped by another `--topic-map` (or by none),
repeated lines that `--dedupe first` dropped refused, another team, description or pooled
flag from `--meta`. An organiser who re-imports means that change; silently keeping the old
run would hide it, and quietly swapping the run would change what was evaluated and pooled
without a record. So the import is refused, naming each difference, and the message says to
replace the run (`pooling runs replace`), which is recorded (`pooling.store.run_changes`).
"""

from __future__ import annotations

import json

from pooling.formats.run_files import RunMeta, RunReading
from pooling.formats.topic_order import in_topic_order
from pooling.store.database import Database
from pooling.store.imports import PriorImport

SHOWN = 3  # mapped ids shown as examples


def changed_options(store: Database, prior: PriorImport, reading: RunReading,
                    meta: RunMeta | None) -> list[str]:
    """What reading the file of `prior` again under `reading` (and its `--meta` row `meta`)
    would store differently from the runs it made; empty when nothing would change."""
    changes: list[str] = []
    mapping = _topic_map_change(store, prior, reading)
    if mapping:
        changes.append(mapping)
    for run_id in prior.targets:
        row = store.one(
            "run as imported",
            "SELECT dedupe, duplicates_dropped, team, description, pooled FROM runs "
            "WHERE run_id = ?", [run_id])
        if row is None:
            continue
        dedupe, dropped, team, description, pooled = row
        if dropped and reading.dedupe == "error":
            changes.append(f"run {run_id!r} was read with --dedupe first ({dropped} repeated "
                           "line(s) dropped); without it the file is refused")
        if meta is not None:
            for name, was, now in (("team", team, meta.team),
                                   ("description", description, meta.description),
                                   ("pooled", pooled, meta.pooled)):
                if now is not None and now != was:
                    changes.append(f"the --meta file gives run {run_id!r} {name} {now!r}, the "
                                   f"stored run has {was!r}")
    return changes


def changed_refusal(store: Database, source: str, prior: PriorImport, changes: list[str]) -> str:
    """The message refusing a file imported before, read now under other options."""
    runs = " and ".join(repr(r) for r in prior.targets)
    replace = (f"`pooling runs replace {store.path} {prior.targets[0]} {source}` with these "
               "options" if len(prior.targets) == 1 else
               "`pooling runs replace` for each of its runs with these options")
    return (f"{source} was imported as run {runs} from {prior.source or '-'} at "
            f"{prior.imported_at:%Y-%m-%d %H:%M}Z under other options: " + "; ".join(changes)
            + f". To store it as read now, replace the run ({replace}: recorded, qrels and "
            "judgments kept); to keep it as it is, import it as before")


def _topic_map_change(store: Database, prior: PriorImport, reading: RunReading) -> str | None:
    """How the topic ids the file's runs were stored under differ from those `reading`'s
    topic map gives them, in one sentence; None when they agree.

    The file's ids as written are the stored ids, with the ones the earlier map changed put
    back (its record keeps the pairs it applied), so the file need not be read again."""
    details = json.loads(prior.details) if prior.details else {}
    recorded = details.get("topic_map") or {}
    applied: dict[str, str] = recorded.get("applied") or {}
    stored = {r[0] for r in store.sql(
        "topics of the runs", "SELECT DISTINCT query_id FROM run_results WHERE run_id IN "
        "(SELECT UNNEST(?::VARCHAR[]))", [prior.targets]).fetchall()}
    written = set(applied) | (stored - set(applied.values()))
    new_map = reading.topic_map.mapping if reading.topic_map is not None else {}
    now = {w: new_map[w] for w in written if w in new_map and new_map[w] != w}
    if now == applied:
        return None
    if not now:
        return (f"it was read with topic map {recorded.get('source', '-')} (which changed "
                f"{len(applied)} topic id(s)); this import maps none")
    shown = ", ".join(f"{w} -> {now[w]}" for w in in_topic_order(now)[:SHOWN])
    given = reading.topic_map.source if reading.topic_map is not None else "-"
    if not applied:
        return (f"it was read without a topic map; --topic-map {given} changes {len(now)} of its "
                f"topic id(s) (e.g. {shown})")
    return (f"it was read with topic map {recorded.get('source', '-')}; --topic-map {given} maps "
            f"its topic ids otherwise (e.g. {shown})")
