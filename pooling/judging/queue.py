"""What to judge next: static and adaptive rounds behind one interface (`PairQueue`), for
automatic judges (`round_queue`) and for people on the judging pages and the API
(`topic_queue`, `next_document`).

Static rounds, qrels versions and files of pairs know every pair in advance: `next_pairs`
hands out at once all those the judge has not judged yet. An adaptive round chooses each
topic's next document from the grades so far (`pooling.judging.rounds.choose_next`, the step
the judging pages take for people), so `next_pairs` hands out at most one pair per topic, and
a topic's next pair only once the grade of the one before is stored.

In an adaptive round the strategy learns from the people's judgments of the round (they steer
it, as in the judging pages) and, for documents no person has judged, from the judge's own.
A document chosen before (for anyone) that the judge has not judged comes first, so the
judge's judgments cover the round's pool as they do a static round's; documents it chooses
join the round's pool, as those chosen for people do.

A person works through one topic at a time: in a static round, the documents they may judge
(`pooling.judging.assignments`) in queue order, less those they have judged, until the
round's stopping rule ends the topic (`TopicQueue`, which the judging server builds from
what it holds in memory); in an adaptive round, the strategy's choice from everyone's grades
of the topic (`ChosenQueue`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Protocol

from pooling.judging.assignments import load_assignments
from pooling.judging.history import effective_judgments
from pooling.judging.plugins import Registry
from pooling.judging.rounds import Round, choose_next, get_round, stopped, topic_rankings
from pooling.store.core import Store

Pair = tuple[str, str]  # (query_id, doc_id)


class PairQueue(Protocol):
    """The pairs a judge works through, asked for again after each batch is stored."""

    adaptive: bool  # whether pairs are chosen from the grades so far (known only as judged)
    judged_before: int  # pairs the judge had judged before this job

    @property
    def pairs(self) -> int:
        """Pairs judged before plus those handed out so far (a static queue: all it holds)."""
        ...

    @property
    def query_ids(self) -> list[str]:
        """The topics the queue may hand out pairs of."""
        ...

    def next_pairs(self, limit: int | None = None) -> list[Pair]:
        """Up to `limit` pairs to judge now; empty when there is nothing more to judge."""
        ...

    def failed(self, pairs: Iterable[Pair]) -> None:
        """Pairs the judge could not grade in this job: they are not handed out again."""
        ...

    def remaining(self) -> int | None:
        """At most how many pairs are still to come (None: not known in advance)."""
        ...


class ListQueue:
    """A list of pairs known in advance, less those judged before (`done`)."""

    adaptive = False

    def __init__(self, pairs: Sequence[Pair], done: Iterable[Pair] = ()):
        unique = list(dict.fromkeys(pairs))
        judged = set(done)
        self._all = len(unique)
        self._todo = deque(p for p in unique if p not in judged)
        self.judged_before = self._all - len(self._todo)
        self._topics = list(dict.fromkeys(q for q, _ in self._todo))

    @property
    def pairs(self) -> int:
        return self._all

    @property
    def query_ids(self) -> list[str]:
        return self._topics

    def next_pairs(self, limit: int | None = None) -> list[Pair]:
        n = len(self._todo) if limit is None else max(0, min(limit, len(self._todo)))
        return [self._todo.popleft() for _ in range(n)]

    def failed(self, pairs: Iterable[Pair]) -> None:
        pass  # handed out once already

    def remaining(self) -> int | None:
        return len(self._todo)


class AdaptiveQueue:
    """An adaptive round's pairs for one judge, chosen one per topic as grades come in (see
    the module doc). Topics take turns, so a limit smaller than the topics spreads over all
    of them in turn."""

    adaptive = True

    def __init__(self, store: Store, rnd: Round, judge_id: str):
        self.store = store
        self.round = rnd
        self.judge_id = judge_id
        # The pooled rankings, read once for the job (the round's runs do not change).
        self._rankings = topic_rankings(store, list(rnd.pooled_runs), rnd.candidate_depth,
                                        list(rnd.topics), rnd.order)
        self._turns = deque(rnd.topics)
        self._failed: set[Pair] = set()
        self.done: list[str] = []  # topics with nothing more to judge
        self.stuck: list[str] = []  # topics whose next document could not be graded now
        self.handed_out = 0
        self.judged_before = sum(len(own) for _, own in self._view().values())

    @property
    def pairs(self) -> int:
        return self.judged_before + self.handed_out

    @property
    def query_ids(self) -> list[str]:
        return list(self.round.topics)

    def next_pairs(self, limit: int | None = None) -> list[Pair]:
        view = self._view()  # read again: the grades stored since the last call count
        out: list[Pair] = []
        for _ in range(len(self._turns)):
            if limit is not None and len(out) >= limit:
                break
            q = self._turns.popleft()
            judged, own = view.get(q, ([], set()))
            doc = choose_next(self.store, self.round, q, judged, done=own,
                              topic=self._rankings.get(q))
            if doc is None:
                self.done.append(q)
            elif (q, doc) in self._failed:
                self.stuck.append(q)  # the strategy needs this grade before it goes on
            else:
                out.append((q, doc))
                self._turns.append(q)
        self.handed_out += len(out)
        return out

    def failed(self, pairs: Iterable[Pair]) -> None:
        self._failed.update(pairs)

    def remaining(self) -> int | None:
        """With a budget, what the open topics' budgets leave the judge; else None."""
        view = self._view()
        left = 0
        for q in self._turns:
            budget = self.round.topic_budget(q)
            if budget is None:
                return None
            left += max(budget - len(view.get(q, ([], set()))[1]), 0)
        return left

    def _view(self) -> dict[str, tuple[list[tuple[str, int]], set[str]]]:
        """Per topic: the (doc_id, grade) judgments the strategy learns from, in the order
        made (people's, and the judge's of documents no person has judged), and the
        documents the judge has judged."""
        people = effective_judgments(self.store, self.round.round_id)
        own = effective_judgments(self.store, self.round.round_id, assessor_id=self.judge_id)
        rows: dict[str, list[tuple[int, str, int]]] = {}
        by_people: dict[str, set[str]] = {}
        for q, d, g, seq in _rows(people):
            rows.setdefault(q, []).append((seq, d, g))
            by_people.setdefault(q, set()).add(d)
        judged_by_judge: dict[str, set[str]] = {}
        for q, d, g, seq in _rows(own):
            judged_by_judge.setdefault(q, set()).add(d)
            if d not in by_people.get(q, ()):
                rows.setdefault(q, []).append((seq, d, g))
        topics = set(rows) | set(judged_by_judge)
        return {q: ([(d, g) for _, d, g in sorted(rows.get(q, []))], judged_by_judge.get(q, set()))
                for q in topics if q in self.round.topics}


