"""Who may judge what: the one rule, over a round's queue and its assignments.

An organiser adjudicates: every queued document of every topic of the round is theirs. An
assessor judges the queued documents of a topic assigned to them whole (an assignment with
no doc_id) and their overlap documents (an assignment naming the document). Anyone else,
and anything not queued, may judge nothing.

A crowd round (`Round.crowd`) is open: every person assessor may judge every queued document
and every gold document of every topic of the round, with no assignment, unless the
organiser has withdrawn them from the round (`pooling.crowds.decisions`); automatic
judges and revoked people are not among its workers. What each worker is handed next is
`pooling.crowds.queue_policy`, and a worker judges only what was handed to them
(`pooling.judging.handouts`).

`load_assignments` reads the rows the rule needs (the whole round, or one topic, or one
person's topics) into an `Assignments`; every question is then answered from those rows in
memory. The CLI, the batches, the pages and the judging server's cache all ask it, so the
rule is written once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa

from pooling.judging.handouts import handed_docs
from pooling.judging.plugins import Registry
from pooling.judging.rounds import Round, crowd_rounds, get_round, gold_pairs
from pooling.store.core import Store

ORGANISER = "organiser"


class MayJudge(Protocol):
    """A rule a package above the core adds to who may judge what in a round (registered in
    `MAY_JUDGE`; crowds add theirs: only what was handed out, withdrawn workers closed out)."""

    def withdrawn(self, store: Store, rnd: Round) -> frozenset[str]:
        """The people the rule closes the round to (read when a round's assignments are)."""
        ...

    def may(self, view: Assignments, assessor_id: str, query_id: str, doc_id: str) -> bool:
        """Whether a person the round is open to may judge this unit of it."""
        ...


MAY_JUDGE: Registry[MayJudge] = Registry("pooling.may_judge", "may-judge extension")


@dataclass
class Assignments:
    """A round's queue and who works on what (all of it, or the part that was loaded)."""

    rnd: Round
    queue: dict[str, list[str]]  # query_id -> doc_ids in queue order
    whole: dict[str, set[str]]  # assessor -> topics assigned whole
    overlap: dict[str, dict[str, set[str]]]  # assessor -> topic -> overlap doc_ids
    positions: dict[str, list[int]] | None = None  # query_id -> positions, beside `queue`
    _queued: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)  # sets of `queue`
    gold: dict[str, list[str]] = field(default_factory=dict)  # a crowd round's gold docs per topic
    closed: frozenset[str] = frozenset()  # who may not work in a crowd round (module doc)
    withdrawn: frozenset[str] = frozenset()  # of those, the workers the organiser withdrew
    judges: frozenset[str] = frozenset()  # of those, automatic judges (their answers count not)
    # a crowd round's documents handed to each worker: assessor -> topic -> doc_ids
    handed: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    # the may-judge extensions (`MAY_JUDGE`) every judgment of the round also passes
    extensions: tuple[MayJudge, ...] = ()

    def has_topic(self, assessor_id: str, role: str | None, query_id: str) -> bool:
        """Whether this person works on the topic (an organiser: every topic of the round;
        in a crowd round, every person not withdrawn)."""
        if role == ORGANISER:
            return query_id in self.rnd.topics
        if role is None:  # unknown people work on nothing
            return False
        if self.rnd.crowd:
            return query_id in self.rnd.topics and assessor_id not in self.closed
        return query_id in self.whole.get(assessor_id, ()) or query_id in self.overlap.get(assessor_id, {})

    def docs_for(self, assessor_id: str, role: str | None, query_id: str) -> list[str] | None:
        """The documents this person may judge for a topic, in queue order (None: not theirs);
        in a crowd round, the queue then the topic's gold documents."""
        if not self.has_topic(assessor_id, role, query_id):
            return None
        docs = self.queue.get(query_id, [])
        if self.rnd.crowd:
            queued = self._queued_in(query_id)
            return list(docs) + [d for d in self.gold.get(query_id, ()) if d not in queued]
        if role == ORGANISER or query_id in self.whole.get(assessor_id, ()):
            return list(docs)
        mine = self.overlap.get(assessor_id, {}).get(query_id, set())
        return [d for d in docs if d in mine]

    def may_judge(self, assessor_id: str, role: str | None, query_id: str, doc_id: str) -> bool:
        """Whether this person may see and judge this queued document."""
        if role is None:  # unknown people may judge nothing
            return False
        if self.rnd.crowd and role != ORGANISER:
            return self.has_topic(assessor_id, role, query_id) and self.in_crowd_topic(
                query_id, doc_id) and all(
                rule.may(self, assessor_id, query_id, doc_id) for rule in self.extensions)
        if role == ORGANISER or query_id in self.whole.get(assessor_id, ()):
            return doc_id in self._queued_in(query_id)
        return (doc_id in self.overlap.get(assessor_id, {}).get(query_id, ())
                and doc_id in self._queued_in(query_id))  # (`docs_for`, without the list)

    def in_crowd_topic(self, query_id: str, doc_id: str) -> bool:
        """Whether a document is one of a crowd round's topic: queued, or gold."""
        return doc_id in self._queued_in(query_id) or doc_id in self.gold_in(query_id)

    def handed_to(self, assessor_id: str, query_id: str) -> set[str]:
        """The documents of a topic of a crowd round handed to this worker so far (live: the
        judging server adds each one it hands out)."""
        return self.handed.setdefault(assessor_id, {}).setdefault(query_id, set())

    def _queued_in(self, query_id: str) -> frozenset[str]:
        """A topic's queued documents as a set, made when first asked (a batch asks for
        thousands of rows; the judging server for each judgment)."""
        found = self._queued.get(query_id)
        if found is None:
            found = self._queued.setdefault(query_id, frozenset(self.queue.get(query_id, ())))
        return found

    def gold_in(self, query_id: str) -> frozenset[str]:
        """A crowd round's gold documents of a topic, as a set (made when first asked)."""
        key = "\0gold\0" + query_id
        found = self._queued.get(key)
        if found is None:
            found = self._queued.setdefault(key, frozenset(self.gold.get(query_id, ())))
        return found

    def topics_of(self, assessor_id: str) -> set[str]:
        """The topics an assessor has work in (whole or overlap; in a crowd round, every topic
        unless they may not work in it)."""
        if self.rnd.crowd:
            return set(self.rnd.topics) if assessor_id not in self.closed else set()
        return set(self.whole.get(assessor_id, ())) | set(self.overlap.get(assessor_id, {}))

    def items(self, assessor_id: str) -> pa.Table:
        """An assessor's work: query_id, doc_id, position, role (primary|overlap), by topic and
        position (load with positions=True)."""
        if self.positions is None:
            raise ValueError("load the assignments with positions=True to list items")
        rows: list[tuple[str, int, int, str, str]] = []
        for q in self.whole.get(assessor_id, ()):
            rows += [(q, p, 0, d, "primary") for d, p in zip(self.queue.get(q, []),
                                                              self.positions.get(q, []), strict=True)]
        for q, docs in self.overlap.get(assessor_id, {}).items():
            rows += [(q, p, 1, d, "overlap") for d, p in zip(self.queue.get(q, []),
                                                              self.positions.get(q, []), strict=True)
                     if d in docs]
        rows.sort()
        return pa.table({
            "query_id": pa.array([r[0] for r in rows], pa.string()),
            "doc_id": pa.array([r[3] for r in rows], pa.string()),
            "position": pa.array([r[1] for r in rows], pa.int64()),
            "role": pa.array([r[4] for r in rows], pa.string()),
        })


