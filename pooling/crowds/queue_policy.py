"""What a worker of a crowd round is handed next: the one rule, over counts kept elsewhere,
and the queue policy and may-judge extension through which the judging core applies it.

A crowd round (`pooling.judging.rounds.Round.crowd`) asks each queued pair for K distinct
people's answers (a grade or unjudgeable) and mixes known-answer ("gold") pairs into every
worker's queue. A worker's next document of a topic (`next_docs`):

1. the document they were handed last and have not answered yet, while its claim holds (a
   page reloaded shows the same document);
2. a gold document, when it is the worker's gold turn (`gold_turn`: one gold slot in each
   block of about 1 / rate answers, at an offset of the worker's own, so gold stays within
   one pair of rate x answered and no fixed position gives it away) and a gold document of
   the topic is left for them; each worker meets the gold documents in an order of their
   own (`gold_order`), so two workers do not meet them in the same order;
3. else the queued documents they have not answered whose answers plus live claims are
   fewer than K, fewest first, then in queue order.

When no queued document is left for the worker (every pair has K answers and claims, or they
answered the rest), nothing is handed out, gold neither: gold measures a worker whose answers
count, and a finished round hands out nothing and shows as done.

The rule reads neither the store nor the clock: the store path (`CrowdPolicy`, the queue
policy the core's `pooling.judging.queue.topic_queue` asks for a crowd round) counts
answers from the history, the judging server (`pooling.web.crowd_counts`) keeps the counts and the
claims (`Claims`) in memory. A claim is the document handed to a worker and not answered yet;
it counts toward K for everyone else until it is answered, replaced by the worker's next
claim in the topic, or its lease (`LEASE_SECONDS`) runs out, so a worker who leaves blocks a
pair for at most one lease.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from itertools import islice

from pooling.crowds.decisions import withdrawn_workers
from pooling.judging.assignments import MAY_JUDGE, Assignments, load_assignments
from pooling.judging.handouts import handouts, live_claims, record_handouts
from pooling.judging.history import effective_judgments, not_counted_toward_k
from pooling.judging.queue import QUEUE_POLICIES, OneTopicQueue, Pair
from pooling.judging.rounds import Round
from pooling.store.core import Store

LEASE_SECONDS = 600.0  # how long a handed-out, unanswered document counts toward K


def gold_turn(answered: int, gold_answered: int, rate: float, key: str = "") -> bool:
    """Whether a worker's next pair (their answer number `answered`, from 0) is gold.

    A worker's answers fall in blocks of about 1 / rate (block b: answers floor(b / rate) up
    to floor((b + 1) / rate)), and each block holds one gold slot at an offset drawn from a
    hash of `key` (the worker and the topic) and b. The next pair is gold while the worker
    has answered fewer gold pairs than there are slots up to it. So gold stays within one
    pair of rate x answered, and a worker cannot tell from a page's position which pair is
    gold: no fixed answer (not the first, not every tenth) is the gold one."""
    if rate <= 0:
        return False
    p = answered
    block = int(p * rate)
    while int((block + 1) / rate) <= p:  # floating point: the block whose span holds p
        block += 1
    while block > 0 and int(block / rate) > p:
        block -= 1
    start, end = int(block / rate), max(int((block + 1) / rate), int(block / rate) + 1)
    digest = hashlib.sha1(f"{key}\0{block}".encode()).digest()
    slot = start + int.from_bytes(digest[:8], "big") % (end - start)
    return gold_answered < block + (1 if slot <= p else 0)


def gold_key(worker: str, gold: Sequence[str]) -> str:
    """What a worker's gold slots are drawn from: the worker and the topic (named by its
    gold documents, which no other topic shares)."""
    return f"{worker}\0{min(gold) if gold else ''}"


def gold_order(worker: str, gold: Sequence[str]) -> list[str]:
    """The topic's gold documents in the order this worker meets them: by a hash of worker
    and document, so the order is fixed for a worker and differs between workers."""
    return sorted(gold, key=lambda d: hashlib.sha1(f"{worker}\0{d}".encode()).digest())


def next_docs(worker: str, queue: Sequence[str], *, redundancy: int,
              answers: Mapping[str, int], claimed: Mapping[str, int], mine: Collection[str],
              gold: Sequence[str] = (), gold_rate: float = 0.0, gold_answered: int = 0,
              held: str | None = None, limit: int = 1,
              order: Iterable[str] | None = None) -> list[str]:
    """Up to `limit` documents of one topic to hand `worker` next (module doc).

    queue: the topic's queued documents in queue order; answers: doc -> distinct people with
    a current answer; claimed: doc -> live claims (`Claims.counts`); mine: the documents this worker
    has a current answer of (gold ones too); gold: the topic's gold documents, which never
    count toward K and are not handed out as regular pairs; gold_answered: how many of
    `mine` are gold; held: the document this worker holds a live claim on, if any. With a
    limit above one, each document handed counts as answered for the ones after it.
    order: the queued documents already in the rule's order (fewest answers and claims
    first, then queue order: `OpenPairs.in_order`), read only as far as needed; by default
    the queue is ordered here.
    """
    out: list[str] = []
    gold_set = frozenset(gold)
    answered, gold_done = len(mine), gold_answered
    if held is not None and held not in mine and len(out) < limit:
        out.append(held)
        answered += 1
        gold_done += held in gold_set
    gold_left = [d for d in gold_order(worker, gold) if d not in mine and d not in out]
    key = gold_key(worker, gold)
    wanted = limit - len(out)
    if order is None:
        order = (d for _, _, d in sorted(
            (answers.get(d, 0) + claimed.get(d, 0), i, d) for i, d in enumerate(queue)))
    regular = list(islice((d for d in order if d not in mine and d not in gold_set and d != held
                           and answers.get(d, 0) + claimed.get(d, 0) < redundancy),
                          max(wanted, 0)))
    if not regular:
        return out  # gold only measures a worker with pairs to answer: none left, none handed
    while len(out) < limit and (gold_left or regular):
        if gold_left and (gold_turn(answered, gold_done, gold_rate, key) or not regular):
            if not gold_turn(answered, gold_done, gold_rate, key):
                break  # only gold is left, and it is not its turn: the topic is done for now
            out.append(gold_left.pop(0))
            gold_done += 1
        else:
            out.append(regular.pop(0))
        answered += 1
    return out


def has_work(queue: Sequence[str], *, worker: str, redundancy: int, answers: Mapping[str, int],
             claimed: Mapping[str, int], mine: Collection[str], gold: Sequence[str] = (),
             gold_rate: float = 0.0, gold_answered: int = 0, held: str | None = None,
             order: Iterable[str] | None = None) -> bool:
    """Whether `next_docs` would hand the worker a document now, found without ordering the
    queue (the home page asks it of every topic); order: as for `next_docs`. It takes the
    same arguments; the gold ones decide nothing here, since gold is handed out only beside
    a queued document left to answer."""
    if held is not None and held not in mine:
        return True
    gold_set = frozenset(gold)  # gold is handed out only beside a pair to answer (`next_docs`)
    return any(d not in mine and d not in gold_set
               and answers.get(d, 0) + claimed.get(d, 0) < redundancy
               for d in (queue if order is None else order))


class OpenPairs:
    """A topic's queued pairs below K in the rule's order (fewest answers and claims first,
    then queue order), kept up to date as counts change (`set`), so that `next_docs` reads
    only the first few (`in_order`) instead of ordering the whole queue for each page."""

    def __init__(self, queue: Sequence[str], redundancy: int,
                 counts: Mapping[str, int] | None = None):
        self.queue = list(queue)
        self.redundancy = redundancy
        self._at = {d: i for i, d in enumerate(self.queue)}
        self._level: dict[str, int] = {}
        self._levels: list[list[int]] = [[] for _ in range(redundancy)]
        for i, d in enumerate(self.queue):
            level = (counts or {}).get(d, 0)
            self._level[d] = level
            if level < redundancy:
                self._levels[level].append(i)

    def set(self, doc: str, count: int) -> None:
        """The pair's answers plus claims are now `count` (a document not queued: ignored)."""
        count = max(count, 0)
        i = self._at.get(doc)
        before = self._level.get(doc)
        if i is None or before == count:
            return
        if before is not None and before < self.redundancy:
            row = self._levels[before]
            del row[bisect.bisect_left(row, i)]
        self._level[doc] = count
        if count < self.redundancy:
            bisect.insort(self._levels[max(count, 0)], i)

    def in_order(self) -> Iterator[str]:
        """The pairs below K, fewest answers and claims first, then in queue order."""
        for row in self._levels:
            for i in row:
                yield self.queue[i]


