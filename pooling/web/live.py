"""The judging pages' working state in memory, and judgments written in group commits.

A crowd of assessors asks the same few questions many times a second: which documents are
mine, which have I judged, what is next. `LiveCampaign` keeps the answers in memory for
static rounds (pools, assignments, each assessor's judgment history per topic, topic and
document texts) and updates them as judgments are stored, so a page costs no SQL. The rules
are the judging core's, asked of what is held: who may judge what
(`pooling.judging.assignments.Assignments`, loaded once per round), what is next
(`pooling.judging.queue.TopicQueue`), whether a submission is valid
(`pooling.judging.validation`) and how to undo (`pooling.judging.judgments.undo`). What an
organiser changes (through the organiser pages or a CLI session on the server) drops only
what it touched (`refresh`): assigning round r reloads r alone, a new assessor reloads
nothing; it is loaded again on the next request. Adaptive rounds choose documents from
everyone's judgments, so they keep using `pooling.web.campaign` directly.

`JudgmentWriter` stores judgments on a cursor of its own, with the judging core's one insert
(`pooling.judging.judgments.insert`) and its outcomes. Submissions that arrive while a
transaction is being committed wait and go together into the next one, so many assessors
share one commit (and one fsync). A judgment is acknowledged only after its commit. When a
shared commit fails, each of its submissions is tried again alone, so a judgment the store
refuses fails only its sender; a full disk fails each of them, none acknowledged, and the
next transaction tries again.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Mapping
from concurrent.futures import Future, InvalidStateError
from itertools import islice

import duckdb
from markupsafe import Markup

from pooling.errors import PoolingError, SubmissionConflict
from pooling.judging import validation
from pooling.judging.assignments import (
    ORGANISER,
    Assignments,
    fingerprints,
    load_assignments,
    members_by_round,
    not_assigned,
)
from pooling.judging.crowd_queue import Claims, OpenPairs
from pooling.judging.handouts import Handout, handouts, live_claims, record_handouts, was_handed
from pooling.judging.history import NOT_COUNTED_TOWARD_K, not_counted_toward_k, replay
from pooling.judging.judgments import (
    VALUES_ROWS,
    Judgment,
    Written,
    first_of,
    insert,
    key,
    outcomes,
    stored_submissions,
    submitted,
    undo,
)
from pooling.judging.queue import CrowdQueue, first_document, static_topic_queue
from pooling.judging.rounds import crowd_rounds
from pooling.store.core import Store, utcnow
from pooling.web import campaign
from pooling.web.campaign import (
    JudgingPage,
    RoundProgress,
    Stored,
    Topic,
    TopicDone,
    TopicProgress,
)
from pooling.web.gate import StoreGate
from pooling.web.handout_proof import HandoutProof
from pooling.web.highlight import highlight, query_terms
from pooling.web.session_writes import UNREAD_BY_PAGES
from pooling.web.topic_order import in_topic_order

MAX_BATCH = VALUES_ROWS  # a group commit is one statement of bound values
# Documents handed out wait at most this long for a commit while judgments keep the writer
# busy (`JudgmentWriter._loop`): what a restart would lose of the claims, never of an answer.
HANDOUT_SECONDS = 1.0
DOC_CACHE = 20_000

# The store tables the pages' memory is made of. A change to a round's row, queue or
# assignments drops that round; to judgments, topics or documents, what was read of them.
ROUND_TABLES = frozenset({"rounds", "pool_entries", "assignments"})
HELD_TABLES = ROUND_TABLES | {"judgments", "topics", "documents", "crowd_handouts"}
# Tables read elsewhere (people and their sessions: `pooling.web.session_book`) or not by the
# pages at all; a change to a table in neither set drops everything, to be safe.
BOOK_TABLES = frozenset({"assessors", "ended_sessions"})
NOT_HELD_TABLES = BOOK_TABLES | UNREAD_BY_PAGES

# (seq, kind, grade): one event of an assessor's history of one document, in seq order.
Event = tuple[int, str, int | None]


def _current(events: list[Event]) -> tuple[int, int] | None:
    """(grade, seq) of a document's current judgment, replaying its events (`replay`)."""
    return replay((kind, (grade, seq)) for seq, kind, grade in events)  # type: ignore[misc]


