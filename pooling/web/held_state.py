"""The rule every part of the judging pages' memory reads by: an answer comes from memory,
or from the store under the gate, unless only memory may answer now.

The server's event loop asks `LiveCampaign` (`pooling.web.live`) with `cached`, which lets no
part of it touch the store: a part that would have to raises `Miss`, and the request is asked
again from a worker thread. `HeldState` is what the parts share (the gate, the lock, the
generation that tells a load begun before a refresh, the rounds read) and that rule.
"""

from __future__ import annotations

import threading

from pooling.judging.assignments import Assignments
from pooling.web.gate import StoreGate


class Miss(Exception):
    """An answer needs the store (not cached, or an adaptive round): ask from a worker thread."""


class HeldState:
    """What the parts of the pages' memory share; `LiveCampaign` sets it up."""

    gate: StoreGate
    generation: int  # a load begun before a refresh is not kept
    _local: threading.local  # per thread: whether only cached answers are allowed now
    _lock: threading.RLock
    _rounds: dict[str, Assignments | None]

    def cached(self, fn, *args, **kwargs):
        """`fn(*args, **kwargs)` (a method of this object) if no store access is needed."""
        self._local.cached_only = True
        try:
            return fn(*args, **kwargs)
        finally:
            self._local.cached_only = False

    def _store(self, fn, *args, **kwargs):
        """Run `fn(store, ...)` under the gate, unless only cached answers are allowed now."""
        if getattr(self._local, "cached_only", False):
            raise Miss
        return self.gate.run_sync(fn, *args, **kwargs)