def role_of(store: Store, assessor_id: str) -> str | None:
    """A person's role, or None for someone the store does not know."""
    row = store.one("assessor role", "SELECT role FROM assessors WHERE assessor_id = ?", [assessor_id])
    return None if row is None else row[0]


# Step "queue": the round's queued documents in order, of one topic or of the topics the
# given person has work in (parameters: round_id, query_id or NULL, assessor_id or NULL).
_QUEUE = """
    SELECT query_id, doc_id, position FROM pool_entries
    WHERE round_id = $round_id
      AND ($query_id IS NULL OR query_id = $query_id)
      AND ($assessor_id IS NULL OR query_id IN (
            SELECT query_id FROM assignments
            WHERE round_id = $round_id AND assessor_id = $assessor_id))
    ORDER BY query_id, position
"""

# Step "assignments": who works on what in the round, narrowed like the queue.
_ASSIGNED = """
    SELECT assessor_id, query_id, doc_id FROM assignments
    WHERE round_id = $round_id
      AND ($query_id IS NULL OR query_id = $query_id)
      AND ($assessor_id IS NULL OR assessor_id = $assessor_id)
"""


def load_assignments(store: Store, rnd: Round | str, *, query_id: str | None = None,
                     assessor_id: str | None = None, positions: bool = False) -> Assignments:
    """The rows `Assignments` answers from: the whole round, or only one topic, or only the
    topics of one person (who then is the only assessor it knows; an organiser needs the
    whole round or a topic). positions: keep each queued document's position too."""
    rnd = get_round(store, rnd) if isinstance(rnd, str) else rnd
    params = {"round_id": rnd.round_id, "query_id": query_id, "assessor_id": assessor_id}
    queue: dict[str, list[str]] = {}
    where: dict[str, list[int]] = {}
    # A crowd round has no assignments: its whole queue (or the topic's) is everyone's.
    queued = dict(params, assessor_id=None) if rnd.crowd else params
    for q, d, p in store.sql("queue", _QUEUE, queued).fetchall():
        queue.setdefault(q, []).append(d)
        if positions:
            where.setdefault(q, []).append(p)
    whole: dict[str, set[str]] = {}
    overlap: dict[str, dict[str, set[str]]] = {}
    for a, q, d in store.sql("assignments", _ASSIGNED, params).fetchall():
        if d is None:
            whole.setdefault(a, set()).add(q)
        else:
            overlap.setdefault(a, {}).setdefault(q, set()).add(d)
    loaded = Assignments(rnd, queue, whole, overlap, where if positions else None)
    if rnd.crowd:
        gold = gold_pairs(store, rnd)
        loaded.gold = {q: d for q, d in gold.items() if query_id is None or q == query_id}
        # The extension of the round's queue policy is required: a crowd round whose rule is
        # not installed refuses every answer rather than taking any.
        loaded.extensions = (MAY_JUDGE.get(rnd.queue_policy),)
        loaded.withdrawn = frozenset().union(*(rule.withdrawn(store, rnd)
                                               for rule in loaded.extensions))
        judges, revoked = not_workers(store)
        loaded.judges = judges
        loaded.closed = loaded.withdrawn | judges | revoked
        loaded.handed = handed_docs(store, rnd.round_id, assessor_id, query_id)
    return loaded


