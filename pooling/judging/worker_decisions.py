"""What an organiser decided about the workers of a crowd round: flagged, withdrawn, cleared.

Decisions are rows appended to `worker_decisions`, never updated: the latest one of a worker
in a round holds, and every one stays as the record of who decided what, when, on which
figure. A decision changes what a worker is handed next, never what they already did: their
judgments stay in the history and in every rule that reads it.
"""

from __future__ import annotations

from pooling.store.core import Store

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
