"""The server's single store connection: every use is serialised and runs off the event loop.

DuckDB allows one writing process per file, and one connection must not be used by two
threads at once, so every request's store work runs as one function call in a worker
thread while holding one lock. The lock is a `threading.Lock` taken inside the worker: it
stays held for exactly as long as the store is in use, even if the request is cancelled.

Reads that take a while and change nothing (an organiser's progress over every round, a
token looked up) run instead on read cursors of their own (`read`), beside the gate: DuckDB
is MVCC, so they see what is committed and neither wait for nor hold up the pages' work.

A read nobody waits for any more stops: when the client of `read_while_connected` goes
away, and every read when the gate closes (the server stopping), its running statement is
interrupted and its cursor refuses the next one, so no abandoned page goes on using a core
and a stopping server does not wait for one.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import duckdb
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from pooling.errors import PoolingError
from pooling.store.core import Store

P = ParamSpec("P")
T = TypeVar("T")
READERS = 4  # read cursors at most; a read finding them all busy waits for one
DISCONNECT_POLL_SECONDS = 0.25  # how often a long read asks whether its client is still there
STOP_WAIT_SECONDS = 5.0  # how long closing waits for abandoned reads to reach their next statement


class ReadAbandoned(PoolingError):
    """The read was given up (its client left, or the server is stopping): nobody will see it."""


class _Guarded:
    """A read cursor that refuses new statements once its read is abandoned; the statement
    running then is interrupted by `_Read.abandon`."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, abandoned: threading.Event):
        self._cursor, self._abandoned = cursor, abandoned

    def _check(self) -> None:
        if self._abandoned.is_set():
            raise ReadAbandoned("the read was abandoned: its client left or the server is stopping")

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        return self._cursor.execute(*args, **kwargs)

    def sql(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        return self._cursor.sql(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


class _Read:
    """One read: its cursor once it has one, whether it was abandoned, whether it is done."""

    def __init__(self) -> None:
        self.cursor: duckdb.DuckDBPyConnection | None = None
        self.abandoned, self.done = threading.Event(), threading.Event()
        # Held while interrupting and while the cursor is handed back, so an interrupt can
        # never reach a cursor another read has taken up since.
        self.lock = threading.Lock()

    def abandon(self) -> None:
        self.abandoned.set()  # before it has a cursor: its first statement is refused
        with self.lock:
            if self.cursor is not None:
                try:
                    self.cursor.interrupt()  # the statement running now, if any
                except duckdb.Error:
                    pass

    def release(self) -> None:
        """The read is over: its cursor goes back to the pool, out of `abandon`'s reach."""
        with self.lock:
            self.cursor = None
        self.done.set()


class ReadView(Store):
    """The store's query methods (`sql`, `one`, `arrow`, `con`) on a cursor of its own,
    read-only: `transaction()` refuses, so nothing run on it can write."""

    def __init__(self, store: Store, cursor: duckdb.DuckDBPyConnection):  # no file is opened
        self.path, self.con, self.remote = store.path, cursor, store.remote
        self.read_only, self._in_transaction = True, False

    def close(self) -> None:
        try:
            self.con.close()
        except duckdb.Error:
            pass


class StoreGate:
    """Owns the open store; `await gate.run(fn, *args)` calls `fn(store, *args)` under the lock,
    `await gate.read(fn, *args)` calls `fn(view, *args)` on a read cursor beside it."""

    def __init__(self, store: Store):
        self.store = store
        self._lock = threading.Lock()
        self._idle: queue.LifoQueue[ReadView] = queue.LifoQueue()
        self._made = 0
        self._made_lock = threading.Lock()
        self._busy: set[_Read] = set()
        self._busy_lock = threading.Lock()
        self._closing = False

    async def run(self, fn: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await run_in_threadpool(self.run_sync, fn, *args, **kwargs)

    def run_sync(self, fn: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        with self._lock:
            return fn(self.store, *args, **kwargs)

    async def read(self, fn: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await run_in_threadpool(self.read_sync, fn, *args, **kwargs)

    async def read_while_connected(self, request: Request,
                                   fn: Callable[Concatenate[Store, P], T],
                                   *args: P.args, **kwargs: P.kwargs) -> T:
        """`read`, abandoned as soon as the request's client goes away (or the request is
        cancelled, as when the server stops): then `ReadAbandoned` is raised here at once,
        and the read itself stops at its next statement."""
        read = _Read()
        task = asyncio.ensure_future(run_in_threadpool(self.read_sync, fn, *args,
                                                       _read=read, **kwargs))
        task.add_done_callback(_retrieve)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=DISCONNECT_POLL_SECONDS)
                if done:
                    return task.result()
                if await request.is_disconnected():
                    break
        except BaseException:
            read.abandon()
            raise
        read.abandon()
        raise ReadAbandoned(f"the client of {request.url.path} went away; its page was not made")

    def read_sync(self, fn: Callable[Concatenate[Store, P], T], *args: P.args,
                  _read: _Read | None = None, **kwargs: P.kwargs) -> T:
        """`fn(view, ...)` on a read cursor (`ReadView`) no other thread uses meanwhile.
        _read: how the caller abandons it (`read_while_connected`)."""
        view = self._reader()
        read = _read or _Read()
        read.cursor = view.con
        with self._busy_lock:
            if self._closing:
                read.abandoned.set()
            self._busy.add(read)
        try:
            return fn(ReadView(view, _Guarded(view.con, read.abandoned)), *args, **kwargs)
        except duckdb.InterruptException as exc:
            if read.abandoned.is_set():
                raise ReadAbandoned("the read was abandoned: its client left or the server "
                                    "is stopping") from exc
            raise
        finally:
            with self._busy_lock:
                self._busy.discard(read)
            read.release()
            self._idle.put(view)

    def stop_reading(self) -> list[_Read]:
        """Abandon the reads in progress and refuse new ones (the server is stopping: their
        pages answer 503 at once instead of holding up the shutdown); returns those abandoned."""
        with self._busy_lock:
            self._closing = True
            busy = list(self._busy)
        for read in busy:
            read.abandon()
        return busy

    def close(self) -> None:
        """Abandon the reads in progress, wait a little for them to stop, then close the read
        cursors (before the store is closed)."""
        for read in self.stop_reading():
            read.done.wait(STOP_WAIT_SECONDS)
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    def _reader(self) -> ReadView:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._made_lock:
            make = self._made < READERS
            if make:
                self._made += 1
        if not make:
            return self._idle.get()
        # The connection makes its cursors: under the lock, as any other use of it.
        return self.run_sync(lambda store: ReadView(store, store.con.cursor()))


def _retrieve(task: asyncio.Future) -> None:
    """Take the outcome of a read nobody awaits any more (abandoned), so it is not reported."""
    if not task.cancelled():
        task.exception()
