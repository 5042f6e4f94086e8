"""The organiser's way into a served store: SQL sessions for `pooling.store.remote` clients.

Each client session gets its own DuckDB cursor on the server's database, so its reads run
beside the assessors' requests (DuckDB is MVCC: a long read blocks no writer) and its writes
are its own transaction. Every request needs an organiser's bearer token: the server's own
token (`<store>.organiser-token`, mode 0600) or the token of a person with the organiser
role. Cookies are never looked at, so an assessor's browser session cannot reach this, and a
page cannot forge a request (no ambient credential). A session not heard from for
its lease (`LEASE_SECONDS`; its client was killed) is rolled back and closed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pooling.errors import SubmissionConflict
from pooling.judging.assessors import authenticate
from pooling.judging.judgments import (
    Judgment,
    counted,
    key,
    outcomes,
    stored_submissions,
    unstorable,
)
from pooling.judging.validation import incomplete
from pooling.store.remote import (
    ARROW_STREAM,
    JUDGMENT_FIELDS,
    LEASE_ENV,
    LEASE_SECONDS,
    decode_params,
)
from pooling.web.bodies import BodyRefused, read_json
from pooling.web.gate import StoreGate
from pooling.web.judgment_writer import JudgmentWriter, WriteFailed
from pooling.web.pages import conflict_error
from pooling.web.session_writes import SessionWrites
from pooling.web.throttle import LoginThrottle, client_address

MAX_REQUEST_BYTES = 1 << 30  # a registered chunk of an import can be large
MAX_BATCH_ROWS = 1 << 30  # rows per Arrow batch of a result


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class _Session:
    cursor: duckdb.DuckDBPyConnection
    token_hash: str
    who: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_seen: float = field(default_factory=time.monotonic)
    writes: SessionWrites = field(default_factory=SessionWrites)
    opened_at: float = field(default_factory=time.time)


class StoreSessions:
    """The open organiser sessions of one server, and the reaper that ends abandoned ones."""

    def __init__(self, gate: StoreGate, server_token: str | None, lease: float | None = None,
                 on_write: Callable[[frozenset[str] | None], None] | None = None,
                 writer: JudgmentWriter | None = None,
                 throttle: LoginThrottle | None = None,
                 revoked: Callable[[str, float], bool] | None = None):
        """on_write(tables): drop what the judging pages hold of `tables` (after a commit
        that changed them; None: it cannot be told which);
        writer: the server's one judgment writer, which organiser tools' judgments join;
        throttle: failed logins per address; revoked(who, since): whether the access of the
        person a session belongs to was revoked after the session opened."""
        self.gate = gate
        self.on_write = on_write or (lambda tables: None)
        self.writer = writer
        self.throttle = throttle or LoginThrottle()
        self.revoked = revoked or (lambda who, since: False)
        self.lease = lease or float(os.environ.get(LEASE_ENV) or LEASE_SECONDS)
        self._server_hash = _hash(server_token) if server_token else None
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap, name="store-sessions", daemon=True)
        self._reaper.start()

    # -- credentials -----------------------------------------------------------------------
    def organiser(self, request: Request) -> str:
        """Who the request's bearer token belongs to, if an organiser; else an HTTP error."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _Refused(401, "organiser credentials needed: send 'Authorization: Bearer <token>'")
        token = token.strip()
        address = client_address(request.client)
        wait = self.throttle.retry_after(address)  # before any comparison: no token is tried
        if wait is not None:
            raise _Refused(429, f"too many unknown tokens from this address; try again in {wait} "
                                "seconds", headers={"Retry-After": str(wait)})
        if self._server_hash and hmac.compare_digest(_hash(token), self._server_hash):
            return "server-token"
        person = self.gate.read_sync(authenticate, token)
        if person is None:
            self.throttle.failed(address)
            raise _Refused(401, "unknown token; check --token (or $POOLING_TOKEN)")
        if person[1] != "organiser":
            raise _Refused(403, f"{person[0]} is an assessor; store operations need an organiser's token")
        return person[0]

    # -- sessions ----------------------------------------------------------------------------
    def open(self, request: Request) -> str:
        who = self.organiser(request)
        cursor = self.gate.run_sync(lambda store: store.con.cursor())
        session_id = secrets.token_urlsafe(24)
        header = request.headers["authorization"].partition(" ")[2].strip()
        with self._lock:
            self._sessions[session_id] = _Session(cursor, _hash(header), who)
        return session_id

    def get(self, request: Request) -> _Session:
        session_id = request.path_params["session"]
        with self._lock:
            session = self._sessions.get(session_id)
        header = request.headers.get("authorization", "").partition(" ")[2].strip()
        if session is None:
            raise _Refused(404, "no such session (it may have expired); open the store again")
        if not header or not hmac.compare_digest(_hash(header), session.token_hash):
            raise _Refused(401, "this session belongs to another token")
        if self.revoked(session.who, session.opened_at):  # refused until the reaper ends it
            raise _Refused(401, f"the access of {session.who} was revoked; ask an organiser for "
                                "a new token")
        session.last_seen = time.monotonic()
        return session

    def close(self, session_id: str) -> None:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is not None:
            with session.lock:
                _end(session)

    def close_all(self) -> None:
        self._stop.set()
        with self._lock:
            ids = list(self._sessions)
        for session_id in ids:
            self.close(session_id)

    def _reap(self) -> None:
        while not self._stop.wait(1.0):
            now = time.monotonic()
            with self._lock:
                stale = [k for k, s in self._sessions.items() if now - s.last_seen > self.lease]
            for session_id in stale:
                with self._lock:
                    session = self._sessions.get(session_id)
                if session is None or not session.lock.acquire(blocking=False):
                    continue  # busy: a statement is running, so the client is still there
                try:
                    with self._lock:
                        self._sessions.pop(session_id, None)
                    _end(session)
                finally:
                    session.lock.release()


