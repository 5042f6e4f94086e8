"""Judgments written in group commits, on a cursor and a thread of their own.

`JudgmentWriter` stores the judgments the judging pages take (`pooling.web.live`) with the
judging core's one insert (`pooling.judging.judgments.insert`) and its outcomes. Submissions
that arrive while a transaction is being committed wait and go together into the next one, so
many assessors share one commit (and one fsync). A judgment is acknowledged only after its
commit. When a shared commit fails, each of its submissions is tried again alone, so a
judgment the store refuses fails only its sender; a full disk fails each of them, none
acknowledged, and the next transaction tries again. The documents a crowd round hands out are
recorded by the same thread, in commits of their own that never hold up an answer.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future, InvalidStateError

import duckdb

from pooling.errors import PoolingError, SubmissionConflict
from pooling.judging.handouts import Handout, record_handouts
from pooling.judging.judgments import (
    VALUES_ROWS,
    Judgment,
    Written,
    first_of,
    insert,
    key,
    outcomes,
    stored_submissions,
)
from pooling.web.gate import StoreGate

MAX_BATCH = VALUES_ROWS  # a group commit is one statement of bound values
# Documents handed out wait at most this long for a commit while judgments keep the writer
# busy (`JudgmentWriter._loop`): what a restart would lose of the claims, never of an answer.
HANDOUT_SECONDS = 1.0


class WriteFailed(PoolingError):
    """The store could not take a judgment (a full disk, say): nothing of it was stored, and
    the submission can be sent again as it is (its id keeps it from being stored twice)."""


class JudgmentWriter:
    """Appends judgments on its own cursor, many submissions to a commit (module doc)."""

    def __init__(self, gate: StoreGate, on_stored=None):
        """on_stored(judgment, seq) is called for each judgment committed, before anyone
        waiting is told (so the pages' state never lags an acknowledgement)."""
        self.on_stored = on_stored or (lambda j, seq: None)
        self._cursor: duckdb.DuckDBPyConnection = gate.run_sync(lambda s: s.con.cursor())
        self._queue: queue.Queue[tuple[Judgment, Future] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="judgment-writer", daemon=True)
        self._thread.start()
        self.commits = 0
        self.written = 0
        self.unrecorded_handouts = 0

    def submit(self, j: Judgment) -> Written:
        """Store one judgment; returns once its transaction has committed (or raises)."""
        return self.submit_future(j).result()

    def submit_future(self, j: Judgment) -> Future[Written]:
        """Queue one judgment; the future is done once it has committed (or failed)."""
        future: Future[Written] = Future()
        self._queue.put((j, future))
        return future

    def submit_handouts(self, rows: list[Handout]) -> None:
        """Queue documents handed out (`pooling.judging.handouts`), stored in a commit of
        their own once no judgment waits, or within `HANDOUT_SECONDS` under load. Nobody
        waits for them: a page's token proves its handout until the record is there
        (`pooling.web.handout_proof`), and one that could not be stored is counted
        (`unrecorded_handouts`)."""
        self._queue.put((rows, None))

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=30)
        try:
            self._cursor.close()
        except duckdb.Error:
            pass

    def _loop(self) -> None:
        """Commit what comes in, judgments first. Handouts wait for a commit of their own
        while judgments keep the writer busy, at most `HANDOUT_SECONDS`: no answer waits
        for a handout's commit, and a page's token proves its handout meanwhile."""
        handed: list[Handout] = []
        since = time.monotonic()
        while True:
            try:
                item = self._queue.get(timeout=HANDOUT_SECONDS) if handed else self._queue.get()
            except queue.Empty:  # idle: the handouts waiting are stored now
                self._hand_out(handed)
                handed = []
                continue
            if item is None:
                break
            batch = [item]
            stop = False
            while len(batch) < MAX_BATCH:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            if not handed:
                since = time.monotonic()
            handed += [h for rows, _ in batch if isinstance(rows, list) for h in rows]
            batch = [item for item in batch if not isinstance(item[0], list)]
            try:
                if batch:
                    self._write(batch)
            except BaseException as exc:  # noqa: BLE001 - the writer must outlive any batch
                _settle([f for _, f in batch], exc=exc)
            if handed and (not batch or time.monotonic() - since >= HANDOUT_SECONDS):
                self._hand_out(handed)
                handed = []
            if stop:
                break
        self._hand_out(handed)

    def _hand_out(self, rows: list[Handout]) -> None:
        """Store documents handed out, in one statement. When that fails (a full disk), they
        are counted and let go: each worker's answer brings the proof of its handout, and
        only a restart could ask for the record."""
        if rows:
            try:
                record_handouts(self._cursor, rows)
            except Exception:  # noqa: BLE001 - the writer must outlive any batch
                self.unrecorded_handouts += len(rows)

    def _write(self, batch: list[tuple[Judgment, Future]]) -> None:
        """Store a batch in one commit. When that commit fails, each submission (with its
        double clicks) is tried again in a commit of its own: what the store refuses fails
        alone, and everyone else's judgments are stored and acknowledged as usual."""
        groups: dict[tuple[str, str], list[tuple[Judgment, Future]]] = {}
        for item in batch:
            groups.setdefault(key(item[0]), []).append(item)
        failure = self._commit(batch)
        if failure is None:
            return
        if len(groups) > 1:
            for group in groups.values():
                self._write(group)
            return
        _settle([f for _, f in batch], exc=WriteFailed(
            f"the judgment could not be stored ({str(failure).splitlines()[0][:200]}); nothing "
            "was stored: send it again in a moment"))

    def _commit(self, batch: list[tuple[Judgment, Future]]) -> Exception | None:
        """One statement (one commit) for the batch, its futures settled once committed; the
        error instead when it failed (then nothing of it was stored, and nobody is told yet).

        The statement and what becomes of each submission (stored, a retry answered
        'duplicate', or refused with `SubmissionConflict`, never dropped silently) are the
        judging core's (`pooling.judging.judgments.insert` and `outcomes`). (One statement,
        not BEGIN ... COMMIT: each further call waits for the interpreter lock the event loop
        holds under load.)"""
        cur = self._cursor
        rows = first_of(j for j, _ in batch)  # a double click inside one batch: once
        try:
            seqs = insert(cur, rows)
        except Exception as exc:  # noqa: BLE001 - the caller decides who learns of it
            return exc
        self.commits += 1
        self.written += len(seqs)
        for j in rows:
            if key(j) in seqs:
                self.on_stored(j, seqs[key(j)])
        skipped = [key(j) for j in rows if key(j) not in seqs]
        try:
            stored_before, unread = stored_submissions(cur, skipped), None
        except Exception as exc:  # noqa: BLE001 - only the skipped ones are left unanswered
            stored_before, unread = {}, WriteFailed(
                f"whether the judgment was stored already could not be read "
                f"({str(exc).splitlines()[0][:200]}): send it again in a moment")
        for (j, future), result in zip(batch, outcomes([j for j, _ in batch], seqs, stored_before),
                                       strict=True):
            if unread is not None and key(j) not in seqs:
                _settle([future], exc=unread)
            elif isinstance(result, SubmissionConflict):
                _settle([future], exc=result)
            else:
                _settle([future], result=result)
        return None


def _settle(futures: list[Future], *, result: Written | None = None, exc: BaseException | None = None) -> None:
    """Give each waiting submission its outcome. A request given up by its client (its future
    cancelled) is skipped: what was committed stays, and a retry is answered 'duplicate'."""
    for future in futures:
        if future.done():
            continue
        try:
            if exc is not None:
                future.set_exception(exc)
            else:
                future.set_result(result)
        except InvalidStateError:  # cancelled between the check and the call
            pass
