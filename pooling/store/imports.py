"""The imports ledger: the checksum of every imported file, and the rule for the same content.

The same content again is "already imported": nothing is stored twice, and the command
succeeds. Unless the import names what the file should become (`--name`, or a run_id in a
`--meta` table) and the content was never imported as that: then the name the user asked
for would silently not exist, so the import is refused, naming what holds the content and
where it came from; with `--allow-copy` it is stored again under the new name.

Runs can be removed, replaced and renamed (`pooling.store.run_changes`), so for runs an
earlier import counts only while every run it made still holds its content
(`live_run_imports`): a removed or replaced run's file imports again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pooling.store.database import Database


@dataclass(frozen=True)
class PriorImport:
    """An earlier import of the same content: what it became, from which file, and when."""

    target: str  # a qrels version, a run_id, or run_ids joined by "," (a file split by tag)
    source: str | None
    imported_at: datetime
    details: str | None = None  # JSON: what was done to the input on its way in (a topic map)

    @property
    def targets(self) -> list[str]:
        """What the import made: one name, or a file split by tag's run_ids."""
        return self.target.split(",")

    def made(self, name: str) -> bool:
        """Whether this import made `name`."""
        return name == self.target or name in self.targets


def prior_imports(store: Database, kind: str, sha256: str) -> list[PriorImport]:
    """Earlier imports of content with this checksum (kind: 'run' or 'qrels'), oldest first."""
    rows = store.sql(
        "find imports of the same content",
        "SELECT target, source, imported_at, details FROM imports WHERE sha256 = ? AND kind = ? "
        "ORDER BY imported_at",
        [sha256, kind],
    ).fetchall()
    return [PriorImport(*row) for row in rows]


def live_run_imports(store: Database, sha256: str) -> list[PriorImport]:
    """Earlier imports of run content with this checksum whose runs all still hold it (not
    removed, nor replaced by other content), oldest first."""
    holding = {r[0] for r in store.sql(
        "find runs holding the content", "SELECT run_id FROM runs WHERE sha256 = ?", [sha256]
    ).fetchall()}
    return [p for p in prior_imports(store, "run", sha256) if set(p.targets) <= holding]


def already_imported(prior: list[PriorImport], name: str | None) -> PriorImport | None:
    """The earlier import that makes this one "already imported": any, when no name was asked
    for; else the one that made that name. None: the content is new, or new under `name`."""
    if not prior:
        return None
    if name is None:
        return prior[0]
    return next((p for p in prior if p.made(name)), None)


def same_content_refusal(source: str, what: str, prior: PriorImport, name: str) -> str:
    """The message refusing `source` as `what` `name` (e.g. "run", "qrels version"), whose
    content is already in the store as `prior`."""
    return (f"{source} has the same content as {what} {prior.target!r}, imported from "
            f"{prior.source or '-'} at {prior.imported_at:%Y-%m-%d %H:%M}Z; {what} {name!r} was "
            f"not made: use {what} {prior.target!r}, or pass --allow-copy to store it again "
            f"as {name!r}")