def _end(session: _Session) -> None:
    """Roll back whatever the session left open, and close its cursor."""
    session.writes.discard()
    try:
        session.cursor.execute("ROLLBACK")
    except duckdb.Error:
        pass  # no transaction was open
    try:
        session.cursor.close()
    except duckdb.Error:
        pass


class _Refused(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.headers = headers


def _error(status: int, message: str, kind: str | None = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict[str, str] = {"error": message}
    if kind:
        body["kind"] = kind
    return JSONResponse(body, status_code=status, headers=headers)


def _sessions(request: Request) -> StoreSessions:
    return request.app.state.sessions


async def open_session(request: Request) -> Response:
    try:
        session_id = await run_in_threadpool(_sessions(request).open, request)
    except _Refused as exc:
        return _error(exc.status, str(exc), headers=exc.headers)
    return JSONResponse({"session": session_id, "lease_seconds": _sessions(request).lease})


async def close_session(request: Request) -> Response:
    try:
        _sessions(request).get(request)
    except _Refused as exc:
        return _error(exc.status, str(exc))
    await run_in_threadpool(_sessions(request).close, request.path_params["session"])
    return Response(status_code=204)


async def ping(request: Request) -> Response:
    try:
        _sessions(request).get(request)
    except _Refused as exc:
        return _error(exc.status, str(exc))
    return Response(status_code=204)


async def execute(request: Request) -> Response:
    try:
        session = _sessions(request).get(request)
        query, params, batch_rows, many = _statement(
            await read_json(request, max_bytes=MAX_REQUEST_BYTES))
    except _Refused as exc:
        return _error(exc.status, str(exc))
    except BodyRefused as exc:
        return _error(exc.status_code, exc.detail)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return _error(400, f"malformed request: {exc}")
    try:
        data = await run_in_threadpool(_run, session, query, params, batch_rows,
                                       _sessions(request).on_write, many)
    except duckdb.Error as exc:
        return _error(400, str(exc), type(exc).__name__)
    return Response(data, media_type=ARROW_STREAM)


def _statement(body: Any) -> tuple[str, Any, int, bool]:
    """(sql, params, batch_rows, many) of an execute request, its shape checked: what
    `pooling.store.remote` sends. A value of the wrong type raises TypeError or ValueError."""
    if not isinstance(body, dict) or not isinstance(body.get("sql"), str):
        raise TypeError("expected a JSON object with 'sql' text")
    many = body.get("many", False)
    batch_rows = body.get("batch_rows") or (1 << 20)
    if not isinstance(many, bool):
        raise TypeError("'many' must be true or false")
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) \
            or not 1 <= batch_rows <= MAX_BATCH_ROWS:
        raise ValueError(f"'batch_rows' must be a whole number from 1 to {MAX_BATCH_ROWS:,}")
    if many:
        rows = body.get("params")
        if not isinstance(rows, list):
            raise TypeError("with 'many', 'params' must be a list of parameter lists")
        params = [_params(r) for r in rows]
    else:
        params = _params(body.get("params"))
    # Text the store cannot hold would fail deep inside DuckDB's binding, as a server error.
    why = unstorable(body["sql"], "the SQL") or unstorable(params, "the parameters")
    if why:
        raise ValueError(why)
    return body["sql"], params, batch_rows, many


def _params(data: Any) -> Any:
    """One statement's bound parameters: null, a list, or {"$named": {...}}."""
    if not (data is None or isinstance(data, list)
            or (isinstance(data, dict) and isinstance(data.get("$named"), dict))):
        raise TypeError("'params' must be null, a list or {\"$named\": {...}}")
    return decode_params(data)


def _run(session: _Session, query: str, params, batch_rows: int,
         on_write: Callable[[frozenset[str] | None], None], many: bool = False) -> bytes:
    with session.lock:
        session.last_seen = time.monotonic()
        try:
            if many:  # one statement, many parameter rows; no result
                session.cursor.executemany(query, params)
                data = _ipc(None)
            else:
                # A query becomes a relation read as Arrow batches; other statements (BEGIN,
                # INSERT, COMMIT, ...) run at once and give None.
                relation = session.cursor.sql(query, params=params or None)
                data = _ipc(relation.to_arrow_reader(batch_rows) if relation is not None else None)
        except Exception:
            session.writes.failed(query)
            raise
        stale = session.writes.ran(query)
        if stale is None or stale:
            on_write(stale)  # a commit changed tables the judging pages read (None: any)
        session.last_seen = time.monotonic()
        return data


def _ipc(reader: pa.RecordBatchReader | None) -> bytes:
    """A result as an Arrow IPC stream (an empty one for a statement without a result)."""
    sink = pa.BufferOutputStream()
    schema = reader.schema if reader is not None else pa.schema([])
    with pa.ipc.new_stream(sink, schema) as writer:
        if reader is not None:
            for batch in reader:
                writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


async def register(request: Request) -> Response:
    try:
        session = _sessions(request).get(request)
    except _Refused as exc:
        return _error(exc.status, str(exc))
    data = await request.body()
    name = request.path_params["name"]

    def do() -> None:
        table = pa.ipc.open_stream(pa.BufferReader(data)).read_all()
        with session.lock:
            session.cursor.register(name, table)

    try:
        await run_in_threadpool(do)
    except (duckdb.Error, pa.ArrowException, OSError) as exc:
        return _error(400, str(exc), type(exc).__name__ if isinstance(exc, duckdb.Error) else None)
    return Response(status_code=204)


async def append_judgments(request: Request) -> Response:
    """Judgments from an organiser's tool (an automatic judge's batch), as an Arrow stream of
    `Judgment` fields, stored by the server's judgment writer with the assessors' own: the
    pages' memory is updated, not dropped. A batch with an id its assessor used for other
    content is refused whole (409) before anything is stored; retries are counted as such."""
    sessions = _sessions(request)
    try:
        session = sessions.get(request)
    except _Refused as exc:
        return _error(exc.status, str(exc))
    if sessions.writer is None:
        return _error(503, "this server takes no judgments from organiser tools")
    data = await request.body()

    def do() -> tuple[int, int]:
        items = _judgments_of(data)
        with session.lock:
            before = stored_submissions(session.cursor, [key(j) for j in items])
        # Refused whole before anything is stored, never half stored: what would become of
        # each if nothing were stored now (`outcomes`), a conflict raised.
        counted(outcomes(items, {}, before))
        futures = [sessions.writer.submit_future(j) for j in items]
        written = [f.result() for f in futures]
        stored = sum(w.seq is not None for w in written)
        return stored, len(written) - stored

    try:
        stored, duplicates = await run_in_threadpool(do)
    except SubmissionConflict as exc:
        return conflict_error(exc)
    except WriteFailed as exc:
        return _error(503, str(exc))
    except (pa.ArrowException, OSError, TypeError, ValueError, KeyError) as exc:
        return _error(400, f"malformed judgments (an Arrow stream of {', '.join(JUDGMENT_FIELDS.names)} "
                      f"was expected): {str(exc)[:200]}")
    return JSONResponse({"stored": stored, "duplicates": duplicates})


def _judgments_of(data: bytes) -> list[Judgment]:
    """The judgments of an Arrow stream, every row checked before any is handed to the writer
    (a bad row must not fail the assessors' judgments committed beside it)."""
    table = pa.ipc.open_stream(pa.BufferReader(data)).read_all()
    if "part" not in table.column_names:  # a client from before the judged item: its
        # subtopic is the part, and one from before subtopic judgments sends neither
        old = table.column_names.index("subtopic") if "subtopic" in table.column_names else None
        table = (table.append_column("part", pa.nulls(table.num_rows, pa.string()))
                 if old is None else table.rename_columns(
                     [("part" if i == old else n) for i, n in enumerate(table.column_names)]))
    table = table.select(JUDGMENT_FIELDS.names).cast(JUDGMENT_FIELDS)
    items = [Judgment(**row) for row in table.to_pylist()]
    for n, j in enumerate(items, start=1):
        why = incomplete(j, n)
        if why:
            raise ValueError(why)
    return items


async def unregister(request: Request) -> Response:
    try:
        session = _sessions(request).get(request)
    except _Refused as exc:
        return _error(exc.status, str(exc))
    name = request.path_params["name"]

    def do() -> None:
        with session.lock:
            session.cursor.unregister(name)

    await run_in_threadpool(do)
    return Response(status_code=204)


ROUTES = [
    Route("/sessions", open_session, methods=["POST"]),
    Route("/sessions/{session}", close_session, methods=["DELETE"]),
    Route("/sessions/{session}/ping", ping, methods=["POST"]),
    Route("/sessions/{session}/execute", execute, methods=["POST"]),
    Route("/sessions/{session}/register/{name}", register, methods=["POST"]),
    Route("/sessions/{session}/unregister/{name}", unregister, methods=["POST"]),
    Route("/sessions/{session}/judgments", append_judgments, methods=["POST"]),
]


def create_store_api(sessions: StoreSessions) -> Starlette:
    """The organiser API's ASGI app (mounted at /_store by `pooling.web.app.create_app`)."""
    api = Starlette(routes=ROUTES, max_body_size=MAX_REQUEST_BYTES)
    api.state.sessions = sessions
    return api
