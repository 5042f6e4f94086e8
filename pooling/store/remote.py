"""A served store, used from another process: SQL sent to the server that holds the file.

DuckDB lets one process write a file. While `pooling serve` holds a store, every other
`pooling` command and `Store(path)` reach it through the server instead: `RemoteConnection`
stands in for the DuckDB connection (`execute`, `sql`, `fetch*`, `register`), each statement
runs on the caller's own cursor inside the server, and results come back as Arrow streams.
So the server stays the one writer, a CLI write is still one DuckDB transaction (BEGIN ...
COMMIT on that cursor), and a long read runs beside the assessors instead of in front of
them. Only organisers may do this: every request carries an organiser token (see
`organiser_token`). A client that vanishes mid-transaction stops renewing its lease and the
server rolls its transaction back (`pooling.web.store_api`).
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import os
import threading
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import duckdb
import numpy as np
import pyarrow as pa

from pooling.errors import StoreError, SubmissionConflict

TOKEN_FILE_SUFFIX = ".organiser-token"
TOKEN_ENV = "POOLING_TOKEN"
API_PREFIX = "_store"
ARROW_STREAM = "application/vnd.apache.arrow.stream"
LEASE_SECONDS = 20.0  # default: the server rolls back a session not heard from this long
LEASE_ENV = "POOLING_LEASE_SECONDS"  # the server's lease, if set (tests shorten it)
# The fields of a judgment as sent to the server's judgment writer.
JUDGMENT_FIELDS = pa.schema([
    ("round_id", pa.string()), ("assessor_id", pa.string()), ("query_id", pa.string()),
    ("doc_id", pa.string()), ("grade", pa.int64()), ("kind", pa.string()),
    ("seconds", pa.float64()), ("note", pa.string()), ("submission_id", pa.string()),
    ("probability", pa.float64()), ("rationale", pa.string()), ("part", pa.string()),
])


class CredentialError(StoreError):
    """A served store was asked for without organiser credentials, or with wrong ones."""


def token_file(store_path: Path) -> Path:
    """Where `pooling serve` keeps its organiser token (mode 0600: only its owner reads it)."""
    return store_path.with_name(store_path.name + TOKEN_FILE_SUFFIX)


def organiser_token(store_path: Path, explicit: str | None = None) -> str | None:
    """The organiser token to use: given, else $POOLING_TOKEN, else the server's token file."""
    if explicit:
        return explicit
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV]
    try:
        return token_file(store_path).read_text().strip() or None
    except OSError:
        return None


# -- parameters and results on the wire ----------------------------------------------------


def encode_params(params: Sequence[Any] | dict[str, Any] | None) -> Any:
    """Bound parameters as JSON, with datetimes, dates and bytes tagged."""
    if params is None:
        return None
    if isinstance(params, dict):
        return {"$named": {k: _encode(v) for k, v in params.items()}}
    return [_encode(v) for v in params]


