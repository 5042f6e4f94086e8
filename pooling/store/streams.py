"""Stored runs streamed to the evaluator one after the other, by one reader that keeps going.

Scoring many stored runs alternates two kinds of work: DuckDB handing a run's rows over as
Arrow batches, and the evaluator scanning them. Read run by run, each waits for the other. Here
one background thread reads every run in turn on its own cursor, a couple of batches ahead, so
DuckDB reads the next run while the evaluator scans this one, on the other core.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from pooling.errors import StoreError
from pooling.evaluation.ahead import Ahead
from pooling.evaluation.inputs import RunStream

if TYPE_CHECKING:
    from pooling.store.database import Database

RUN_ROWS = "SELECT query_id, doc_id, score FROM run_results WHERE run_id = ?"
BATCH_ROWS = 1 << 20


class StoredRuns:
    """RunStreams of stored runs, meant to be read in the order given (`streams`).

    A stream read out of turn, or read again (the evaluator's general path after the kernel
    declined a run), runs its own query instead; so does every stream while the store is in a
    transaction, whose writes another cursor would not see. A stream left part-read and
    resumed after a later run was read raises: nothing is ever read from the wrong run.
    Use as a context manager: leaving it stops the reader.
    """

    def __init__(self, store: Database, run_ids: list[str]):
        self._store = store
        self._run_ids = list(run_ids)
        rows = dict(store.con.execute(
            "SELECT run_id, n_rows FROM runs WHERE run_id IN (SELECT UNNEST(?::VARCHAR[]))",
            [self._run_ids]).fetchall())
        for run_id in self._run_ids:
            if run_id not in rows:
                store.require_run(run_id)  # says which runs there are
        self.streams = [
            RunStream(lambda k=k: self._batches(k), int(rows[r]), r, r, unique=True)
            for k, r in enumerate(self._run_ids)
        ]
        self._lock = threading.Lock()
        self._next = 0  # the run the shared reader hands over next
        self._owner = -1  # the run whose stream reads from the shared reader now
        self._cursor = None if store.in_transaction else store.con.cursor()
        self._ahead: Ahead[tuple[int, pa.RecordBatch | None]] | None = None
        if self._cursor is not None:
            self._ahead = Ahead(self._read_all, name="stored-runs", depth=2)
            self._items = iter(self._ahead)

    def _read_all(self) -> Iterator[tuple[int, pa.RecordBatch | None]]:
        """(run index, batch) for every run in turn; (run index, None) ends a run. A run
        whose stream is left for a later one is not read to its end."""
        assert self._cursor is not None
        for k, run_id in enumerate(self._run_ids):
            for batch in read_run(self._cursor, run_id):
                if self._next > k + 1:
                    break
                yield k, batch
            yield k, None

    def _batches(self, k: int) -> Iterator[pa.RecordBatch]:
        with self._lock:
            shared = self._ahead is not None and self._next == k
            self._next = max(self._next, k + 1)
            if shared:
                self._owner = k
        if not shared:
            yield from read_run(self._store.con, self._run_ids[k])
            return
        while True:
            with self._lock:
                if self._owner != k:
                    raise StoreError(
                        f"the stream of run {self._run_ids[k]!r} was resumed after a later run "
                        "was read; read it again from the start")
            item = next(self._items, None)
            if item is None:
                return
            at, batch = item
            if at < k:  # left by a run whose reader stopped early
                continue
            if batch is None:
                return
            yield batch

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.close()
        if self._cursor is not None:
            self._cursor.close()

    def __enter__(self) -> StoredRuns:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_run(con: duckdb.DuckDBPyConnection, run_id: str) -> Iterator[pa.RecordBatch]:
    """A stored run's (query_id, doc_id, score) batches in stored order (no ORDER BY: the
    evaluator puts rows in trec_eval's order itself)."""
    try:
        yield from con.sql(RUN_ROWS, params=[run_id]).to_arrow_reader(BATCH_ROWS)
    except duckdb.Error as exc:
        raise StoreError(f"store step 'read run' failed: {exc}") from exc
