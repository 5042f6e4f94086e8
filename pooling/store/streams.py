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
from pooling.evaluation.engine import RunStream

if TYPE_CHECKING:
    from pooling.store.core import Store

RUN_ROWS = "SELECT query_id, doc_id, score FROM run_results WHERE run_id = ?"
BATCH_ROWS = 1 << 20


class StoredRuns:
    """RunStreams of stored runs, meant to be read in the order given (`streams`).

    A stream read out of turn, or read again (the evaluator's general path after the kernel
    declined a run), runs its own query instead; nothing is ever read from the wrong run.
    Use as a context manager: leaving it stops the reader.
    """

    def __init__(self, store: Store, run_ids: list[str]):
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
        self._cursor = store.con.cursor()
        self._ahead: Ahead[tuple[int, pa.RecordBatch | None]] = Ahead(
            self._read_all, name="stored-runs", depth=2)
        self._items = iter(self._ahead)

    def _read_all(self) -> Iterator[tuple[int, pa.RecordBatch | None]]:
        """(run index, batch) for every run in turn; (run index, None) ends a run."""
        for k, run_id in enumerate(self._run_ids):
            for batch in read_run(self._cursor, run_id):
                yield k, batch
            yield k, None

    def _batches(self, k: int) -> Iterator[pa.RecordBatch]:
        with self._lock:
            shared = self._next == k
            self._next = max(self._next, k + 1)
        if not shared:
            yield from read_run(self._store.con, self._run_ids[k])
            return
        for at, batch in self._items:
            if at < k:  # left by a run whose reader stopped early
                continue
            if batch is None:
                return
            yield batch

    def close(self) -> None:
        self._ahead.close()
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