def _rows(table) -> Iterable[tuple[str, str, int, int]]:
    return zip(*(table[c].to_pylist() for c in ("query_id", "doc_id", "grade", "seq")), strict=True)


def round_queue(store: Store, round_id: str, judge_id: str) -> PairQueue:
    """The next pairs for this judge in this round: the round's pool less what the judge has
    judged in it (static), or the adaptive round's choices as the judge grades them."""
    rnd = get_round(store, round_id)
    if rnd.adaptive:
        return AdaptiveQueue(store, rnd, judge_id)
    pool = [tuple(r) for r in store.con.execute(
        "SELECT query_id, doc_id FROM pool_entries WHERE round_id = ? ORDER BY query_id, position",
        [round_id]).fetchall()]
    return ListQueue(pool, judged_by(store, judge_id, round_id))


def judged_by(store: Store, judge_id: str, round_id: str | None) -> set[Pair]:
    """The pairs a judge has judged in a round (None: outside any round)."""
    return {tuple(r) for r in store.con.execute(
        "SELECT query_id, doc_id FROM judgments WHERE assessor_id = ? AND kind = 'judge' "
        "AND round_id IS NOT DISTINCT FROM ?", [judge_id, round_id]).fetchall()}


# -- a person's queue of one topic ---------------------------------------------------------


class OneTopicQueue:
    """What a person's queue of one topic reports, static or adaptive: its one topic, and the
    pairs it covers (those judged before it was made and those it has handed out since)."""

    _query_id: str
    judged_before: int
    handed_out: int

    @property
    def pairs(self) -> int:
        return self.judged_before + self.handed_out

    @property
    def query_ids(self) -> list[str]:
        return [self._query_id]


class TopicQueue(OneTopicQueue):
    """One person's documents of one topic of a static round: `docs` (what they may judge,
    in queue order) less those `judged`; nothing once the round's stopping rule has ended
    the topic. Reads nothing: the judging server builds it from what it holds in memory."""

    adaptive = False

    def __init__(self, query_id: str, docs: Sequence[str], judged: Collection[str], *,
                 ended: bool = False):
        self._query_id = query_id
        self._docs = docs
        self._judged = judged
        self._ended = ended
        self._at = 0
        self.handed_out = 0
        self.judged_before = len(judged)

    def next_pairs(self, limit: int | None = None) -> list[Pair]:
        out: list[Pair] = []
        while (not self._ended and self._at < len(self._docs)
               and (limit is None or len(out) < limit)):
            doc = self._docs[self._at]
            self._at += 1
            if doc not in self._judged:
                out.append((self._query_id, doc))
        self.handed_out += len(out)
        return out

    def failed(self, pairs: Iterable[Pair]) -> None:
        pass  # handed out once already

    def remaining(self) -> int | None:
        if self._ended:
            return 0
        return sum(d not in self._judged for d in self._docs[self._at:])


def static_topic_queue(rnd: Round, query_id: str, docs: Sequence[str],
                       mine: Mapping[str, tuple[int, int]]) -> TopicQueue:
    """A person's `TopicQueue` from their current judgments of the topic, doc_id -> (grade,
    seq): the stopping rule reads their grades in the order they were made."""
    ended = bool(rnd.params.get("stop_after")) and stopped(
        rnd, [g for g, _ in sorted(mine.values(), key=lambda t: t[1]) if g is not None])
    return TopicQueue(query_id, docs, mine, ended=ended)


