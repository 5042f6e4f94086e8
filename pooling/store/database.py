"""The database under the Store: one DuckDB file per collection, one connection, one
transaction per write.

Everything that touches the file goes through `Database`: opening (with a plain message when
another process holds the file), schema upgrades, transactions, and named SQL steps whose
failures are re-raised with the step's name attached.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from pooling.errors import SchemaError, StoreError, StoreLockedError
from pooling.store import faults
from pooling.store.schema import DATA_TABLES, MIGRATIONS, SCHEMA_VERSION

SERVER_FILE_SUFFIX = ".server.json"


def utcnow() -> datetime:
    """Timestamps are stored as naive UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


class Database:
    """The DuckDB file of a test collection: its one connection, transactions, schema version
    and named SQL steps, and the reads every part of the store needs (runs, qrels versions).

    The modules that import into the store (`runs`, `qrels`, `texts`, `ir_datasets`) take a
    Database; `pooling.store.core.Store` adds the import and export entry points on top.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, read_only: bool = False, create: bool = False,
        token: str | None = None, local: bool = False,
    ):
        """Open (or with `create`, make) a store. While `pooling serve` holds the file, the
        store is reached through the server with an organiser `token` (default: $POOLING_TOKEN
        or the server's token file; see `pooling.store.remote`); `local=True` refuses that."""
        self.path = Path(path)
        if not create and not self.path.exists():
            raise StoreError(
                f"no store at {self.path}; create one with `pooling init {self.path}`"
            )
        if create and self.path.exists():
            raise StoreError(f"{self.path} already exists; open it instead of creating it")
        self.read_only = read_only
        self.remote = False
        try:
            self.con = _connect(self.path, read_only=read_only)
        except StoreLockedError:
            server = None if local else server_info(self.path)
            if server is None:
                raise
            from pooling.store.remote import connect

            self.con = connect(self.path, server, token)  # type: ignore[assignment]
            self.remote = True
        self._in_transaction = False
        self._upgrade_schema()

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> Database:
        """Create a new, empty store file."""
        return cls(path, create=True)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema -------------------------------------------------------------------------
    def schema_version(self) -> int:
        exists = self.one(  # duckdb_tables(): a tenth of information_schema's time
            "schema", "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'store_meta'"
        )
        if not exists or exists[0] == 0:
            return 0
        row = self.one(
            "schema",
            "SELECT value FROM store_meta WHERE key = 'schema_version'"
        )
        return int(row[0]) if row else 0

    def _upgrade_schema(self) -> None:
        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"{self.path} has schema version {version}, newer than this pooling "
                f"understands ({SCHEMA_VERSION}); upgrade pooling to open it"
            )
        if version == SCHEMA_VERSION:
            return
        if self.remote:
            raise SchemaError(
                f"{self.path} is served by a pooling with schema version {version}, older than "
                f"this one ({SCHEMA_VERSION}); restart the server with this pooling"
            )
        if self.read_only:
            # Upgrade through a short read-write connection, then carry on read-only.
            self.con.close()
            Database(self.path).close()
            self.con = _connect(self.path, read_only=True)
            return
        with self.transaction():
            for step in range(version, SCHEMA_VERSION):
                for ddl in MIGRATIONS[step]:
                    self.con.execute(ddl)
            self.con.execute(
                "INSERT OR REPLACE INTO store_meta VALUES ('schema_version', ?)",
                [str(SCHEMA_VERSION)],
            )
            if version == 0:
                self.con.execute(
                    "INSERT OR REPLACE INTO store_meta VALUES ('created_at', ?)",
                    [utcnow().isoformat(timespec="seconds")],
                )

    # -- transactions and SQL ---------------------------------------------------------
    @property
    def in_transaction(self) -> bool:
        """Whether a `transaction()` block is open on this store."""
        return self._in_transaction

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One atomic write: everything inside commits together or not at all."""
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only; open it for writing to change it")
        if self._in_transaction:
            yield self.con
            return
        self.con.execute("BEGIN TRANSACTION")
        self._in_transaction = True
        try:
            yield self.con
        except BaseException:
            self._in_transaction = False
            self.con.execute("ROLLBACK")
            raise
        self._in_transaction = False
        faults.before_commit()
        self.con.execute("COMMIT")

    def sql(self, step: str, query: str, params: Sequence[Any] | dict[str, Any] | None = None):
        """Run one named SQL step with bound parameters; failures name the step."""
        try:
            return self.con.execute(query, params or [])
        except duckdb.Error as exc:
            raise StoreError(f"store step '{step}' failed: {exc}") from exc

    def one(self, step: str, query: str, params: Sequence[Any] | None = None) -> tuple | None:
        """First row of a named query (the result is read to its end), or None."""
        rows = self.sql(step, query, params).fetchall()
        return rows[0] if rows else None

    def arrow(self, step: str, query: str, params: Sequence[Any] | None = None) -> pa.Table:
        """Run a named query and return its result as an Arrow table."""
        try:
            return self.con.sql(query, params=params or None).to_arrow_table()
        except duckdb.Error as exc:
            raise StoreError(f"store step '{step}' failed: {exc}") from exc

    def insert_arrow(self, step: str, target: str, rows: pa.Table) -> None:
        """Append an Arrow table to the store table `target`, column by name, in one named
        statement (binding values row by row costs more than the insert itself)."""
        view = "_arrow_rows"
        names = ", ".join(rows.column_names)
        self.con.register(view, rows)
        try:
            self.sql(step, f"INSERT INTO {target} ({names}) SELECT {names} FROM {view}")
        finally:
            self.con.unregister(view)

    def info(self) -> dict[str, Any]:
        """Counts per table, and each run with its topics and rows."""
        counts = {
            t: self.one("count", f'SELECT count(*) FROM "{t}"')[0] for t in DATA_TABLES
        }
        runs = self.arrow(
            "list runs",
            "SELECT run_id, tag, team, n_topics, n_rows, pooled, dedupe, duplicates_dropped, "
            "source FROM runs ORDER BY run_id",
        ).to_pylist()
        qrels = self.arrow(
            "list qrels",
            "SELECT name, method, n_topics, n_rows, grades, created_at FROM qrels_versions "
            "ORDER BY created_at, name",
        ).to_pylist()
        return {
            "path": str(self.path),
            "schema_version": self.schema_version(),
            "counts": counts,
            "runs": runs,
            "qrels_versions": qrels,
            "default_qrels": self.default_qrels(),
        }

    # -- reading --------------------------------------------------------------------------
    def run_ids(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]

    def qrels_versions(self) -> list[str]:
        rows = self.con.execute("SELECT name FROM qrels_versions ORDER BY created_at, name")
        return [r[0] for r in rows.fetchall()]

    def has_run(self, run_id: str) -> bool:
        row = self.one("find run", "SELECT count(*) FROM runs WHERE run_id = ?", [run_id])
        return bool(row and row[0])

    def run_table(self, run_id: str) -> pa.Table:
        """A stored run as (query_id, doc_id, rank, score), in trec_eval order."""
        self.require_run(run_id)
        return self.arrow(
            "read run",
            "SELECT query_id, doc_id, rank, score FROM run_results WHERE run_id = ? "
            "ORDER BY query_id, score DESC, doc_id DESC",
            [run_id],
        )

    def require_run(self, run_id: str) -> None:
        if not self.has_run(run_id):
            known = self.run_ids()
            hint = f"; known runs: {', '.join(known[:10])}" + (" ..." if len(known) > 10 else "")
            raise StoreError(f"no run {run_id!r} in {self.path}{hint if known else ''}")

    def default_qrels(self) -> str | None:
        """The version used when none is named (`pooling qrels default`), None without qrels.

        The first version stored, until changed: deriving a new version never silently
        changes what leaderboards are computed on.
        """
        row = self.one("default qrels", "SELECT value FROM store_meta WHERE key = 'default_qrels'")
        if row:
            return row[0]
        versions = self.qrels_versions()
        return versions[0] if versions else None

    def resolve_qrels(self, version: str | None) -> str:
        """The named qrels version, or the store's default one when no name is given."""
        versions = self.qrels_versions()
        if version is None:
            if not versions:
                raise StoreError(
                    f"{self.path} has no qrels yet; import some with `pooling import qrels`"
                )
            default = self.default_qrels()
            return default if default in versions else versions[0]
        if version not in versions:
            raise StoreError(
                f"no qrels version {version!r} in {self.path}; versions: "
                f"{', '.join(versions) or '(none)'}"
            )
        return version

    def qrels_table(self, version: str | None = None, *, ordered: bool = True) -> pa.Table:
        """A qrels version as (query_id, doc_id, relevance), by topic and doc_id; with
        `ordered=False` in stored order, for the evaluator, which needs no order (sorting
        takes most of the read)."""
        name = self.resolve_qrels(version)
        order = " ORDER BY query_id, doc_id" if ordered else ""
        return self.arrow(
            "read qrels",
            f"SELECT query_id, doc_id, relevance FROM qrels WHERE version = ?{order}",
            [name],
        )

    def qrels_info(self, version: str | None = None) -> dict[str, Any]:
        name = self.resolve_qrels(version)
        cur = self.con.execute("SELECT * FROM qrels_versions WHERE name = ?", [name])
        cols = [d[0] for d in cur.description]
        return dict(zip(cols, cur.fetchall()[0], strict=True))

    def table_digest(self, table: str) -> str:
        """Order-independent content hash of a table (for checks that nothing changed)."""
        if table not in DATA_TABLES:
            raise StoreError(f"unknown table {table!r}")
        cols = [
            r[0]
            for r in self.con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                "ORDER BY ordinal_position",
                [table],
            ).fetchall()
        ]
        row_expr = "hash(" + ", ".join(f'"{c}"' for c in cols) + ")"
        row = self.one(
            "digest",
            f'SELECT count(*), coalesce(sum({row_expr}::HUGEINT), 0), '
            f'coalesce(bit_xor({row_expr}), 0) FROM "{table}"',
        )
        return f"{row[0]}:{row[1]}:{row[2]}"