def may_answer(doc_id: str, handed: Collection[str]) -> bool:
    """Whether a worker may answer a document of a crowd round: only one handed to them
    (`pooling.judging.handouts`; one they answered before counts, to correct it). K is applied
    to what is handed out, so an answer to anything else could push a pair past K. A late
    answer to a document handed to them is taken (`pooling.judging.history.over_k` then
    decides whether it counts)."""
    return doc_id in handed


def reached(answers: Mapping[str, int], queue: Sequence[str], redundancy: int,
            gold: Collection[str] = ()) -> int:
    """How many of a topic's queued pairs (gold left out) have K answers: a crowd round's
    progress."""
    return sum(answers.get(d, 0) >= redundancy for d in queue if d not in gold)


Key = tuple[str, str]  # (round_id, query_id): the topic a claim is in


class Claims:
    """Documents handed out and not answered yet, each with its lease: at most one per
    worker and topic (a worker's next claim in the topic replaces the one before). Counts
    per topic are kept as claims come and go, and expired claims are dropped as time passes
    (`now` is passed in: the caller's clock), so asking costs no scan of everyone's claims."""

    def __init__(self, lease: float = LEASE_SECONDS):
        self.lease = lease
        self._held: dict[tuple[str, Key], tuple[str, float]] = {}  # (worker, key) -> (doc, until)
        self._counts: dict[Key, Counter[str]] = {}
        self._expiry: list[tuple[float, str, Key, str]] = []  # a heap of (until, worker, key, doc)
        self.changed: list[tuple[Key, str]] = []  # (topic, doc) whose count changed, for the caller

    def claim(self, worker: str, key: Key, doc: str, now: float,
              until: float | None = None) -> None:
        """Hand `doc` to `worker` now, until the lease runs out (`until`: a claim read back
        from the store, with what is left of its lease)."""
        self._expire(now)
        self._drop(worker, key)
        until = now + self.lease if until is None else until
        if until <= now:
            return
        self._held[(worker, key)] = (doc, until)
        self._counts.setdefault(key, Counter())[doc] += 1
        self.changed.append((key, doc))
        heapq.heappush(self._expiry, (until, worker, key, doc))

    def release(self, worker: str, key: Key, doc: str) -> None:
        """The worker answered `doc`: their claim on it ends (if it is the one they hold)."""
        held = self._held.get((worker, key))
        if held is not None and held[0] == doc:
            self._drop(worker, key)

    def held(self, worker: str, key: Key, now: float) -> str | None:
        """The document this worker holds a live claim on in the topic, or None."""
        self._expire(now)
        held = self._held.get((worker, key))
        return None if held is None else held[0]

    def count(self, key: Key, doc: str) -> int:
        """Live claims of one document (as of the last time asked with a clock)."""
        return self._counts.get(key, {}).get(doc, 0)

    def counts(self, key: Key, now: float) -> Mapping[str, int]:
        """doc -> live claims in the topic (a worker's own is on the document they hold,
        which `next_docs` hands them first and never counts); read it, do not keep it."""
        self._expire(now)
        return self._counts.get(key) or {}

    def clear(self) -> None:
        """Forget every claim (the round was reloaded)."""
        self._held.clear()
        self._counts.clear()
        self._expiry.clear()
        self.changed.clear()

    def _drop(self, worker: str, key: Key) -> None:
        held = self._held.pop((worker, key), None)
        if held is not None:
            counts = self._counts[key]
            counts[held[0]] -= 1
            if counts[held[0]] <= 0:
                del counts[held[0]]
            self.changed.append((key, held[0]))

    def _expire(self, now: float) -> None:
        while self._expiry and self._expiry[0][0] <= now:
            until, worker, key, doc = heapq.heappop(self._expiry)
            if self._held.get((worker, key)) == (doc, until):
                self._drop(worker, key)


