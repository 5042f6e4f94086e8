"""What an organiser decided about the workers of a crowd round: flagged, withdrawn, cleared.

Decisions are rows appended to `worker_decisions`, never updated: the latest one of a worker
in a round holds, and every one stays as the record of who decided what, when, on which
figure. A decision changes what a worker is handed next, never what they already did: their
judgments stay in the history and in every rule that reads it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from pooling.errors import StoreError
from pooling.store.core import Store, utcnow

DECISIONS = ("flag", "withdraw", "clear")


def current_decisions(store: Store, round_id: str) -> dict[str, str]:
    """Each worker's latest decision in a round (assessor_id -> flag | withdraw | clear)."""
    rows = store.con.execute(
        "SELECT assessor_id, arg_max(decision, seq) FROM worker_decisions WHERE round_id = ? "
        "GROUP BY assessor_id", [round_id]).fetchall()
    return dict(rows)


def withdrawn_workers(store: Store, round_id: str) -> frozenset[str]:
    """The workers whose remaining queue in a round is withdrawn: they are handed nothing more."""
    return frozenset(a for a, d in current_decisions(store, round_id).items() if d == "withdraw")


@dataclass(frozen=True)
class Decision:
    """One decision to record: what, about whom, why, and on which figure (if any)."""

    decision: str  # flag | withdraw | clear
    reason: str
    measure: str | None = None  # the figure decided on (accuracy | binary | kappa)
    value: float | None = None  # the worker's figure when decided
    bar: float | None = None  # the bar it was held against
    decided_by: str | None = None  # the organiser (None: the store's owner, from the CLI)


def record_decisions(store: Store, round_id: str, workers: Sequence[str], decision: Decision,
                     *, values: Mapping[str, float | None] | None = None) -> int:
    """Append one decision per worker (one transaction); the number recorded.

    The workers must be people of the store and the round must exist; otherwise nothing is
    recorded and the error names what to fix. `values` gives each worker's own figure.
    """
    if decision.decision not in DECISIONS:
        raise StoreError(f"unknown decision {decision.decision!r}; use one of "
                         f"{', '.join(DECISIONS)}")
    if not decision.reason.strip():
        raise StoreError("a decision needs a reason (--reason TEXT): it is the record of why")
    if not workers:
        raise StoreError("no worker named; name them, or use --below BAR to choose by a figure")
    if store.con.execute("SELECT count(*) FROM rounds WHERE round_id = ?",
                         [round_id]).fetchone()[0] == 0:
        raise StoreError(f"no round {round_id!r} in the store; check the round's name")
    people = {a for (a,) in store.con.execute(
        "SELECT assessor_id FROM assessors WHERE coalesce(kind, 'person') <> 'model' AND "
        "assessor_id IN "
        "(SELECT UNNEST(?))", [list(workers)]).fetchall()}
    unknown = [w for w in workers if w not in people]
    if unknown:
        raise StoreError(f"not a person assessor of this store: {', '.join(unknown)}; "
                         "nothing was recorded (check the spelling of the worker's id)")
    now = utcnow()
    rows = [(round_id, w, decision.decision, decision.reason, decision.measure,
             (values or {}).get(w, decision.value), decision.bar, decision.decided_by, now)
            for w in dict.fromkeys(workers)]
    with store.transaction() as con:
        con.executemany(
            "INSERT INTO worker_decisions (round_id, assessor_id, decision, reason, measure, "
            "value, bar, decided_by, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return len(rows)


def decision_record(store: Store, round_id: str | None = None) -> pa.Table:
    """Every decision in the order made: round_id, assessor_id, decision, reason, measure,
    value, bar, decided_by, decided_at (all rounds when round_id is None)."""
    where = "WHERE round_id = ? " if round_id is not None else ""
    return store.arrow(
        "worker decisions",
        "SELECT round_id, assessor_id, decision, reason, measure, value, bar, decided_by, "
        f"decided_at FROM worker_decisions {where}ORDER BY seq",
        [round_id] if round_id is not None else None)
