"""What an organiser session's SQL changed, so the judging pages' memory is dropped only when
it must be: once, after a commit, and only for tables the pages read (and, of those, only
what the tables written hold: `pooling.web.live.LiveCampaign.refresh`).

The judging pages answer from memory (`pooling.web.live`). A CLI command on a served store
writes through its own session (`pooling.web.store_api`); its changes become visible when its
transaction commits, so that is when the pages' memory must be dropped, and only if the
transaction wrote a table the pages read. A long job that commits every few seconds to tables
the pages never read (the answers of an automatic judge, evaluation results, imported runs)
then leaves the assessors' pages fast. A statement whose target cannot be told counts as
writing everything, so a mistake here can only cost speed, never show a stale page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import duckdb

# Tables the pages' memory never holds (see pooling.web.live): writes to them need no reload. Everything else, and anything unrecognised, does.
UNREAD_BY_PAGES = frozenset({
    "runs", "run_results", "imports", "qrels", "qrels_versions", "topic_subsets", "eval_results",
    "judge_calls", "store_meta", "subtopic_qrels", "run_changes",
})
EVERYTHING = None  # the tables of a statement whose target cannot be told

_NAME = r'("[^"]+"|[\w.]+)'
# The target of a writing statement, by its type (string literals are blanked first, so a
# value that looks like SQL is never read as a target).
_TARGETS = {
    duckdb.StatementType.INSERT: re.compile(r"\bINSERT\s+(?:OR\s+\w+\s+)?INTO\s+" + _NAME, re.I),
    duckdb.StatementType.UPDATE: re.compile(r"\bUPDATE\s+" + _NAME, re.I),
    duckdb.StatementType.DELETE: re.compile(r"\bDELETE\s+FROM\s+" + _NAME, re.I),
    duckdb.StatementType.ALTER: re.compile(r"^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?" + _NAME, re.I),
    duckdb.StatementType.DROP: re.compile(r"^\s*DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?" + _NAME, re.I),
    duckdb.StatementType.CREATE: re.compile(
        r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?" + _NAME, re.I),
    duckdb.StatementType.COPY: re.compile(r"^\s*COPY\s+" + _NAME + r"\s+FROM\b", re.I),
}
_SESSION_LOCAL = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP|TEMPORARY)\s", re.I)
_EXPORT = re.compile(r"^\s*COPY\s+(?:\(|[\w.\"]+\s+TO\b)", re.I)  # COPY … TO a file
_STRING = re.compile(r"'(?:[^']|'')*'")
_COMMENT = re.compile(r"/\*.*?\*/|--[^\n]*", re.S)
_HARMLESS = {
    duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN, duckdb.StatementType.PRAGMA,
    duckdb.StatementType.SET, duckdb.StatementType.VARIABLE_SET, duckdb.StatementType.CALL,
    duckdb.StatementType.PREPARE, duckdb.StatementType.ANALYZE,
}


def _parsed(statement: str) -> list | None:
    try:
        return duckdb.extract_statements(statement)
    except duckdb.Error:
        return None  # it will fail to run anyway; count it as writing everything


def _bare(text: str) -> str:
    """The statement without comments and with string literals blanked."""
    return _STRING.sub("''", _COMMENT.sub(" ", text))


def _target(item) -> frozenset[str] | None:
    """The store table one parsed statement writes (empty: none), or None when unknown."""
    if item.type in _HARMLESS or item.type == duckdb.StatementType.TRANSACTION:
        return frozenset()
    text = _bare(item.query)
    if _SESSION_LOCAL.match(text) or (item.type == duckdb.StatementType.COPY and _EXPORT.match(text)):
        return frozenset()  # a temporary table lives in the session; an export writes a file
    pattern = _TARGETS.get(item.type)
    found = pattern.search(text) if pattern is not None else None
    if found is None:
        return EVERYTHING
    return frozenset({found.group(1).strip('"').split(".")[-1].lower()})


def tables_written(statement: str) -> frozenset[str] | None:
    """The store tables one SQL text writes (empty: none), or None when it cannot tell."""
    items = _parsed(statement)
    if items is None:
        return EVERYTHING
    tables: set[str] = set()
    for item in items:
        target = _target(item)
        if target is EVERYTHING:
            return EVERYTHING
        tables |= target
    return frozenset(tables)


def transaction_verb(statement: str) -> str | None:
    """'begin', 'commit' or 'rollback' for a transaction statement, else None."""
    words = _bare(statement).strip().split(None, 1)
    word = words[0].upper().rstrip(";") if words else ""
    if word in ("BEGIN", "START"):
        return "begin"
    if word in ("COMMIT", "END"):
        return "commit"
    if word in ("ROLLBACK", "ABORT"):
        return "rollback"
    return None


@dataclass
class SessionWrites:
    """One session's uncommitted writes; `ran` says after a statement succeeded which tables
    the judging pages read it has made visible changes to."""

    in_transaction: bool = False
    pending: set[str] = field(default_factory=set)
    pending_everything: bool = False

    def ran(self, statement: str) -> frozenset[str] | None:
        """Account for SQL that ran (one statement or several): the tables read by the pages
        it changed visibly (committed), empty when none, None when it cannot tell which."""
        items = _parsed(statement)
        if items is None:
            self.pending_everything = True
            return self._flush_unless_in_transaction()
        stale: frozenset[str] | None = frozenset()
        for item in items:
            if item.type == duckdb.StatementType.TRANSACTION:
                verb = transaction_verb(item.query)
                if verb == "begin":
                    self.in_transaction = True
                elif verb == "commit":
                    stale = _union(stale, self._stale())
                    self.discard()
                elif verb == "rollback":
                    self.discard()
                continue
            target = _target(item)
            if target is EVERYTHING:
                self.pending_everything = True
            else:
                self.pending |= target
            stale = _union(stale, self._flush_unless_in_transaction())
        return stale

    def failed(self, statement: str) -> None:
        """SQL that raised: a failed COMMIT or ROLLBACK ends the transaction (DuckDB rolls it
        back), so what it held is forgotten."""
        items = _parsed(statement) or []
        if any(transaction_verb(i.query) in ("commit", "rollback") for i in items
               if i.type == duckdb.StatementType.TRANSACTION):
            self.discard()

    def discard(self) -> None:
        """Forget the pending writes (rolled back, or the transaction ended)."""
        self.in_transaction = False
        self.pending.clear()
        self.pending_everything = False

    def _flush_unless_in_transaction(self) -> frozenset[str] | None:
        if self.in_transaction:
            return frozenset()
        stale = self._stale()  # autocommit: visible now
        self.discard()
        return stale

    def _stale(self) -> frozenset[str] | None:
        return EVERYTHING if self.pending_everything else frozenset(self.pending - UNREAD_BY_PAGES)


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """Tables changed by both (None: which cannot be told)."""
    return EVERYTHING if a is EVERYTHING or b is EVERYTHING else a | b
