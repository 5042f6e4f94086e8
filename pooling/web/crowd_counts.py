"""A crowd round's answers and claims as the judging server holds them.

For each topic of a crowd round the server counts each pair's distinct people with a current
answer (`CrowdTopic`, loaded once and kept up to date as judgments are stored), and keeps the
workers' live claims (`pooling.crowds.queue_policy.Claims`, read back from the stored handouts
after a restart), so a worker's queue (`pooling.crowds.queue_policy.CrowdQueue`) is made without
SQL. The document a page hands out is chosen and claimed under one hold of the lock
(`_Claiming`), and its handout recorded by the writer (`pooling.web.judgment_writer`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from itertools import islice

from pooling.crowds.queue_policy import Claims, CrowdQueue, OpenPairs
from pooling.judging.assignments import ORGANISER, Assignments
from pooling.judging.handouts import handouts, live_claims
from pooling.judging.history import NOT_COUNTED_TOWARD_K, not_counted_toward_k
from pooling.store.core import utcnow
from pooling.web.held_state import HeldState, Miss
from pooling.web.judgment_writer import JudgmentWriter


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


class CrowdCounts(HeldState):
    """The crowd rounds' part of `LiveCampaign`'s memory (see the module doc)."""

    writer: JudgmentWriter
    claims: Claims
    clock: Callable[[], float]  # the claims' clock
    _crowd: dict[tuple[str, str], CrowdTopic]  # (round, topic) of a crowd round
    _crowd_loading: dict[tuple[str, str], list[tuple[int, str, str, str]]]

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
        live claims (`pooling.crowds.queue_policy`); claim: the document it hands out next is
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


class _Claiming:
    """A crowd queue whose next document is claimed for the worker as it is handed out: the
    choice and the claim are one hold of the lock, so two workers asking at once (the event
    loop and a worker thread) cannot both take a pair's last slot of K."""

    def __init__(self, live: CrowdCounts, view: Assignments, assessor_id: str, query_id: str,
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
