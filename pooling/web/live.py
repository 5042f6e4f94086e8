"""The judging pages' working state in memory.

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

The memory is held in parts, a module each: a crowd round's answers and claims
(`pooling.web.crowd_counts`), judgment histories (`pooling.web.history_cache`) and texts
(`pooling.web.text_cache`), all read by the rule of `pooling.web.held_state` (from memory, or
from the store unless only memory may answer now). Judgments are stored in group commits by
`pooling.web.judgment_writer`.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict

from markupsafe import Markup

from pooling.crowds.queue_policy import Claims
from pooling.errors import PoolingError
from pooling.judging import validation
from pooling.judging.assignments import (
    ORGANISER,
    Assignments,
    fingerprints,
    load_assignments,
    members_by_round,
    not_assigned,
)
from pooling.judging.handouts import was_handed
from pooling.judging.judgments import Judgment, Written, submitted, undo
from pooling.judging.queue import first_document, static_topic_queue
from pooling.judging.rounds import crowd_rounds
from pooling.store.core import Store
from pooling.web import campaign
from pooling.web.campaign import (
    JudgingPage,
    RoundProgress,
    Stored,
    Topic,
    TopicDone,
    TopicProgress,
)
from pooling.web.crowd_counts import CrowdCounts, CrowdTopic
from pooling.web.gate import StoreGate
from pooling.web.handout_proof import HandoutProof
from pooling.web.history_cache import Event, HistoryCache
from pooling.web.judgment_writer import JudgmentWriter
from pooling.web.session_writes import UNREAD_BY_PAGES
from pooling.web.text_cache import TextCache
from pooling.web.topic_order import in_topic_order

# The store tables the pages' memory is made of. A change to a round's row, queue or
# assignments drops that round; to judgments, topics or documents, what was read of them.
ROUND_TABLES = frozenset({"rounds", "pool_entries", "assignments"})
HELD_TABLES = ROUND_TABLES | {"judgments", "topics", "documents", "crowd_handouts"}
# Tables read elsewhere (people and their sessions: `pooling.web.session_book`) or not by the
# pages at all; a change to a table in neither set drops everything, to be safe.
BOOK_TABLES = frozenset({"assessors", "ended_sessions"})
NOT_HELD_TABLES = BOOK_TABLES | UNREAD_BY_PAGES


class LiveCampaign(CrowdCounts, HistoryCache, TextCache):
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


def _from_store(view: Assignments) -> bool:
    """Whether a round's pages are answered from the store (`pooling.web.campaign`) rather
    than from memory: an adaptive round chooses from everyone's judgments, and a subtopic
    round's page shows a grade per subtopic, which the memory does not keep."""
    return view.rnd.adaptive or view.rnd.item.has_parts


def _load_round(store: Store, round_id: str) -> Assignments | None:
    """A round's whole queue and who works on what, to answer from memory."""
    rnd = campaign.find_round(store, round_id)
    return None if rnd is None else load_assignments(store, rnd)
