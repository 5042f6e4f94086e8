"""The server's single store connection: every use is serialised and runs off the event loop.

DuckDB allows one writing process per file, and one connection must not be used by two
threads at once, so every request's store work runs as one function call in a worker
thread while holding one lock. The lock is a `threading.Lock` taken inside the worker: it
stays held for exactly as long as the store is in use, even if the request is cancelled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool

from pooling.store.core import Store

P = ParamSpec("P")
T = TypeVar("T")


class StoreGate:
    """Owns the open store; `await gate.run(fn, *args)` calls `fn(store, *args)` under the lock."""

    def __init__(self, store: Store):
        self.store = store
        self._lock = threading.Lock()

    async def run(self, fn: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await run_in_threadpool(self.run_sync, fn, *args, **kwargs)

    def run_sync(self, fn: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        with self._lock:
            return fn(self.store, *args, **kwargs)
