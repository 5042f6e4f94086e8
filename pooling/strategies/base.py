"""What every pooling strategy shares: per-topic candidate rankings, selectors, a registry.

A strategy works one topic at a time over the pooled runs' rankings, each in trec_eval order
(score descending, then doc_id descending) or, as some labs pool, in the order of the submitted
rank column (see `rankings_by_topic`). It hands out a `Selector`: `next()` names the
next document to judge (None when it has nothing more), `observe(doc_id, grade)` tells it a
judgment. Static strategies ignore observations, so their selector is just an ordered
queue; adaptive ones (MTF, bandits, Hedge) use them. Everything is deterministic given the
seed, so a round can be replayed from its judgments.

A few strategies read more than the rankings: they declare it in `needs` (names from
`INPUTS`) and are handed it with `given(...)` by whoever drives them (a round reads it from
the store, a replay from its files).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import PoolingError
from pooling.strategies.params import Param, convert_params


class StrategyError(PoolingError):
    """A strategy name or parameter is not understood."""


@dataclass(frozen=True)
class TopicRuns:
    """One topic's candidates: each pooled run's ranking (doc_ids, best first), in run order."""

    query_id: str
    rankings: Mapping[str, Sequence[str]]

    @property
    def run_ids(self) -> list[str]:
        return list(self.rankings)

    def candidates(self) -> set[str]:
        return {d for ranking in self.rankings.values() for d in ranking}


class Selector(Protocol):
    """Hands out one topic's documents to judge, learning from judgments as they come."""

    def next(self) -> str | None: ...

    def observe(self, doc_id: str, grade: int) -> None: ...


class QueueSelector:
    """A static strategy's selector: a fixed queue; judgments change nothing."""

    def __init__(self, queue: Iterable[str]):
        self._queue = list(queue)
        self._pos = 0
        self._seen: set[str] = set()

    def next(self) -> str | None:
        while self._pos < len(self._queue):
            doc = self._queue[self._pos]
            if doc not in self._seen:
                return doc
            self._pos += 1
        return None

    def observe(self, doc_id: str, grade: int) -> None:
        self._seen.add(doc_id)


# What a strategy may need beyond the pooled runs' rankings, by name.
INPUTS = {
    "texts": "the documents' text (doc_id -> text)",
    "judge_grades": "automatic judges' grades (judge -> query_id -> doc_id -> JudgeGrade)",
}
# What a replay against qrels (`pooling simulate`) can give a strategy: the documents' text
# (--docs). A strategy needing anything else does not replay (see `Strategy.replays`).
REPLAY_INPUTS = frozenset({"texts"})


class Strategy:
    """Base of all strategies: a name, declared parameters and inputs, and `selector(topic, seed)`."""

    name: ClassVar[str]
    adaptive: ClassVar[bool] = False
    summary: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    needs: ClassVar[tuple[str, ...]] = ()  # names in INPUTS

    def __init__(self, **options: Any):
        self.options = convert_params(self.params, options, f"strategy {self.name!r}",
                                      StrategyError)
        self.inputs: dict[str, Any] = {}

    @classmethod
    def replays(cls) -> bool:
        """Whether `pooling simulate` can replay the strategy: it needs nothing a replay
        lacks (`REPLAY_INPUTS`)."""
        return set(cls.needs) <= REPLAY_INPUTS

    def given(self, **inputs: Any) -> Strategy:
        """A copy of the strategy holding `inputs` (names from its `needs`)."""
        unknown = sorted(set(inputs) - set(self.needs))
        if unknown:
            raise StrategyError(f"strategy {self.name!r} takes no input(s) {', '.join(unknown)}; "
                                f"it needs: {', '.join(self.needs) or 'none'}")
        twin = copy.copy(self)
        twin.inputs = {**self.inputs, **inputs}
        return twin

    def input(self, name: str) -> Any:
        """An input the strategy was given; missing, a `StrategyError` says what it needs."""
        if name not in self.inputs:
            raise StrategyError(f"strategy {self.name!r} needs {INPUTS[name]}, which it was not "
                                f"given (`given({name}=...)`)")
        return self.inputs[name]

    def reads_runs(self) -> bool:
        """Whether the pooled runs decide what is queued. A strategy that queues from its
        inputs alone (`uncertain` over the pairs its judges graded) makes a round without
        runs, the runs' order only breaking its ties where there are runs."""
        return True

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        raise NotImplementedError

    def queue(self, topic: TopicRuns, seed: int) -> list[str]:
        """The full order a static strategy would serve (adaptive ones: with no judgments)."""
        sel = self.selector(topic, seed)
        out: list[str] = []
        while (doc := sel.next()) is not None:
            out.append(doc)
            sel.observe(doc, 0)
        return out


REGISTRY: dict[str, type[Strategy]] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    REGISTRY[cls.name] = cls
    return cls


def get_strategy(name: str, **options: Any) -> Strategy:
    """A strategy instance by registered name, with its parameters checked."""
    if name not in REGISTRY:
        raise StrategyError(f"unknown strategy {name!r}; known: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name](**options)


def topic_seed(seed: int, query_id: str) -> int:
    """A per-topic seed that does not depend on which other topics are pooled."""
    return random.Random(f"{seed}:{query_id}").getrandbits(63)


# How a run's rows are put in order before pooling: "score" is trec_eval's order (the one
# NIST pools in); "rank" is the submitted rank column (CLEF pools by it), rows without a rank
# last, ties broken as trec_eval breaks them.
ORDERS = ("score", "rank")
_NO_RANK = 2**63 - 1


def ordered_run(table: pa.Table, order: str = "score") -> pa.Table:
    """A run's rows (query_id, doc_id, score, and rank for order "rank") sorted per topic:
    score desc, doc_id desc; or rank asc, then score desc, doc_id desc."""
    if order not in ORDERS:
        raise StrategyError(f"unknown run order {order!r}; use one of {', '.join(ORDERS)}")
    keys = [("query_id", "ascending"), ("score", "descending"), ("doc_id", "descending")]
    ordered = table.select(["query_id", "doc_id", "score"])
    if order == "rank":
        if "rank" not in table.column_names:
            raise StrategyError("run order 'rank' needs the runs' rank column")
        ordered = ordered.append_column(
            "rank", pc.fill_null(table["rank"].cast(pa.int64()), _NO_RANK))
        keys.insert(1, ("rank", "ascending"))
    return ordered.sort_by(keys)


def rankings_by_topic(
    runs: Mapping[str, pa.Table], depth: int | None = None, order: str = "score"
) -> dict[str, TopicRuns]:
    """Per topic, every run's top `depth` doc_ids in the run order `order` (see ORDERS).

    runs: run_id -> table with query_id, doc_id, score (and rank, for order "rank"), in any
    order; a repeated doc keeps its first place in that order.
    """
    per_topic: dict[str, dict[str, list[str]]] = {}
    for run_id, table in runs.items():
        ordered = ordered_run(table, order)
        qids = ordered["query_id"].to_pylist()
        docs = ordered["doc_id"].to_pylist()
        start = 0
        n = len(qids)
        while start < n:
            end = start
            q = qids[start]
            while end < n and qids[end] == q:
                end += 1
            ranking: list[str] = []
            seen: set[str] = set()
            for d in docs[start:end]:
                if d not in seen:
                    seen.add(d)
                    ranking.append(d)
                    if depth is not None and len(ranking) >= depth:
                        break
            per_topic.setdefault(q, {})[run_id] = ranking
            start = end
    return {q: TopicRuns(q, r) for q, r in sorted(per_topic.items())}