class ChosenQueue(OneTopicQueue):
    """One topic of an adaptive round, for a person: the strategy's next choice from the
    people's grades of the topic so far (`judged`, in the order made); one document at a
    time, the next only once its grade is stored. Choosing may write (the round's queue
    grows): use it under the store's write lock."""

    adaptive = True

    def __init__(self, store: Store, rnd: Round, query_id: str, judged: Sequence[tuple[str, int]]):
        self.store = store
        self.round = rnd
        self._query_id = query_id
        self._judged = list(judged)
        self._given = False
        self.handed_out = 0
        self.judged_before = len(self._judged)

    def next_pairs(self, limit: int | None = None) -> list[Pair]:
        if self._given or limit == 0:
            return []
        self._given = True
        doc = choose_next(self.store, self.round, self._query_id, self._judged)
        if doc is None:
            return []
        self.handed_out += 1
        return [(self._query_id, doc)]

    def failed(self, pairs: Iterable[Pair]) -> None:
        pass

    def remaining(self) -> int | None:
        return None


class QueuePolicy(Protocol):
    """How a round hands a person the next documents of a topic: static and adaptive rounds
    here, crowd rounds from `pooling.crowds` (registered in `QUEUE_POLICIES` under the name
    `Round.queue_policy` gives)."""

    def topic_queue(self, store: Store, rnd: Round, assessor_id: str, query_id: str
                    ) -> PairQueue:
        """A person's queue of one topic, read from the store."""
        ...

    def topic_done(self, store: Store, rnd: Round, assessor_id: str, query_id: str) -> bool:
        """Whether the person has nothing more to judge in the topic now (handing nothing
        out)."""
        ...


QUEUE_POLICIES: Registry[QueuePolicy] = Registry("pooling.queue_policies", "queue policy")


class _OwnProgress:
    """Static and adaptive rounds: adaptive ones learn from every assessor's judgments of the
    topic (`ChosenQueue`); static ones follow the person's own progress through what they may
    judge (`TopicQueue`)."""

    def __init__(self, adaptive: bool):
        self.adaptive = adaptive

    def topic_queue(self, store: Store, rnd: Round, assessor_id: str, query_id: str
                    ) -> PairQueue:
        judged = effective_judgments(store, rnd.round_id, query_id=query_id,
                                     assessor_id=None if self.adaptive else assessor_id,
                                     answers=not self.adaptive)
        made = sorted(zip(*(judged[c].to_pylist() for c in ("doc_id", "grade", "seq")),
                          strict=True), key=lambda t: t[2])
        if self.adaptive:
            return ChosenQueue(store, rnd, query_id, [(d, g) for d, g, _ in made])
        loaded = load_assignments(store, rnd, query_id=query_id, assessor_id=assessor_id)
        docs = loaded.docs_for(assessor_id, "assessor", query_id) or []
        return static_topic_queue(rnd, query_id, docs, {d: (g, seq) for d, g, seq in made})

    def topic_done(self, store: Store, rnd: Round, assessor_id: str, query_id: str) -> bool:
        return first_document(self.topic_queue(store, rnd, assessor_id, query_id)) is None


QUEUE_POLICIES.register("static", _OwnProgress(adaptive=False))
QUEUE_POLICIES.register("adaptive", _OwnProgress(adaptive=True))


def topic_queue(store: Store, rnd: Round, assessor_id: str, query_id: str) -> PairQueue:
    """A person's queue of one topic, read from the store, by the round's queue policy:
    static rounds, their documents not judged yet (`TopicQueue`); adaptive rounds, the
    strategy's choice from the people's judgments of the topic (`ChosenQueue`); crowd rounds,
    the crowd rule over everyone's answers (`pooling.crowds.queue_policy.CrowdQueue`). Either
    way the stopping rule ends it early."""
    return QUEUE_POLICIES.get(rnd.queue_policy).topic_queue(store, rnd, assessor_id, query_id)


def topic_done(store: Store, rnd: Round, assessor_id: str, query_id: str) -> bool:
    """Whether a person has nothing more to judge in a topic now; asking hands nothing out
    in a crowd round (a home page is not a claim)."""
    return QUEUE_POLICIES.get(rnd.queue_policy).topic_done(store, rnd, assessor_id, query_id)


def next_document(store: Store, round_id: str, assessor_id: str, query_id: str) -> str | None:
    """The next document this person should judge for a topic of a round, or None (done):
    the first pair of their `topic_queue`. Call it under the store's write lock: in an
    adaptive round it may write."""
    return first_document(topic_queue(store, get_round(store, round_id), assessor_id, query_id))


def first_document(queue: PairQueue) -> str | None:
    """The document of the next pair a queue hands out, or None when it is done."""
    pairs = queue.next_pairs(1)
    return pairs[0][1] if pairs else None
