"""Integer views of one topic's rankings, shared by the adaptive strategies.

Adaptive selectors work on small integers rather than doc_id strings: `TopicIndex` numbers
the topic's candidates (in round-robin order, so a lower index means an earlier rank), and
`RunCursors` walks each run's ranking past judged documents, crediting the run for them.
"""

from __future__ import annotations

import numpy as np

from pooling.strategies.base import TopicRuns

UNJUDGED = -(2**31)


# Two documents whose values differ by less than this share of the larger are tied: a value
# summed over the runs by a matrix product is rounded in an order the BLAS library chooses,
# so an exact tie (two runs ranking two documents alike) may come out a last bit apart.
TIE = 1e-12


def first_best(value: np.ndarray) -> int:
    """The index of the highest value, ties (within `TIE` of it) going to the earliest index:
    the earlier document in round-robin order, whichever BLAS summed the values."""
    best = float(value.max())
    return int(np.flatnonzero(value >= best - TIE * abs(best))[0])


class TopicIndex:
    """One topic's candidates as integers.

    docs: doc_ids in round-robin order (rank 1 of every run, then rank 2, ...);
    rankings: per run, the doc indexes best first; ranks: runs x docs, the 1-based rank of
    each doc in each run, 0 where the run does not retrieve it.
    """

    def __init__(self, topic: TopicRuns):
        self.query_id = topic.query_id
        self.run_ids = topic.run_ids
        lists = list(topic.rankings.values())
        index: dict[str, int] = {}
        docs: list[str] = []
        longest = max((len(r) for r in lists), default=0)
        for rank in range(longest):
            for ranking in lists:
                if rank < len(ranking) and ranking[rank] not in index:
                    index[ranking[rank]] = len(docs)
                    docs.append(ranking[rank])
        self.docs = docs
        self.index = index
        self.rankings = [np.fromiter((index[d] for d in r), dtype=np.int64, count=len(r)) for r in lists]
        self.ranks = np.zeros((len(lists), len(docs)), dtype=np.int64)
        for s, ranking in enumerate(self.rankings):
            self.ranks[s, ranking] = np.arange(1, len(ranking) + 1)

    @property
    def n_runs(self) -> int:
        return len(self.rankings)

    @property
    def n_docs(self) -> int:
        return len(self.docs)


class RunCursors:
    """Each run's position in its ranking, and its judged/relevant counts over the prefix passed.

    A run is credited for every judged document its cursor passes, whoever asked for the
    judgment (another run, the floor, an earlier round): Losada et al.'s bandits do the same.
    `discount` < 1 weights recent rewards more (the non-stationary MaxMean, MM-NS).
    """

    def __init__(self, index: TopicIndex, discount: float = 1.0):
        self.index = index
        self.pos = np.zeros(index.n_runs, dtype=np.int64)
        self.judged = np.zeros(index.n_runs)
        self.relevant = np.zeros(index.n_runs)
        self.discount = discount
        self.grades = np.full(index.n_docs, UNJUDGED, dtype=np.int64)

    def record(self, doc: int, grade: int) -> None:
        self.grades[doc] = grade

    def head(self, run: int) -> int | None:
        """The run's next unjudged document, crediting the run for judged ones on the way."""
        ranking = self.index.rankings[run]
        pos = int(self.pos[run])
        while pos < len(ranking):
            doc = int(ranking[pos])
            grade = int(self.grades[doc])
            if grade == UNJUDGED:
                self.pos[run] = pos
                return doc
            self.judged[run] = self.discount * self.judged[run] + 1.0
            self.relevant[run] = self.discount * self.relevant[run] + (1.0 if grade > 0 else 0.0)
            pos += 1
        self.pos[run] = pos
        return None

    def heads(self) -> list[int | None]:
        return [self.head(s) for s in range(self.index.n_runs)]


class IndexedSelector:
    """Base of the integer selectors: maps doc_ids in and out and remembers grades."""

    def __init__(self, topic: TopicRuns):
        self.topic_index = TopicIndex(topic)

    def next(self) -> str | None:
        doc = self._next()
        return None if doc is None else self.topic_index.docs[doc]

    def observe(self, doc_id: str, grade: int) -> None:
        doc = self.topic_index.index.get(doc_id)
        if doc is not None:  # a judgment outside the candidates teaches nothing
            self._observe(doc, int(grade))

    def _next(self) -> int | None:
        raise NotImplementedError

    def _observe(self, doc: int, grade: int) -> None:
        raise NotImplementedError
