"""Multi-armed bandits over runs (Losada, Parapar & Barreiro 2016, 2017).

Each run is an arm; pulling it judges its next unjudged document, and a relevant judgment
is the reward. Every arm keeps a Beta(1,1) prior over its relevance rate, and is credited
for every judged document its cursor passes, whoever asked for the judgment.

- `maxmean`: pull the arm with the highest posterior mean (rel+1)/(judged+2) (MM);
  `variant=mm-ns` discounts older rewards by `discount` per judgment (non-stationary MM-NS).
- `ucb`: UCB1, posterior mean plus c * sqrt(2 ln t / n).
- `thompson`: draw each arm's rate from its Beta posterior and pull the best draw.
Ties are broken at random with the topic's seed.
"""

from __future__ import annotations

import math
import random

import numpy as np

from pooling.strategies.base import (
    Param,
    Selector,
    Strategy,
    StrategyError,
    TopicRuns,
    register,
)
from pooling.strategies.indexed import IndexedSelector, RunCursors


class BanditSelector(IndexedSelector):
    """Shared machinery: live arms, crediting cursors, the pull; subclasses score the arms."""

    def __init__(self, topic: TopicRuns, seed: int, discount: float = 1.0):
        super().__init__(topic)
        self.cursors = RunCursors(self.topic_index, discount)
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)

    def scores(self, live: list[int]) -> np.ndarray:
        raise NotImplementedError

    def _next(self) -> int | None:
        heads = self.cursors.heads()
        live = [s for s, h in enumerate(heads) if h is not None]
        if not live:
            return None
        scores = self.scores(live)
        best = scores.max()
        arm = self.rng.choice([s for s, v in zip(live, scores, strict=True) if v == best])
        return heads[arm]

    def _observe(self, doc: int, grade: int) -> None:
        self.cursors.record(doc, grade)

    def means(self, live: list[int]) -> np.ndarray:
        c = self.cursors
        return (c.relevant[live] + 1.0) / (c.judged[live] + 2.0)


class MaxMeanSelector(BanditSelector):
    def scores(self, live: list[int]) -> np.ndarray:
        return self.means(live)


class UCBSelector(BanditSelector):
    def __init__(self, topic: TopicRuns, seed: int, c: float):
        super().__init__(topic, seed)
        self.c = c

    def scores(self, live: list[int]) -> np.ndarray:
        n = self.cursors.judged[live]
        t = max(float(self.cursors.judged.sum()), 1.0)
        bonus = self.c * np.sqrt(2.0 * math.log(t) / np.maximum(n, 1e-9))
        return np.where(n > 0, self.means(live) + bonus, np.inf)


class ThompsonSelector(BanditSelector):
    def scores(self, live: list[int]) -> np.ndarray:
        c = self.cursors
        rel = c.relevant[live]
        return self.np_rng.beta(rel + 1.0, c.judged[live] - rel + 1.0)


@register
class MaxMean(Strategy):
    name = "maxmean"
    adaptive = True
    summary = "MaxMean bandit: pull the run with the best Beta(1,1) posterior mean (Losada et al.)"
    params = (
        Param("variant", str, "mm", "mm (stationary) or mm-ns (older rewards discounted)"),
        Param("discount", float, 0.9, "MM-NS: weight kept by a reward per later judgment"),
    )

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        variant = self.options["variant"]
        if variant not in ("mm", "mm-ns"):
            raise StrategyError(f"maxmean variant must be mm or mm-ns, got {variant!r}")
        discount = self.options["discount"] if variant == "mm-ns" else 1.0
        if not 0.0 < discount <= 1.0:
            raise StrategyError(f"maxmean discount must be in (0, 1], got {discount}")
        return MaxMeanSelector(topic, seed, discount)


@register
class UCB(Strategy):
    name = "ucb"
    adaptive = True
    summary = "UCB1 bandit over runs: posterior mean plus an exploration bonus"
    params = (Param("c", float, 1.0, "weight of the exploration bonus"),)

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        return UCBSelector(topic, seed, self.options["c"])


@register
class Thompson(Strategy):
    name = "thompson"
    adaptive = True
    summary = "Thompson sampling over runs with Beta(1,1) priors (Losada et al.)"

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        return ThompsonSelector(topic, seed)
