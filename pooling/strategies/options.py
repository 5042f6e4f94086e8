"""Options that wrap any strategy: fairness floor, budgets, a stopping rule, known judgments.

`with_options(strategy, ...)` returns a strategy whose selectors, in this order:
1. observe the topic's already-known judgments (`known`), which are never served;
2. serve the fairness floor: every run's top `floor`, round-robin by rank (rank 1 of every
   run, then rank 2, ...), skipping known documents; the inner selector observes these too;
3. defer to the inner strategy.
`budget` caps the judgments per topic (floor included; known judgments do not count), whether
served by the selector or replayed into it; `stop_after` ends a topic after that many
consecutive non-relevant judgments of the inner strategy (the floor is always judged whole).
`run_global_budget` shares one budget across topics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pooling.strategies.base import Selector, Strategy, StrategyError, TopicRuns
from pooling.strategies.depth import round_robin


class OptionsSelector:
    """An inner selector behind the floor, budget, stopping rule and known judgments."""

    def __init__(
        self,
        inner: Selector,
        name: str,
        floor_queue: list[str],
        known: Mapping[str, int],
        budget: int | None,
        stop_after: int | None,
    ):
        self.inner = inner
        self.name = name
        self.known = dict(known)
        self.judged: set[str] = set(self.known)
        self.floor = [d for d in floor_queue if d not in self.judged]
        self.floor_pos = 0
        self.budget = budget
        self.stop_after = stop_after
        self.served = 0
        self.misses = 0
        self.pending: str | None = None
        for doc, grade in self.known.items():
            inner.observe(doc, grade)

    def _in_floor(self) -> bool:
        while self.floor_pos < len(self.floor) and self.floor[self.floor_pos] in self.judged:
            self.floor_pos += 1
        return self.floor_pos < len(self.floor)

    def next(self) -> str | None:
        if self.budget is not None and self.served >= self.budget:
            return None
        if self._in_floor():
            self.pending = self.floor[self.floor_pos]
            return self.pending
        if self.stop_after is not None and self.misses >= self.stop_after:
            return None
        doc = self.inner.next()
        if doc is not None and doc in self.judged:
            raise StrategyError(
                f"strategy {self.name!r} served {doc!r} again after observing its judgment; "
                "a selector must skip documents it has observed"
            )
        self.pending = doc
        return doc

    def observe(self, doc_id: str, grade: int) -> None:
        if doc_id in self.judged:
            return
        in_floor = self._in_floor()
        self.judged.add(doc_id)
        # Every judgment after the known ones counts, whether this selector just served it or
        # it is replayed from a round's history (a live round rebuilds its selector each time).
        self.served += 1
        if doc_id == self.pending:
            self.pending = None
        if not in_floor:
            self.misses = 0 if grade > 0 else self.misses + 1
        self.inner.observe(doc_id, grade)


class WithOptions(Strategy):
    """A strategy behind `OptionsSelector`; see the module docstring for the order of things."""

    def __init__(
        self,
        inner: Strategy,
        *,
        floor: int = 0,
        budget: int | None = None,
        stop_after: int | None = None,
        known: Mapping[str, Mapping[str, int]] | None = None,
    ):
        for label, value in (("floor", floor), ("budget", budget), ("stop_after", stop_after)):
            if value is not None and value < 0:
                raise StrategyError(f"{label} must be 0 or more, got {value}")
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.adaptive = inner.adaptive  # type: ignore[misc]
        self.needs = inner.needs  # type: ignore[misc]
        self.inputs = inner.inputs
        self.options = dict(inner.options)
        self.floor = floor
        self.budget = budget
        self.stop_after = stop_after
        self.known = known or {}

    def reads_runs(self) -> bool:
        return self.floor > 0 or self.inner.reads_runs()

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        floor_queue = round_robin(topic, self.floor) if self.floor > 0 else []
        return OptionsSelector(
            self.inner.selector(topic, seed),
            self.inner.name,
            floor_queue,
            self.known.get(topic.query_id, {}),
            self.budget,
            self.stop_after,
        )


def with_options(strategy: Strategy, **options: Any) -> Strategy:
    """`strategy` with a floor, per-topic budget, stopping rule and/or known judgments."""
    return WithOptions(strategy, **options)


def split_budget(total: int, query_ids: list[str]) -> dict[str, int]:
    """An equal share per topic; the remainder goes one each to the first topics (sorted)."""
    if not query_ids:
        return {}
    share, extra = divmod(total, len(query_ids))
    return {q: share + (1 if i < extra else 0) for i, q in enumerate(sorted(query_ids))}


def run_global_budget(
    selectors: Mapping[str, Selector], judge: Callable[[str, str], int], total: int
) -> dict[str, list[tuple[str, int]]]:
    """Spend `total` judgments across topics: equal shares first (`split_budget`); what a
    topic leaves unused (it ran out of candidates or its stopping rule fired) is split
    equally again over the topics still open, until the budget or the topics run out.

    Returns, per topic, the (doc_id, grade) judgments in the order they were made.
    """
    judged: dict[str, list[tuple[str, int]]] = {q: [] for q in selectors}
    open_topics = sorted(selectors)
    left = total
    while left > 0 and open_topics:
        spent = 0
        still_open = []
        for q, share in split_budget(left, open_topics).items():
            sel = selectors[q]
            done = 0
            while done < share:
                doc = sel.next()
                if doc is None:
                    break
                grade = judge(q, doc)
                sel.observe(doc, grade)
                judged[q].append((doc, grade))
                done += 1
            spent += done
            if done == share and share > 0:
                still_open.append(q)
            elif share == 0:
                still_open.append(q)
        left -= spent
        if spent == 0:
            break
        open_topics = still_open
    return judged