def _connect(path: Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open the file, turning DuckDB's lock error into a message about who holds the store."""
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        text = str(exc)
        if "lock" in text.lower():
            raise StoreLockedError(describe_lock_holder(path, text)) from exc
        raise StoreError(f"cannot open {path}: {text}") from exc
    except duckdb.Error as exc:
        raise StoreError(f"cannot open {path} as a pooling store: {exc}") from exc


def describe_lock_holder(path: Path, duckdb_message: str) -> str:
    """Say which process holds the store and what to do, instead of DuckDB's lock error."""
    server = server_info(path)
    if server:
        return (
            f"{path} is being served by `pooling serve` (pid {server.get('pid')}, "
            f"{server.get('url')}); one server per store: use that one"
        )
    match = re.search(r"\(PID (\d+)\)", duckdb_message)
    if match:
        pid = int(match.group(1))
        return (
            f"{path} is open in another process (pid {pid}: {_process_command(pid)}); "
            "wait for it to finish or stop it, then try again"
        )
    return f"{path} is locked by another process; wait for it to finish or stop it, then try again"


def server_info(path: Path) -> dict[str, Any] | None:
    """The running server's pid and URL, from the file `pooling serve` writes beside the store."""
    marker = path.with_name(path.name + SERVER_FILE_SUFFIX)
    try:
        info = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    pid = info.get("pid")
    if not isinstance(pid, int) or not Path(f"/proc/{pid}").exists():
        return None
    return info


def _process_command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "unknown command"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip() or "unknown command"