class CrowdTopic:
    """A crowd round's topic as the server keeps it: each pair's distinct people with a
    current answer (the count toward K), kept up to date as answers and undos are stored.
    Each judgment is applied once, by its seq, whether it came in the load or after it.
    uncounted: the assessors whose answers take no slot of K (automatic judges and
    organisers: `pooling.judging.history.NOT_COUNTED_TOWARD_K`), as of the load."""

    def __init__(self, uncounted: frozenset[str] = frozenset()) -> None:
        self.uncounted = uncounted
        self.depth: dict[tuple[str, str], int] = {}  # (doc, assessor) -> answers on their stack
        self.answers: Counter[str] = Counter()  # doc -> people with a current answer
        self.seen: set[int] = set()
        self.open: OpenPairs | None = None  # the pairs below K in the rule's order

    def apply(self, seq: int, assessor_id: str, doc_id: str, kind: str) -> None:
        if seq in self.seen:
            return
        self.seen.add(seq)
        key = (doc_id, assessor_id)
        depth = self.depth.get(key, 0)
        if kind != "retract":
            self.depth[key] = depth + 1
            if depth == 0:
                self.answers[doc_id] += 1
        elif depth > 0:
            self.depth[key] = depth - 1
            if depth == 1:
                self.answers[doc_id] -= 1

    def recount(self, doc_id: str, claims: int) -> None:
        """The pair's answers or claims changed: its place among the open pairs."""
        if self.open is not None:
            self.open.set(doc_id, self.answers.get(doc_id, 0) + claims)


class WriteFailed(PoolingError):
    """The store could not take a judgment (a full disk, say): nothing of it was stored, and
    the submission can be sent again as it is (its id keeps it from being stored twice)."""


class Miss(Exception):
    """An answer needs the store (not cached, or an adaptive round): ask from a worker thread."""