def not_workers(store: Store) -> tuple[frozenset[str], frozenset[str]]:
    """Who is not a crowd round's worker: (automatic judges, people whose access is
    revoked)."""
    rows = store.sql("not workers", "SELECT assessor_id, kind = 'model' FROM assessors "
                     "WHERE kind = 'model' OR token_sha256 = ''").fetchall()
    return (frozenset(a for a, model in rows if model),
            frozenset(a for a, model in rows if not model))


def may_judge(store: Store, round_id: str, assessor_id: str, query_id: str, doc_id: str,
              role: str | None = None) -> bool:
    """Whether this person may judge this queued document of the round (role looked up if
    not given; unknown people may judge nothing)."""
    if role is None:
        role = role_of(store, assessor_id)
        if role is None:
            return False
    loaded = load_assignments(store, round_id, query_id=query_id,
                              assessor_id=None if role == ORGANISER else assessor_id)
    return loaded.may_judge(assessor_id, role, query_id, doc_id)


def assigned_items(store: Store, round_id: str, assessor_id: str) -> pa.Table:
    """An assessor's work in a round: query_id, doc_id, position, role (primary|overlap)."""
    loaded = load_assignments(store, round_id, assessor_id=assessor_id, positions=True)
    return loaded.items(assessor_id)


def topics_by_round(store: Store, assessor_id: str) -> dict[str, list[str]]:
    """The rounds and topics a person has work in: round_id -> query_ids, both in id order."""
    out: dict[str, list[str]] = {}
    for round_id, query_id in store.sql(
            "my topics", "SELECT DISTINCT round_id, query_id FROM assignments WHERE assessor_id = ? "
            "ORDER BY round_id, query_id", [assessor_id]).fetchall():
        out.setdefault(round_id, []).append(query_id)
    for round_id in crowd_rounds(store):
        loaded = load_assignments(store, round_id, assessor_id=assessor_id)
        if loaded.topics_of(assessor_id):
            out[round_id] = sorted(loaded.topics_of(assessor_id))
    return dict(sorted(out.items()))