def decode_params(data: Any) -> Any:
    if data is None:
        return None
    if isinstance(data, dict) and "$named" in data:
        return {k: _decode(v) for k, v in data["$named"].items()}
    return [_decode(v) for v in data]


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return value.item()
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "$datetime" in value:
            return datetime.fromisoformat(value["$datetime"])
        if "$date" in value:
            return date.fromisoformat(value["$date"])
        if "$bytes" in value:
            return base64.b64decode(value["$bytes"])
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def to_ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _py(value: Any) -> Any:
    """Arrow's Python values as DuckDB's fetchall gives them (integral decimals are ints)."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return value


# -- the client ------------------------------------------------------------------------------


class _Http:
    """One keep-alive HTTP connection to the server, used by one thread at a time."""

    def __init__(self, url: str, token: str, root: str):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.root = root
        self.token = token
        self._conn: http.client.HTTPConnection | None = None
        self.lock = threading.Lock()

    def request(self, method: str, path: str, body: bytes | None = None,
                content_type: str = "application/json", timeout: float | None = None):
        """Send a request; the response is returned unread (the caller reads it)."""
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": content_type}
        for attempt in (0, 1):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            try:
                self._conn.request(method, f"{self.root}/{API_PREFIX}/{path}", body=body, headers=headers)
                return self._conn.getresponse()
            except (ConnectionError, http.client.RemoteDisconnected, http.client.CannotSendRequest):
                self.close()
                if attempt or not path.endswith("ping"):  # only a lease ping is safe to resend
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class RemoteConnection:
    """Stands in for a DuckDB connection to a store held by `pooling serve` (see module doc)."""

    def __init__(self, store_path: Path, url: str, token: str, root: str = ""):
        self.store_path = store_path
        self.url = url
        self._http = _Http(url, token, root)
        self._pinger = _Http(url, token, root)
        try:
            reply = self._json("POST", "sessions", b"{}")
        except OSError as exc:
            raise StoreError(
                f"{store_path} is served at {url}, but the server does not answer ({exc}); "
                "is it still running?"
            ) from exc
        self.session = reply["session"]
        self._ping_every = float(reply.get("lease_seconds", LEASE_SECONDS)) / 4
        self._closed = threading.Event()
        self._ping = threading.Thread(target=self._keep_alive, name="store-lease", daemon=True)
        self._ping.start()
        self._result: pa.Table | None = None

    # lease ------------------------------------------------------------------------------
    def _keep_alive(self) -> None:
        while not self._closed.wait(self._ping_every):
            try:
                with self._pinger.lock:
                    self._pinger.request("POST", f"sessions/{self.session}/ping", b"{}").read()
            except OSError:
                pass

    # the DuckDB connection surface the library uses ----------------------------------------
    def execute(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> RemoteConnection:
        self._result = self._table(query, params)
        return self

    def executemany(self, query: str, rows: Sequence[Sequence[Any]]) -> RemoteConnection:
        """One statement for many parameter rows, sent in one request."""
        self._result = self.stream(query, [encode_params(r) for r in rows], many=True).read_all()
        return self

    def sql(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> RemoteRelation:
        return RemoteRelation(self, query, params)

    def fetchall(self) -> list[tuple]:
        table = self._take()
        columns = [[_py(v) for v in c.to_pylist()] for c in table.columns]
        return list(zip(*columns, strict=True)) if columns else []

    @property
    def description(self) -> list[tuple] | None:
        """(name, type, ...) per result column, as DB-API gives it (names are what is used)."""
        if self._result is None:
            return None
        return [(f.name, str(f.type), None, None, None, None, None) for f in self._result.schema]

    def fetchone(self) -> tuple | None:
        rows = self.fetchall()
        return rows[0] if rows else None

    def fetchnumpy(self) -> dict[str, Any]:
        table = self._take()
        # Copies, as DuckDB gives them: callers sort these in place.
        return {name: np.array(table[name].to_numpy(zero_copy_only=False))
                for name in table.column_names}

    def fetch_arrow_table(self) -> pa.Table:
        return self._take()

    arrow = fetch_arrow_table

    def register(self, name: str, table: Any) -> RemoteConnection:
        if not isinstance(table, pa.Table):
            table = pa.Table.from_pandas(table, preserve_index=False)
        self._call("POST", f"sessions/{self.session}/register/{name}", to_ipc(table), ARROW_STREAM)
        return self

    def unregister(self, name: str) -> RemoteConnection:
        self._call("POST", f"sessions/{self.session}/unregister/{name}", b"{}")
        return self

    def append_judgments(self, judgments: Sequence[Any]) -> tuple[int, int]:
        """Hand judgments (`pooling.judging.history.Judgment`s) to the server's judgment
        writer: (stored, already stored). See `pooling.judging.judgments.append_judgments`."""
        from dataclasses import asdict

        table = pa.Table.from_pylist([asdict(j) for j in judgments], schema=JUDGMENT_FIELDS)
        reply = self._json_body("POST", f"sessions/{self.session}/judgments", to_ipc(table),
                                ARROW_STREAM)
        return int(reply["stored"]), int(reply["duplicates"])

    def cursor(self) -> RemoteConnection:
        return RemoteConnection(self.store_path, self.url, self._http.token, self._http.root)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            self._call("DELETE", f"sessions/{self.session}", None)
        except (OSError, StoreError):
            pass
        self._http.close()
        self._pinger.close()

    # plumbing -------------------------------------------------------------------------------
    def _take(self) -> pa.Table:
        if self._result is None:
            raise duckdb.InvalidInputException("No open result set")
        return self._result

    def _table(self, query: str, params: Any) -> pa.Table:
        return self.stream(query, params).read_all()

    def stream(self, query: str, params: Any, batch_rows: int = 1 << 20,
               many: bool = False) -> pa.RecordBatchReader:
        """A statement's result as Arrow batches, read whole from the reply so the connection is
        free for the next statement (with `many`, params are already encoded rows)."""
        body = json.dumps({"sql": query, "params": params if many else encode_params(params),
                           "batch_rows": batch_rows, "many": many})
        with self._http.lock:
            response = self._http.request("POST", f"sessions/{self.session}/execute", body.encode())
            if response.status != 200:
                self._raise(response)
            data = response.read()  # whole reply: the connection is free for the next call
        return pa.ipc.open_stream(io.BytesIO(data))

    def _json(self, method: str, path: str, body: bytes | None) -> dict[str, Any]:
        return self._json_body(method, path, body, "application/json")

    def _json_body(self, method: str, path: str, body: bytes | None, content_type: str) -> dict[str, Any]:
        with self._http.lock:
            response = self._http.request(method, path, body, content_type)
            if response.status >= 300:
                self._raise(response)
            return json.loads(response.read() or b"{}")

    def _call(self, method: str, path: str, body: bytes | None, content_type: str = "application/json") -> None:
        with self._http.lock:
            response = self._http.request(method, path, body, content_type)
            if response.status >= 300:
                self._raise(response)
            response.read()

    def _raise(self, response: http.client.HTTPResponse) -> None:
        raw = response.read()
        try:
            info = json.loads(raw)
        except ValueError:
            info = {"error": raw.decode(errors="replace")[:500]}
        message = info.get("error", f"HTTP {response.status}")
        if response.status == 409 and "sent_grade" in info:
            raise SubmissionConflict(message, info.get("stored_grade"), info.get("sent_grade"))
        if response.status in (401, 403):
            raise CredentialError(
                f"the server of {self.store_path} ({self.url}) refused: {message}"
            )
        kind = info.get("kind")
        if kind:
            cls = getattr(duckdb, kind, None)
            if isinstance(cls, type) and issubclass(cls, duckdb.Error):
                raise cls(message)
        raise StoreError(f"the server of {self.store_path} ({self.url}) answered: {message}")


class RemoteRelation:
    """The part of a DuckDB relation the library uses: `to_arrow_table`, `to_arrow_reader`."""

    def __init__(self, con: RemoteConnection, query: str, params: Any):
        self.con, self.query, self.params = con, query, params

    def to_arrow_table(self) -> pa.Table:
        return self.con.stream(self.query, self.params).read_all()

    arrow = to_arrow_table

    def to_arrow_reader(self, batch_rows: int = 1 << 20) -> pa.RecordBatchReader:
        return self.con.stream(self.query, self.params, batch_rows)

    def fetchall(self) -> list[tuple]:
        return self.con.execute(self.query, self.params).fetchall()

    def fetchnumpy(self) -> dict[str, Any]:
        return self.con.execute(self.query, self.params).fetchnumpy()

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.fetchall())


def connect(store_path: Path, server: dict[str, Any], token: str | None) -> RemoteConnection:
    """A connection through the server that holds `store_path` (see the module docstring)."""
    token = organiser_token(store_path, token)
    if token is None:
        raise CredentialError(
            f"{store_path} is being served by `pooling serve` (pid {server.get('pid')}, "
            f"{server.get('url')}); commands on a served store need organiser credentials: "
            f"run them as the user who started the server (it keeps a token in "
            f"{token_file(store_path)}, readable only by that user), or pass an organiser's "
            f"token with --token or ${TOKEN_ENV}"
        )
    return RemoteConnection(store_path, server["url"], token, server.get("root_path", ""))
