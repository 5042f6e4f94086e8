"""An iterator produced in a background thread, a bounded number of items ahead.

Reading (parsing a run file, streaming a stored run out of DuckDB) then overlaps with the
caller's work on the item before. Parsing and Arrow or DuckDB calls release the GIL, so the
two really run on two cores.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")
_END = object()


class Ahead(Generic[T]):
    """Iterate `produce()` in a thread, at most `depth` items ahead of the consumer.

    An exception in the producer is raised in the consumer, where the item would have come.
    `then` runs in the thread once the producer is exhausted (not when closed early): the
    place to start the next reader. Use as a context manager, or call `close`.
    """

    def __init__(
        self,
        produce: Callable[[], Iterator[T]],
        *,
        name: str,
        then: Callable[[], None] | None = None,
        depth: int = 1,
    ):
        self._produce, self._then = produce, then
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._worker: threading.Thread | None = threading.Thread(
            target=self._run, name=name, daemon=True
        )
        self._worker.start()

    def _run(self) -> None:
        end: object = _END
        try:
            for item in self._produce():
                if self._stop.is_set():
                    return
                self._queue.put(item)
        except BaseException as exc:  # handed to the consumer, raised there
            end = exc
        try:  # before the end mark: the consumer may close this at once after it
            if self._then is not None and not self._stop.is_set():
                self._then()
        except BaseException as exc:
            end = exc
        self._queue.put(end)

    def __iter__(self) -> Iterator[T]:
        if self._worker is None:
            return
        while (item := self._queue.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self) -> None:
        """Stop the thread (it may be waiting to hand over an item) and wait for it."""
        if self._worker is None:
            return
        self._stop.set()
        while self._worker.is_alive():
            try:
                self._queue.get(timeout=0.01)
            except queue.Empty:
                pass
        self._worker.join()
        self._worker = None

    def __enter__(self) -> Ahead[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
