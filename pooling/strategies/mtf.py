"""`mtf`: Move-to-Front pooling (Cormack, Palmer & Clarke 1998).

Every run starts at the same priority. The current run (the highest-priority one) serves its
next unjudged document; a relevant judgment keeps it current, a non-relevant one lowers its
priority by one and hands over to the highest-priority run (ties drawn at random, seeded).
"""

from __future__ import annotations

import random

import numpy as np

from pooling.strategies.base import Param, Selector, Strategy, TopicRuns, register
from pooling.strategies.indexed import IndexedSelector, RunCursors


class MTFSelector(IndexedSelector):
    def __init__(self, topic: TopicRuns, seed: int, penalty: float):
        super().__init__(topic)
        self.cursors = RunCursors(self.topic_index)
        self.priority = np.zeros(self.topic_index.n_runs)
        self.penalty = penalty
        self.rng = random.Random(seed)
        self.current: int | None = None
        self.served: int | None = None

    def _pick(self) -> int | None:
        live = [s for s in range(self.topic_index.n_runs) if self.cursors.head(s) is not None]
        if not live:
            return None
        best = max(self.priority[s] for s in live)
        return self.rng.choice([s for s in live if self.priority[s] == best])

    def _next(self) -> int | None:
        if self.current is None or self.cursors.head(self.current) is None:
            self.current = self._pick()
        if self.current is None:
            return None
        self.served = self.cursors.head(self.current)
        return self.served

    def _observe(self, doc: int, grade: int) -> None:
        self.cursors.record(doc, grade)
        if doc != self.served or self.current is None:
            return  # judgments the selector did not ask for leave priorities alone
        self.served = None
        if grade <= 0:
            self.priority[self.current] -= self.penalty
            self.current = None


@register
class MoveToFront(Strategy):
    name = "mtf"
    adaptive = True
    summary = "Move-to-Front: stay on a run while it finds relevant documents (Cormack et al. 1998)"
    params = (Param("penalty", float, 1.0, "priority lost by a run on a non-relevant document"),)

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        return MTFSelector(topic, seed, self.options["penalty"])
