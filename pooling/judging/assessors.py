"""Assessors and organisers: secret tokens (shown once, stored only as a hash), revoking and
reissuing them, assignments.

Assignment follows TREC practice: each topic of a round goes to one primary assessor
(round-robin over the given assessors, in query_id order), and an `overlap` fraction of every
topic's queued documents is also given to a second assessor, for agreement (static rounds:
an adaptive round has no queue to sample from until its documents are chosen).
"""

from __future__ import annotations

import hashlib
import random
import re
import secrets
from dataclasses import dataclass

from pooling.errors import StoreError
from pooling.formats.ids import id_problem
from pooling.judging.assignments import load_assignments
from pooling.judging.rounds import get_round
from pooling.store.core import Store, utcnow

ROLES = ("assessor", "organiser")
# What an assessor is: a person; a simulated worker (`pooling crowd simulate`), who answers
# like one but is counted nowhere as a person; an automatic judge (`pooling judge`).
PERSON, SIMULATED, MODEL = "person", "simulated", "model"


@dataclass(frozen=True)
class NewAssessor:
    """A freshly added person and their token (the only time the token is available)."""

    assessor_id: str
    name: str
    role: str
    token: str


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_assessor(
    store: Store, name: str, *, contact: str | None = None, role: str = "assessor",
    assessor_id: str | None = None, kind: str = PERSON,
) -> NewAssessor:
    """Add an assessor (or organiser), a person unless `kind` says a simulated worker;
    returns the secret token, which is not stored."""
    if role not in ROLES:
        raise StoreError(f"role must be one of {', '.join(ROLES)}")
    if kind not in (PERSON, SIMULATED):
        raise StoreError(f"an assessor added here is a {PERSON} or {SIMULATED}, not {kind!r}; "
                         "automatic judges are added by `pooling judge`")
    why = id_problem(name, "the assessor's name") if isinstance(name, str) else "a name is text"
    if assessor_id is not None:
        why = why or id_problem(assessor_id, "the assessor id (--id)", names_file=True)
    if why:
        raise StoreError(why)
    assessor_id = assessor_id or slug(name)
    if store.one("find assessor", "SELECT 1 FROM assessors WHERE assessor_id = ?", [assessor_id]):
        raise StoreError(f"assessor id {assessor_id!r} exists; give another name or --id")
    token = secrets.token_urlsafe(24)
    with store.transaction() as con:
        con.execute(
            "INSERT INTO assessors (assessor_id, name, contact, role, token_sha256, created_at, "
            "kind) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [assessor_id, name, contact, role, hash_token(token), utcnow(), kind],
        )
    return NewAssessor(assessor_id, name, role, token)


def authenticate(store: Store, token: str) -> tuple[str, str] | None:
    """The (assessor_id, role) a token belongs to, or None (also for a revoked token)."""
    row = store.one("authenticate", "SELECT assessor_id, role FROM assessors WHERE token_sha256 = ?",
                    [hash_token(token)])
    return (row[0], row[1]) if row else None


def find_person(store: Store, who: str) -> str:
    """The assessor_id of a person named by id, or by the name they were added with."""
    for candidate in dict.fromkeys([who, re.sub(r"[^a-z0-9]+", "-", who.lower()).strip("-")]):
        if store.one("find assessor", "SELECT 1 FROM assessors WHERE assessor_id = ?", [candidate]):
            return candidate
    raise StoreError(f"no assessor or organiser {who!r} in this store; give the id "
                     "`pooling assessors add` printed")


def revoke(store: Store, who: str) -> str:
    """Take a person's access back: their token stops working and the web sessions they
    began end (a running server ends them at once). Returns their assessor_id; issue a new
    token with `issue_token`. Their judgments stay."""
    assessor_id = find_person(store, who)
    with store.transaction() as con:
        con.execute("UPDATE assessors SET token_sha256 = '', revoked_at = ? WHERE assessor_id = ?",
                    [utcnow(), assessor_id])
    return assessor_id


def issue_token(store: Store, who: str) -> NewAssessor:
    """A new secret token for a person (shown once); their old token stops working and the
    sessions begun with it end, as with `revoke`."""
    assessor_id = find_person(store, who)
    token = secrets.token_urlsafe(24)
    with store.transaction() as con:
        con.execute("UPDATE assessors SET token_sha256 = ?, revoked_at = ? WHERE assessor_id = ?",
                    [hash_token(token), utcnow(), assessor_id])
        name, role = con.execute("SELECT name, role FROM assessors WHERE assessor_id = ?",
                                 [assessor_id]).fetchone()
    return NewAssessor(assessor_id, name, role, token)