class LiveCampaign:
    """The pages' questions answered from memory for static rounds (see the module doc).

    `cached(fn, ...)` calls a method only if it can answer from memory (else raises `Miss`):
    the server's event loop answers most requests that way, without a thread hop.
    """

    def __init__(self, gate: StoreGate, proof: HandoutProof | None = None):
        """proof: what signs the handout tokens of crowd pages (`pooling.web.handout_proof`);
        by default a key of this process's own."""
        self.gate = gate
        self.proof = proof or HandoutProof()
        self._local = threading.local()
        self.writer = JudgmentWriter(gate, on_stored=self._remember)
        self._lock = threading.RLock()
        self._rounds: dict[str, Assignments | None] = {}
        self._members: dict[str, frozenset[str]] | None = None  # round -> who works on it
        self._history: dict[tuple[str, str, str], dict[str, list[Event]]] = {}
        self._topics: dict[str, Topic] = {}
        self._docs: OrderedDict[str, tuple[str | None, str | None] | None] = OrderedDict()
        self._fetched: set[tuple[str, str]] = set()  # (round, topic) whose documents were read
        # (doc_id, topic title) -> (the texts marked, their marked title and text)
        self._marked: OrderedDict[tuple[str, str | None], tuple[object, tuple[Markup, Markup]]] = \
            OrderedDict()
        self._crowd: dict[tuple[str, str], CrowdTopic] = {}  # (round, topic) of a crowd round
        self._crowd_loading: dict[tuple[str, str], list[tuple[int, str, str, str]]] = {}
        self._crowd_rounds: list[str] | None = None
        self.claims = Claims()
        self.clock = time.monotonic  # the claims' clock (a test may move it on)
        self.generation = 0
        self._refreshing = threading.Lock()
        self._fingerprints = gate.run_sync(fingerprints)
        # What was read from the store, for those who check what a change costs.
        self.round_loads: Counter[str] = Counter()  # round_id -> its views loaded
        self.history_loads: Counter[str] = Counter()  # round_id -> histories loaded of it

    def invalidate(self) -> None:
        """Forget everything cached: an organiser changed something the pages cannot tell."""
        self.refresh(None)

    def refresh(self, tables: frozenset[str] | None) -> None:
        """Drop what an organiser's committed change to `tables` (None: any) made out of date:
        of the rounds, only those whose row, queue or assignments changed (told by their
        fingerprints); judgment histories, topic texts or document texts only when their
        table was written; nothing for people. Loaded again on the next request."""
        with self._refreshing:
            everything = tables is None or bool(tables - HELD_TABLES - NOT_HELD_TABLES)
            changed: set[str] = set()
            if everything or tables & ROUND_TABLES:
                try:
                    now = self.gate.run_sync(fingerprints)
                except PoolingError:  # cannot tell which rounds changed: all of them did
                    now, everything = {}, True
                changed = {r for r in now.keys() | self._fingerprints.keys()
                           if now.get(r) != self._fingerprints.get(r)}
                self._fingerprints = now
            with self._lock:
                # A person made organiser (or a new automatic judge) changes who counts
                # toward K (`NOT_COUNTED_TOWARD_K`): the crowd counts are read again.
                if everything or changed or {"judgments", "assessors"} & (tables or set()):
                    self._crowd.clear()
                    self._crowd_loading.clear()
                if everything or changed:
                    self._crowd_rounds = None
                if "crowd_handouts" in (tables or ()):  # handed out by someone else: reread
                    self._crowd.clear()
                    self._crowd_loading.clear()
                    self._rounds = {r: v for r, v in self._rounds.items()
                                    if v is None or not v.rnd.crowd}
                if everything:
                    self._rounds.clear()
                    self._history.clear()
                    self._topics.clear()
                    self._docs.clear()
                    self._fetched.clear()
                    self._members = None
                if changed:
                    for r in changed:
                        self._rounds.pop(r, None)
                    self._members = None
                    self._fetched = {k for k in self._fetched if k[0] not in changed}
                    self._history = {k: v for k, v in self._history.items() if k[0] not in changed}
                if "judgments" in (tables or ()):
                    self._history.clear()
                if "topics" in (tables or ()):
                    self._topics.clear()
                if "documents" in (tables or ()):
                    self._docs.clear()
                    self._fetched.clear()
                self.generation += 1  # a load begun before now is not kept

    def close(self) -> None:
        self.writer.close()

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

    # -- cached reads -------------------------------------------------------------------------
    def _round(self, round_id: str) -> Assignments | None:
        with self._lock:
            if round_id in self._rounds:
                return self._rounds[round_id]
            generation = self.generation
        view = self._store(_load_round, round_id)
        with self._lock:
            self.round_loads[round_id] += 1
            if generation == self.generation:
                self._rounds[round_id] = view
        return view

    def _rounds_of(self, assessor_id: str) -> list[str]:
        """The rounds with work assigned to this person, and the crowd rounds open to them
        (or that they were withdrawn from, which their page says), by round_id."""
        with self._lock:
            members, crowd, generation = self._members, self._crowd_rounds, self.generation
        if members is None:
            members = self._store(members_by_round)
            with self._lock:
                if generation == self.generation:
                    self._members = members
        if crowd is None:
            crowd = self._store(crowd_rounds)
            with self._lock:
                if generation == self.generation:
                    self._crowd_rounds = crowd
        mine = {r for r, people in members.items() if assessor_id in people}
        for r in crowd:
            view = self._round(r)
            if view is not None and (view.topics_of(assessor_id) or assessor_id in view.withdrawn):
                mine.add(r)
        return sorted(mine)

    def _answers(self, round_id: str, query_id: str) -> CrowdTopic:
        """A crowd round's topic: doc -> people with a current answer, and its open pairs
        (loaded once)."""
        key = (round_id, query_id)
        with self._lock:
            found = self._crowd.get(key)
            if found is not None:
                return found
            if getattr(self._local, "cached_only", False):
                raise Miss
            self._crowd_loading.setdefault(key, [])
            generation = self.generation
        uncounted, rows, stored_claims = self._store(lambda s: (
            not_counted_toward_k(s), s.con.execute(
                "SELECT seq, assessor_id, doc_id, kind FROM judgments WHERE round_id = ? AND "
                f"query_id = ? AND assessor_id NOT IN ({NOT_COUNTED_TOWARD_K}) ORDER BY seq",
                [round_id, query_id]).fetchall(), live_claims(s, round_id, query_id)))
        topic = CrowdTopic(uncounted)
        for row in rows:
            topic.apply(*row)
        with self._lock:
            for row in self._crowd_loading.pop(key, []):  # stored while this was read
                if row[1] not in uncounted:
                    topic.apply(*row)
            now, wall = self.clock(), utcnow()
            # Claims kept through a restart (a worker's latest one holds), unless held here.
            holding = {h.assessor_id for h in stored_claims
                       if self.claims.held(h.assessor_id, key, now) is not None}
            for h in stored_claims:
                if h.assessor_id not in holding:
                    self.claims.claim(h.assessor_id, key, h.doc_id, now,
                                      until=now + (h.lease_until - wall).total_seconds())
            view = self._rounds.get(round_id)
            if view is not None:
                claims = self.claims.counts(key, self.clock())
                # Regular pairs only: a gold pair that is also queued is never handed out as
                # one (`next_docs`), so among the open pairs it would only use up the few
                # places `_crowd_queue` reads.
                gold = set(view.gold.get(query_id, ()))
                topic.open = OpenPairs(
                    [d for d in view.queue.get(query_id, []) if d not in gold],
                    view.rnd.redundancy,
                    {d: n + claims.get(d, 0) for d, n in topic.answers.items()}
                    | {d: topic.answers.get(d, 0) + n for d, n in claims.items()})
            if generation == self.generation:
                topic = self._crowd.setdefault(key, topic)
        return topic

    def _claims_changed(self) -> None:
        """Move the pairs whose claims changed to their place among the open pairs (under
        the lock)."""
        changed, self.claims.changed[:] = list(self.claims.changed), []
        for topic_key, doc in changed:
            topic = self._crowd.get(topic_key)
            if topic is not None:
                topic.recount(doc, self.claims.count(topic_key, doc))

    def _crowd_queue(self, view: Assignments, assessor_id: str, query_id: str,
                     mine: dict[str, tuple[int, int]], *, claim: bool) -> CrowdQueue | _Claiming:
        """A worker's queue of a crowd round's topic from memory: everyone's answers and the
        live claims (`pooling.judging.crowd_queue`); claim: the document it hands out next is
        claimed for this worker (a page shown), else only looked at (the home page)."""
        loaded = self._answers(view.rnd.round_id, query_id)  # first: it may read the store
        if claim:
            return _Claiming(self, view, assessor_id, query_id, mine, loaded)
        with self._lock:
            return self._crowd_queue_now(view, assessor_id, query_id, mine, loaded)

    def _crowd_queue_now(self, view: Assignments, assessor_id: str, query_id: str,
                         mine: Mapping[str, tuple[int, int]], loaded: CrowdTopic) -> CrowdQueue:
        """A worker's `CrowdQueue` as the answers and claims are now (under the lock): the
        topic's counts as kept (`loaded`, as `_answers` read it, if a refresh dropped them
        since). A choice made from it is claimed before the lock is let go (`_Claiming`)."""
        key = (view.rnd.round_id, query_id)
        now = self.clock()
        held = self.claims.held(assessor_id, key, now)
        claimed = dict(self.claims.counts(key, now))
        self._claims_changed()
        topic = self._crowd.get(key) or loaded
        # The open regular pairs in order, as far as this worker can need them: past their
        # own answers and the document they hold, to the one they are handed.
        order = list(islice(topic.open.in_order(), len(mine) + 2)) if (
            topic.open is not None) else None
        return CrowdQueue(view.rnd, assessor_id, query_id, view.queue.get(query_id, []),
                          view.gold.get(query_id, []), topic.answers, mine, claimed=claimed,
                          held=held, closed=not view.has_topic(assessor_id, "assessor", query_id),
                          order=order)

    def _position(self, docs: list[str], mine: dict[str, tuple[int, int]], doc_id: str,
                  crowd: bool) -> tuple[int, str | None, str | None, str | None]:
        """A page's (position, prev, next, skip). In a crowd round the documents come as the
        crowd rule hands them, so a page counts the worker's answers and links back to their
        latest one only: every pair, gold or not, shows the same."""
        if not crowd:
            i = docs.index(doc_id)
            skip = next((d for d in docs[i + 1:] if d not in mine and d != doc_id), None)
            return (i + 1, docs[i - 1] if i > 0 else None,
                    docs[i + 1] if i + 1 < len(docs) else None, skip)
        order = [d for d, _ in sorted(mine.items(), key=lambda t: t[1][1])]
        position = order.index(doc_id) + 1 if doc_id in mine else len(order) + 1
        before = [d for d in order[:position - 1] if d != doc_id]
        return position, before[-1] if before else None, None, None

    def _events(self, round_id: str, assessor_id: str, query_id: str) -> dict[str, list[Event]]:
        key = (round_id, assessor_id, query_id)
        with self._lock:
            if key in self._history:
                return self._history[key]
            generation = self.generation
        # The person's whole history of the round at once: a crowd round's home page asks for
        # every topic of it, and one query costs less than one per topic.
        rows = self._store(lambda s: s.con.execute(
            "SELECT query_id, doc_id, seq, kind, grade FROM judgments WHERE round_id = ? AND "
            "assessor_id = ? ORDER BY seq", [round_id, assessor_id]).fetchall())
        per_topic: dict[str, dict[str, list[Event]]] = {query_id: {}}
        for q, doc, seq, kind, grade in rows:
            per_topic.setdefault(q, {}).setdefault(doc, []).append((seq, kind, grade))
        with self._lock:
            self.history_loads[round_id] += 1
            if generation != self.generation:
                return per_topic[query_id]
            view = self._rounds.get(round_id)
            for q in set(per_topic) | set(view.rnd.topics if view is not None else ()):
                self._history.setdefault((round_id, assessor_id, q), per_topic.get(q, {}))
            return self._history[key]

    def _mine(self, round_id: str, assessor_id: str, query_id: str) -> dict[str, tuple[int, int]]:
        """doc_id -> (grade, seq) of this person's current judgments of a topic."""
        events = self._events(round_id, assessor_id, query_id)
        with self._lock:
            current = {d: _current(e) for d, e in events.items()}
        return {d: c for d, c in current.items() if c is not None}

    def _topic(self, query_id: str) -> Topic:
        with self._lock:
            if query_id in self._topics:
                return self._topics[query_id]
        topic = self._store(campaign.topic_of, query_id)
        with self._lock:
            self._topics[query_id] = topic
        return topic

    def _prefetch(self, round_id: str, query_id: str) -> None:
        """Read the texts of a topic's whole queue at once (an assessor reads them in turn)."""
        with self._lock:
            if (round_id, query_id) in self._fetched:
                return
        if getattr(self._local, "cached_only", False):
            raise Miss
        with self._lock:
            self._fetched.add((round_id, query_id))
        rows = self._store(lambda s: s.con.execute(
            "SELECT d.doc_id, d.title, d.text FROM pool_entries p JOIN documents d USING (doc_id) "
            "WHERE p.round_id = ? AND p.query_id = ? ORDER BY p.position LIMIT ?",
            [round_id, query_id, DOC_CACHE // 2]).fetchall())
        view = self._rounds.get(round_id)
        gold = view.gold.get(query_id) if view is not None else None
        if gold:  # a crowd round's gold documents are read with the rest, and kept as they are
            rows += self._store(lambda s: s.con.execute(
                "SELECT doc_id, title, text FROM documents WHERE doc_id IN (SELECT UNNEST(?))",
                [gold]).fetchall())
        with self._lock:
            for doc_id, title, text in rows:
                self._docs[doc_id] = (title, text)
            while len(self._docs) > DOC_CACHE:
                self._docs.popitem(last=False)

    def _document(self, doc_id: str) -> tuple[str | None, str | None] | None:
        with self._lock:
            if doc_id in self._docs:
                self._docs.move_to_end(doc_id)
                return self._docs[doc_id]
        doc = self._store(lambda s: s.one(
            "document text", "SELECT title, text FROM documents WHERE doc_id = ?", [doc_id]))
        with self._lock:
            self._docs[doc_id] = doc
            while len(self._docs) > DOC_CACHE:
                self._docs.popitem(last=False)
        return doc

    def _highlighted(self, doc_id: str, doc: tuple[str | None, str | None] | None,
                     topic: Topic) -> tuple[Markup, Markup]:
        """A document's title and text with the topic's terms marked, made once per document
        and topic title (a crowd reads the same documents many times)."""
        key = (doc_id, topic.title)
        with self._lock:
            found = self._marked.get(key)
            if found is not None and found[0] == doc:
                self._marked.move_to_end(key)
                return found[1]
        terms = query_terms(topic.title)
        marked = (highlight(doc[0] if doc else None, terms), highlight(doc[1] if doc else None, terms))
        with self._lock:
            self._marked[key] = (doc, marked)
            while len(self._marked) > DOC_CACHE:
                self._marked.popitem(last=False)
        return marked

    def _next(self, view: Assignments, docs: list[str], mine: dict[str, tuple[int, int]],
              query_id: str, assessor_id: str = "", *, claim: bool = False) -> str | None:
        """The next document of a static round's topic (`pooling.judging.queue`), from memory;
        in a crowd round, the crowd rule's, claimed for the worker when `claim`."""
        if view.rnd.crowd:
            queue = self._crowd_queue(view, assessor_id, query_id, mine, claim=claim)
            if not claim:  # the home page asks only whether anything is left
                return query_id if queue.has_next() else None
            return first_document(queue)
        return first_document(static_topic_queue(view.rnd, query_id, docs, mine))

    # -- what the views call ----------------------------------------------------------------
    def assessor_rounds(self, assessor_id: str) -> list[RoundProgress]:
        round_ids = self._rounds_of(assessor_id)
        if any(v is None or _from_store(v) for v in map(self._round, round_ids)):
            return self._store(campaign.assessor_rounds, assessor_id)
        out = []
        for round_id in round_ids:
            view = self._round(round_id)
            assert view is not None
            topics = []
            queries = in_topic_order(view.topics_of(assessor_id))
            for q in queries:
                docs = view.docs_for(assessor_id, "assessor", q) or []
                mine = self._mine(round_id, assessor_id, q)
                topics.append(TopicProgress(q, self._topic(q).title, len(docs), len(mine),
                                            self._next(view, docs, mine, q, assessor_id) is None))
            out.append(RoundProgress(round_id, view.rnd.adaptive, topics,
                                     withdrawn=assessor_id in view.withdrawn))
        return out

    def judging_page(self, assessor_id: str, role: str, round_id: str, query_id: str,
                     doc_id: str | None = None) -> JudgingPage | TopicDone | None:
        view = self._round(round_id)
        if view is None:
            return None
        if _from_store(view):
            return self._store(campaign.judging_page, assessor_id, role, round_id, query_id, doc_id)
        docs = view.docs_for(assessor_id, role, query_id)
        if docs is None or (doc_id is None and role == "organiser"):
            return None
        mine = self._mine(round_id, assessor_id, query_id)
        crowd = view.rnd.crowd
        if doc_id is None:
            self._prefetch(round_id, query_id)  # first: a claim is taken only once it shows
            doc_id = self._next(view, docs, mine, query_id, assessor_id, claim=True)
        elif doc_id not in docs or (self._unhanded(view, assessor_id, role, query_id, doc_id)
                                    and not self._store(was_handed, round_id, assessor_id,
                                                        query_id, doc_id)):
            return None  # a crowd round's documents are readable once handed out
        grades = {d: g for d, (g, _) in mine.items()}
        topic = self._topic(query_id)
        if doc_id is None:
            first = (min(mine, key=lambda d: mine[d][1]) if mine else None) if crowd else (
                docs[0] if docs else None)
            return TopicDone(round_id, topic, len(grades), len(docs), first)
        position, prev_doc, next_doc, skip = self._position(docs, mine, doc_id, crowd)
        self._prefetch(round_id, query_id)
        doc = self._document(doc_id)
        doc_title, doc_text = self._highlighted(doc_id, doc, topic)
        return JudgingPage(
            round_id=round_id, adaptive=False, topic=topic, doc_id=doc_id,
            doc_title=doc_title, doc_text=doc_text,
            doc_missing=doc is None, grades=campaign.scale_of(view.rnd),
            current_grade=grades.get(doc_id), position=position, total=len(docs),
            judged=len(grades), prev_doc=prev_doc, next_doc=next_doc, skip_doc=skip,
            can_undo=bool(grades), unjudgeable=validation.unjudgeable_refused(view.rnd) is None,
            current_unjudgeable=doc_id in grades and grades[doc_id] is None,
            handout=self.proof.token(round_id, assessor_id, query_id, doc_id)
            if crowd and role != ORGANISER else None,
        )

    def judge(self, assessor_id: str, role: str, round_id: str, query_id: str, doc_id: str, *,
              grade: object, submission_id: object, seconds: object = None,
              note: object = None, grades: object = None, unjudgeable: object = None,
              handout: object = None) -> Stored | None:
        """Record one judgment, acknowledged once committed; a repeated submission id is a no-op.
        grades: a subtopic round's grade per subtopic (`campaign.judge`); unjudgeable: true
        for a "broken link / can't judge" answer instead of a grade; handout: in a crowd
        round, the token of the page that handed the document out (`handout_proof`), which
        proves the handout when neither memory nor store knows of it (a restart came between
        the page and its record)."""
        validation.texts(doc_id=doc_id)
        validation.storable(round_id=round_id, query_id=query_id, doc_id=doc_id, note=note)
        view = self._round(round_id)
        if view is None:
            return None
        if _from_store(view):
            return self._store(campaign.judge, assessor_id, role, round_id, query_id, doc_id,
                               grade=grade, submission_id=submission_id, seconds=seconds,
                               note=note, grades=grades, unjudgeable=unjudgeable)
        if not view.may_judge(assessor_id, role, query_id, doc_id):
            if not self._unhanded(view, assessor_id, role, query_id, doc_id):
                return None
            if not (self.proof.proves(handout, round_id, assessor_id, query_id, doc_id)
                    or self._store(was_handed, round_id, assessor_id, query_id, doc_id)):
                raise validation.JudgmentRefused(not_assigned(view.rnd, assessor_id, query_id,
                                                              doc_id))
            with self._lock:  # handed: proven by its token, or stored since this view was read
                view.handed_to(assessor_id, query_id).add(doc_id)
        validation.grades_sent(view.rnd, query_id, grade, grades)
        j = validation.submission(view.rnd, assessor_id, query_id, doc_id, grade_value=grade,
                                  submission_id_value=submission_id, seconds_value=seconds,
                                  note_value=note, unjudgeable_value=unjudgeable)
        if getattr(self._local, "cached_only", False):
            return j  # the caller awaits `stored(j)`: no thread waits for the commit
        return self.stored(j, self.writer.submit(j))

    def stored(self, j: Judgment, written: Written) -> Stored:
        """The outcome of a judgment the writer has committed (or found already stored); the
        writer has added it to the cached history already."""
        return Stored(j.doc_id, duplicate=written.seq is None)

    def undo(self, assessor_id: str, role: str, round_id: str, query_id: str, *,
             submission_id: object) -> Stored | None:
        view = self._round(round_id)
        if view is None:
            return None
        if _from_store(view):
            return self._store(campaign.undo, assessor_id, role, round_id, query_id,
                               submission_id=submission_id)
        if not view.has_topic(assessor_id, role, query_id):
            return None
        sid = validation.submission_id(submission_id)
        done = undo(round_id, assessor_id, query_id, sid, self._mine(round_id, assessor_id, query_id),
                    find=lambda: self._store(submitted, assessor_id, sid), store_one=self.writer.submit)
        return Stored(done.doc_id, duplicate=done.duplicate)

    def _unhanded(self, view: Assignments, assessor_id: str, role: str, query_id: str,
                  doc_id: str) -> bool:
        """Whether a worker of a crowd round asks about a document of their topic that this
        view does not know was handed to them (the store may: it was handed after the view
        was read); everyone else is answered by `Assignments.may_judge` alone."""
        if not view.rnd.crowd or role == ORGANISER:
            return False
        with self._lock:
            return (view.has_topic(assessor_id, role, query_id)
                    and doc_id not in view.handed_to(assessor_id, query_id)
                    and view.in_crowd_topic(query_id, doc_id))

    def _remember(self, j: Judgment, seq: int) -> None:
        """Add a stored judgment to the cached history (unless a reload already has it), and
        in a crowd round to the pair's answers, ending the worker's claim on it."""
        with self._lock:
            crowd_key = (j.round_id or "", j.query_id)
            topic = self._crowd.get(crowd_key)
            if topic is not None and j.assessor_id in topic.uncounted:
                topic = None  # an automatic judge's or organiser's answer: no slot of K
            elif topic is not None:
                topic.apply(seq, j.assessor_id, j.doc_id, j.kind)
            elif crowd_key in self._crowd_loading:  # the load leaves out whom it must
                self._crowd_loading[crowd_key].append((seq, j.assessor_id, j.doc_id, j.kind))
            if j.kind != "retract":
                self.claims.release(j.assessor_id, crowd_key, j.doc_id)
            if topic is not None:
                topic.recount(j.doc_id, self.claims.count(crowd_key, j.doc_id))
            self._claims_changed()
            events = self._history.get((j.round_id, j.assessor_id, j.query_id))
            if events is None:
                return
            doc_events = events.setdefault(j.doc_id, [])
            if all(e[0] != seq for e in doc_events):
                doc_events.append((seq, j.kind, j.grade))
                doc_events.sort()


class _Claiming:
    """A crowd queue whose next document is claimed for the worker as it is handed out: the
    choice and the claim are one hold of the lock, so two workers asking at once (the event
    loop and a worker thread) cannot both take a pair's last slot of K."""

    def __init__(self, live: LiveCampaign, view: Assignments, assessor_id: str, query_id: str,
                 mine: Mapping[str, tuple[int, int]], loaded: CrowdTopic):
        self._live, self._view, self._assessor = live, view, assessor_id
        self._query_id, self._mine, self._loaded = query_id, mine, loaded

    def next_pairs(self, limit: int | None = None) -> list[tuple[str, str]]:
        live = self._live
        handed: list[str] = []
        with live._lock:
            queue = live._crowd_queue_now(self._view, self._assessor, self._query_id,
                                          self._mine, self._loaded)
            pairs = queue.next_pairs(limit)
            if pairs:
                key = (self._view.rnd.round_id, self._query_id)
                doc = pairs[0][1]
                if live.claims.held(self._assessor, key, live.clock()) != doc:
                    handed = [doc]  # newly handed
                    self._view.handed_to(self._assessor, self._query_id).add(doc)
                live.claims.claim(self._assessor, key, doc, live.clock())
                live._claims_changed()
        if handed:  # the writer stores it in a while; the page's token proves it meanwhile
            live.writer.submit_handouts(handouts(self._view.rnd.round_id, self._assessor,
                                                 self._query_id, handed, live.claims.lease))
        return pairs


def _from_store(view: Assignments) -> bool:
    """Whether a round's pages are answered from the store (`pooling.web.campaign`) rather
    than from memory: an adaptive round chooses from everyone's judgments, and a subtopic
    round's page shows a grade per subtopic, which the memory does not keep."""
    return view.rnd.adaptive or view.rnd.item.has_parts


def _load_round(store: Store, round_id: str) -> Assignments | None:
    """A round's whole queue and who works on what, to answer from memory."""
    rnd = campaign.find_round(store, round_id)
    return None if rnd is None else load_assignments(store, rnd)


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