# -- the queue policy and may-judge extension the core asks -------------------------------


class CrowdQueue(OneTopicQueue):
    """One worker's documents of one topic of a crowd round, from the answers so far
    (`next_docs`, the one rule; the judging server adds the
    claims of documents handed out and not answered yet). Reads nothing."""

    adaptive = False

    def __init__(self, rnd: Round, assessor_id: str, query_id: str, docs: Sequence[str],
                 gold: Sequence[str], answers: Mapping[str, int], mine: Collection[str], *,
                 claimed: Mapping[str, int] | None = None, held: str | None = None,
                 closed: bool = False, order: Iterable[str] | None = None,
                 on_handed: Callable[[list[str]], None] | None = None):
        self._query_id = query_id
        self._rnd = rnd
        self._assessor = assessor_id
        self._gold = list(gold)
        self._docs = docs  # gold documents among them are never handed out as regular pairs
        self._answers = answers
        self._claimed = claimed or {}
        self._mine = set(mine)
        self._held = held
        self._closed = closed
        self._order = order  # the open pairs in the rule's order, when the caller keeps them
        self._on_handed = on_handed  # records what is handed out (the store's claims)
        self.handed_out = 0
        self.judged_before = len(self._mine)

    def next_pairs(self, limit: int | None = None) -> list[Pair]:
        if self._closed or limit == 0:
            return []
        docs = next_docs(self._assessor, self._docs, redundancy=self._rnd.redundancy,
                         answers=self._answers, claimed=self._claimed, mine=self._mine,
                         gold=self._gold, gold_rate=self._rnd.gold_rate,
                         gold_answered=len(self._mine & set(self._gold)), held=self._held,
                         limit=limit if limit is not None else len(self._docs) + len(self._gold),
                         order=self._order)
        if docs and self._on_handed is not None:
            self._on_handed([d for d in docs if d != self._held])  # a held one is claimed already
        self._mine.update(docs)
        self._held = None
        self.handed_out += len(docs)
        return [(self._query_id, d) for d in docs]

    def has_next(self) -> bool:
        """Whether the queue would hand out a document now (without handing it out)."""
        return not self._closed and has_work(
            self._docs, redundancy=self._rnd.redundancy, answers=self._answers,
            claimed=self._claimed, mine=self._mine, gold=self._gold, gold_rate=self._rnd.gold_rate,
            gold_answered=len(self._mine & set(self._gold)), held=self._held, order=self._order,
            worker=self._assessor)

    def failed(self, pairs: Iterable[Pair]) -> None:
        pass

    def remaining(self) -> int | None:
        return None  # it depends on what the other workers answer meanwhile