def round_people(store: Store, round_id: str) -> list[str]:
    """The people with work assigned in a round, by assessor_id."""
    return [r[0] for r in store.sql(
        "round assessors", "SELECT DISTINCT assessor_id FROM assignments WHERE round_id = ? "
        "ORDER BY 1", [round_id]).fetchall()]


def members_by_round(store: Store) -> dict[str, frozenset[str]]:
    """round_id -> the people with work assigned in it."""
    members: dict[str, set[str]] = {}
    for r, a in store.sql("round members", "SELECT DISTINCT round_id, assessor_id "
                                           "FROM assignments").fetchall():
        members.setdefault(r, set()).add(a)
    return {r: frozenset(people) for r, people in members.items()}


# Per round, a fingerprint of everything `load_assignments` reads of it: its row, its queue
# and who works on what. Sums of row hashes: any change to any row changes them, in whatever
# order.
_FINGERPRINTS = """
    WITH r AS (SELECT round_id, hash(rounds) AS h FROM rounds),
    p AS (SELECT round_id, count(*) AS n, sum(hash(query_id, doc_id, position)::HUGEINT) AS h
          FROM pool_entries GROUP BY round_id),
    a AS (SELECT round_id, count(*) AS n,
                 sum(hash(assessor_id, query_id, doc_id, role)::HUGEINT) AS h
          FROM assignments GROUP BY round_id)
    SELECT round_id, r.h, p.n, p.h, a.n, a.h
    FROM r FULL JOIN p USING (round_id) FULL JOIN a USING (round_id)
"""


def fingerprints(store: Store) -> dict[str, tuple]:
    """round_id -> the fingerprint of its row, queue and assignments: what was loaded of a
    round is out of date when its fingerprint changed."""
    return {row[0]: row[1:] for row in store.sql("round fingerprints", _FINGERPRINTS).fetchall()}


def not_assigned(rnd: Round, assessor_id: str, query_id: str, doc_id: str) -> str:
    """Why a judgment is refused: the document is not this person's to judge in the round."""
    why = (f"{rnd.item.unit.name} {doc_id!r} of topic {query_id!r} is not assigned to {assessor_id!r} "
           f"in round {rnd.round_id!r}")
    if rnd.crowd:  # `Assignments.may_judge`: a worker answers what they were handed
        why += ("; in a crowd round a worker answers only documents handed to them (the judging "
                "page, the API's next, `pooling batch export`), so that no pair gets more than "
                f"its {rnd.redundancy} answer(s): ask for the next document and answer that")
    return why
