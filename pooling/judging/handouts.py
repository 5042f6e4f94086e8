"""What a crowd round handed to whom: the durable record of its claims.

Every document handed to a worker of a crowd round (a page shown, an API `next`, a batch
exported, a simulated worker's task) is appended to `crowd_handouts` with the time its claim
holds until (`pooling.crowds.queue_policy.LEASE_SECONDS` from then). The record serves two
rules of `pooling.crowds.queue_policy`: a worker may answer only a document handed to them
(`may_answer`), so nobody pushes a pair past K by answering what they were never given; and a
live claim counts toward the pair's K for everyone else, in the store's queue as in the
judging server's memory, which reloads the claims from here after a restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from pooling.judging.history import NOT_COUNTED_TOWARD_K
from pooling.store.core import Store, utcnow


class Handout(NamedTuple):
    """One document handed to a worker, claimed for them until `lease_until` (UTC)."""

    round_id: str
    assessor_id: str
    query_id: str
    doc_id: str
    handed_at: datetime
    lease_until: datetime


def handouts(round_id: str, assessor_id: str, query_id: str, docs: Sequence[str],
             lease: float, now: datetime | None = None) -> list[Handout]:
    """The records of `docs` handed to a worker now, each claimed for `lease` seconds."""
    at = now or utcnow()
    until = at + timedelta(seconds=lease)
    return [Handout(round_id, assessor_id, query_id, d, at, until) for d in docs]


def record_handouts(con: Any, rows: Sequence[Handout]) -> None:
    """Append handouts in one statement of bound values (con: a connection or a cursor; the
    caller's transaction, or one of its own)."""
    if not rows:
        return
    con.execute("INSERT INTO crowd_handouts SELECT UNNEST(?), UNNEST(?), UNNEST(?), UNNEST(?), "
                "UNNEST(?), UNNEST(?)", [[r[i] for r in rows] for i in range(6)])


def handed_docs(store: Store, round_id: str, assessor_id: str | None = None,
                query_id: str | None = None) -> dict[str, dict[str, set[str]]]:
    """assessor_id -> query_id -> the documents handed to them in the round, and those they
    have judged (an answer made before handouts were recorded was handed then)."""
    out: dict[str, dict[str, set[str]]] = {}
    # Step "handed": handouts and judged documents of the round, narrowed to a worker/topic.
    for a, q, d in store.sql("handed", """
            SELECT assessor_id, query_id, doc_id FROM crowd_handouts
            WHERE round_id = $round_id AND ($assessor_id IS NULL OR assessor_id = $assessor_id)
              AND ($query_id IS NULL OR query_id = $query_id)
            UNION
            SELECT assessor_id, query_id, doc_id FROM judgments
            WHERE round_id = $round_id AND ($assessor_id IS NULL OR assessor_id = $assessor_id)
              AND ($query_id IS NULL OR query_id = $query_id)""",
            {"round_id": round_id, "assessor_id": assessor_id, "query_id": query_id}).fetchall():
        out.setdefault(a, {}).setdefault(q, set()).add(d)
    return out


def was_handed(store: Store, round_id: str, assessor_id: str, query_id: str, doc_id: str) -> bool:
    """Whether this document was handed to the worker (or judged by them) in the round."""
    return doc_id in handed_docs(store, round_id, assessor_id, query_id).get(
        assessor_id, {}).get(query_id, set())


def live_claims(store: Store, round_id: str, query_id: str,
                now: datetime | None = None) -> list[Handout]:
    """The topic's claims that hold now: each worker's handouts whose lease has not run out
    and that they have not answered (a retract leaves a document answered no longer, but a
    claim ended by an answer does not come back). Organisers and automatic judges hold none."""
    rows = store.sql("live claims", f"""
        SELECT h.round_id, h.assessor_id, h.query_id, h.doc_id, max(h.handed_at),
               max(h.lease_until)
        FROM crowd_handouts h
        WHERE h.round_id = ? AND h.query_id = ?
          AND h.assessor_id NOT IN ({NOT_COUNTED_TOWARD_K})
          AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.round_id = h.round_id
                          AND j.assessor_id = h.assessor_id AND j.query_id = h.query_id
                          AND j.doc_id = h.doc_id AND j.kind <> 'retract')
        GROUP BY ALL HAVING max(h.lease_until) > ?
        ORDER BY max(h.handed_at)""", [round_id, query_id, now or utcnow()]).fetchall()
    return [Handout(*r) for r in rows]