def answer_counts(table, left_out: Collection[str] = ()) -> dict[str, int]:
    """doc_id -> distinct people with a current answer, from `effective_judgments(...,
    answers=True)` of one topic; left_out: assessors whose answers count toward no K
    (`pooling.judging.history.not_counted_toward_k`)."""
    counts: dict[str, int] = {}
    for a, d in zip(table["assessor_id"].to_pylist(), table["doc_id"].to_pylist(), strict=True):
        if a not in left_out:
            counts[d] = counts.get(d, 0) + 1
    return counts


class CrowdPolicy:
    """The crowd rounds' queue policy the core asks (`pooling.judging.queue.QUEUE_POLICIES`
    under "crowd"): a worker's queue of a topic read from the store, with the claims that
    hold now; the worker's own latest claim is handed to them again first."""

    def topic_queue(self, store: Store, rnd: Round, assessor_id: str, query_id: str
                    ) -> CrowdQueue:
        everyone = effective_judgments(store, rnd.round_id, query_id=query_id, answers=True)
        mine = {d for a, d in zip(everyone["assessor_id"].to_pylist(),
                                  everyone["doc_id"].to_pylist(), strict=True) if a == assessor_id}
        loaded = load_assignments(store, rnd, query_id=query_id, assessor_id=assessor_id)
        # The claims that hold now (`pooling.judging.handouts`): the others' count toward K;
        # the worker's own latest one is handed to them again first.
        claims = live_claims(store, rnd.round_id, query_id)
        own = [h for h in claims if h.assessor_id == assessor_id]

        def hand_out(docs: list[str]) -> None:
            with store.transaction() as con:
                record_handouts(con, handouts(rnd.round_id, assessor_id, query_id, docs,
                                              LEASE_SECONDS))

        return CrowdQueue(rnd, assessor_id, query_id, loaded.queue.get(query_id, []),
                          loaded.gold.get(query_id, []),
                          answer_counts(everyone, not_counted_toward_k(store)), mine,
                          claimed=Counter(h.doc_id for h in claims if h.assessor_id != assessor_id),
                          held=max(own, key=lambda h: h.handed_at).doc_id if own else None,
                          closed=not loaded.has_topic(assessor_id, "assessor", query_id),
                          on_handed=hand_out)

    def topic_done(self, store: Store, rnd: Round, assessor_id: str, query_id: str) -> bool:
        return not self.topic_queue(store, rnd, assessor_id, query_id).has_next()


class HandedOnly:
    """The crowd rounds' may-judge extension (`pooling.judging.assignments.MAY_JUDGE`): a
    worker may answer only a document handed to them (`may_answer`), and a worker the
    organiser withdrew (`pooling.crowds.decisions`) is closed out of the round."""

    def withdrawn(self, store: Store, rnd: Round) -> frozenset[str]:
        return withdrawn_workers(store, rnd.round_id) if rnd.crowd else frozenset()

    def may(self, view: Assignments, assessor_id: str, query_id: str, doc_id: str) -> bool:
        return not view.rnd.crowd or may_answer(doc_id, view.handed_to(assessor_id, query_id))


QUEUE_POLICIES.register("crowd", CrowdPolicy())
MAY_JUDGE.register("crowd", HandedOnly())
