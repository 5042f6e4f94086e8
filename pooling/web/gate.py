"""The server's single store connection: every use is serialised and runs off the event loop.

DuckDB allows one writing process per file, and one connection must not be used by two
threads at once, so every request's store work runs as one function call in a worker
thread while holding one lock. The lock is a `threading.Lock` taken inside the worker: it
stays held for exactly as long as the store is in use, even if the request is cancelled.

Reads that take a while and change nothing (an organiser's progress over every round, a
token looked up) run instead on read cursors of their own (`read`), beside the gate: DuckDB
is MVCC, so they see what is committed and neither wait for nor hold up the pages' work.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import duckdb
from starlette.concurrency import run_in_threadpool

from pooling.store.core import Store

P = ParamSpec("P")
T = TypeVar("T")
READERS = 4  # read cursors at most; a read finding them all busy waits for one


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

    async def run(self, fn: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await run_in_threadpool(self.run_sync, fn, *args, **kwargs)

    def run_sync(self, fn: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        with self._lock:
            return fn(self.store, *args, **kwargs)

    async def read(self, fn: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await run_in_threadpool(self.read_sync, fn, *args, **kwargs)

    def read_sync(self, fn: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(view, ...)` on a read cursor (`ReadView`) no other thread uses meanwhile."""
        view = self._reader()
        try:
            return fn(view, *args, **kwargs)
        finally:
            self._idle.put(view)

    def close(self) -> None:
        """Close the read cursors (before the store is closed)."""
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