def assessor_ids(store: Store) -> list[str]:
    return [r[0] for r in store.con.execute("SELECT assessor_id FROM assessors ORDER BY 1").fetchall()]


def assign(
    store: Store, round_id: str, assessors: list[str], *, overlap: float = 0.0, seed: int = 0
) -> dict[str, int]:
    """Give each topic of the round to a primary assessor and an overlap sample to a second.

    Returns the number of topics (primary) and overlap documents per assessor.
    """
    rnd = get_round(store, round_id)
    known = set(assessor_ids(store))
    unknown = [a for a in assessors if a not in known]
    if unknown:
        raise StoreError(f"unknown assessor(s) {', '.join(unknown)}; add them with "
                         "`pooling assessors add`")
    if not assessors:
        raise StoreError("name at least one assessor")
    if not 0.0 <= overlap <= 1.0:
        raise StoreError("--overlap must be between 0 and 1")
    if overlap > 0 and len(assessors) < 2:
        raise StoreError("overlap needs at least two assessors")
    if overlap > 0 and rnd.adaptive:
        raise StoreError(
            f"round {round_id!r} is adaptive ({rnd.strategy}): it chooses each topic's documents "
            "one at a time from the grades so far, so there is no queue to sample --overlap "
            "documents from, and a second assessor's grades would steer the first one's "
            "documents; assign it without --overlap (each topic to one assessor), and measure "
            "agreement on a static round (pool one with e.g. --strategy depth and assign it "
            "with --overlap) or against an automatic judge (`pooling judge --round "
            f"{round_id}`, then `pooling agreement --judge NAME --round {round_id}`)")
    if store.one("find assignment", "SELECT 1 FROM assignments WHERE round_id = ?", [round_id]):
        raise StoreError(f"round {round_id!r} is already assigned")
    rng = random.Random(seed)
    now = utcnow()
    rows: list[tuple] = []
    counts = dict.fromkeys(assessors, 0)
    queue = {}
    for q, d in store.con.execute(
        "SELECT query_id, doc_id FROM pool_entries WHERE round_id = ? ORDER BY query_id, position",
        [round_id],
    ).fetchall():
        queue.setdefault(q, []).append(d)
    for i, q in enumerate(sorted(rnd.topics)):
        primary = assessors[i % len(assessors)]
        rows.append((round_id, primary, q, None, "primary", now))
        counts[primary] += 1
        docs = queue.get(q, [])
        if overlap > 0 and docs:
            second = assessors[(i + 1) % len(assessors)]
            k = max(1, round(overlap * len(docs)))
            for d in sorted(rng.sample(docs, k), key=docs.index):
                rows.append((round_id, second, q, d, "overlap", now))
                counts[second] += 1
    with store.transaction() as con:
        con.executemany("INSERT INTO assignments VALUES (?, ?, ?, ?, ?, ?)", rows)
    return counts


@dataclass(frozen=True)
class Workload:
    """One person's share of a round: whole topics, overlap documents, and the documents those
    come to (queued ones; an adaptive round queues documents only as it serves them)."""

    assessor_id: str
    topics: int
    overlap: int
    documents: int

    @property
    def assignments(self) -> int:
        return self.topics + self.overlap


# Per assessor of a round: topics given whole and overlap documents. Parameter: round_id.
_SHARES = """
    SELECT assessor_id,
           count(DISTINCT query_id) FILTER (WHERE doc_id IS NULL) AS topics,
           count(*) FILTER (WHERE doc_id IS NOT NULL) AS overlap
    FROM assignments
    WHERE round_id = ?
    GROUP BY assessor_id
"""


def workloads(store: Store, round_id: str) -> dict[str, Workload]:
    """What each assessor of a round was given: topics, overlap documents, and the distinct
    queued documents these come to (what `pooling.judging.assignments` lets them judge)."""
    loaded = load_assignments(store, get_round(store, round_id))
    out = {}
    for a, topics, overlap in store.sql("workloads", _SHARES, [round_id]).fetchall():
        documents = sum(len(loaded.docs_for(a, "assessor", q) or ()) for q in loaded.topics_of(a))
        out[a] = Workload(a, topics, overlap, documents)
    return out


def slug(name: str) -> str:
    """An id made of a name: lower-case letters and digits, runs of anything else as '-'."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if not slug:
        raise StoreError("an assessor name needs at least one letter or digit")
    return slug
