"""A plan for sampled judging: strata by rank and a rate for each, fitted to a judging budget.

NIST's sampled pools (TREC Clinical Decision Support 2014-2016, Precision Medicine, Medical
Records, bioCADDIE 2016) judged the top ranks of every pooled run in full and sampled the rest
of a deeper pool at a rate, then scored runs with xinfAP and infNDCG. The planner proposes
such a design for a budget, by one rule:

1. A document's stratum is fixed by its best rank over the pooled runs (as `--strategy
   sample` does). With a budget that covers the whole pool, the plan is one stratum judged
   whole: a census.
2. The top stratum, judged whole, is ranks 1..k for the deepest k of 5, 10, 20, 30, 50, 75,
   100, 150, 200, 300, 500 that costs at most half the budget. Relevant documents crowd the top
   ranks, where average precision and nDCG weigh most, and a census there leaves no sampling
   error at all in every run's top k (P@k is exact).
3. The other half (whatever the top stratum left) samples ranks k+1..depth. When those ranks
   reach past twice the next step of the ladder they are split in two strata at the ladder
   step nearest sqrt(k * depth), the upper one sampled at twice the rate of the lower:
   relevant documents thin out with rank, so judging denser where they are more likely keeps
   the variance of the estimate down for the same cost. Rates are chosen so the expected
   judgments meet the budget, a rate above 1 being capped and its excess moved down.
The per-topic count drawn from a stratum is `sample.drawn`: round(rate * pooled), at least one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from pooling.strategies.base import StrategyError, TopicRuns
from pooling.strategies.sample import drawn

LADDER = (5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500)
TOP_SHARE = 0.5  # at most this share of the budget goes to the stratum judged whole


@dataclass(frozen=True)
class PlannedStratum:
    """One stratum of a plan: best ranks first..last, pooled documents (all topics), rate,
    and the judgments it costs (each topic drawing `drawn(rate, its pooled)`)."""

    label: str
    first: int
    last: int
    pooled: int
    rate: float
    expected: int

    @property
    def ranks(self) -> str:
        return f"{self.first}-{self.last}"


@dataclass(frozen=True)
class SamplePlan:
    """A design: its strata, the budget it was fitted to, the pool's depth and topics."""

    strata: tuple[PlannedStratum, ...]
    budget: int
    depth: int
    topics: int

    @property
    def expected(self) -> int:
        return sum(s.expected for s in self.strata)

    @property
    def pooled(self) -> int:
        return sum(s.pooled for s in self.strata)

    def strategy_params(self) -> dict[str, str]:
        """The `--strategy sample` parameters that carry the plan out."""
        bounds = ",".join(str(s.last) for s in self.strata[:-1])
        return {"strata": bounds, "rates": ",".join(f"{s.rate:.6g}" for s in self.strata)}


def best_ranks(topics: Mapping[str, TopicRuns]) -> dict[str, list[int]]:
    """Per topic, every candidate's best (smallest) rank over the runs."""
    out: dict[str, list[int]] = {}
    for q, topic in topics.items():
        best: dict[str, int] = {}
        for ranking in topic.rankings.values():
            for i, doc in enumerate(ranking):
                if i + 1 < best.get(doc, 1 << 30):
                    best[doc] = i + 1
        out[q] = sorted(best.values())
    return out


def plan_sample(topics: Mapping[str, TopicRuns], budget: int, depth: int) -> SamplePlan:
    """The plan for `budget` judgments over all the topics' pools (cut at `depth` per run)."""
    if budget < 1:
        raise StrategyError(f"a sampling budget must be at least 1 judgment, got {budget}")
    ranks = best_ranks(topics)
    if not any(ranks.values()):
        raise StrategyError("the pool is empty: the runs retrieve nothing for these topics")

    def counts(first: int, last: int) -> list[int]:
        return [sum(1 for r in rs if first <= r <= last) for rs in ranks.values()]

    def stratum(label: int, first: int, last: int, rate: float) -> PlannedStratum:
        per_topic = counts(first, last)
        return PlannedStratum(str(label), first, last, sum(per_topic), rate,
                              sum(drawn(rate, n) for n in per_topic))

    pool = sum(counts(1, depth))
    if budget >= pool:
        return SamplePlan((stratum(1, 1, depth, 1.0),), budget, depth, len(topics))
    fits = [k for k in LADDER if k < depth and sum(counts(1, k)) <= TOP_SHARE * budget]
    k = max(fits, default=0)
    strata: list[PlannedStratum] = [stratum(1, 1, k, 1.0)] if k else []
    left = budget - (strata[0].expected if strata else 0)
    steps = [m for m in LADDER if k < m < depth]
    split = None
    if len(steps) >= 2:
        target = math.sqrt(max(k, 1) * depth)
        split = min(steps[:-1], key=lambda m: (abs(math.log(m / target)), m))
    parts = [(k + 1, split), (split + 1, depth)] if split else [(k + 1, depth)]
    sizes = [sum(counts(a, b)) for a, b in parts]
    weights = [2.0, 1.0] if split else [1.0]
    rates = _rates(sizes, weights, left)
    for (a, b), rate in zip(parts, rates, strict=True):
        strata.append(stratum(len(strata) + 1, a, b, rate))
    return SamplePlan(tuple(strata), budget, depth, len(topics))


def _rates(sizes: list[int], weights: list[float], budget: float) -> list[float]:
    """Rates proportional to `weights`, each at most 1, with sum(rate * size) = budget
    (rounded to 4 significant digits, never to 0)."""
    rates = [0.0] * len(sizes)
    capped: set[int] = set()
    while True:
        free = budget - sum(sizes[i] for i in capped)
        mass = sum(weights[i] * sizes[i] for i in range(len(sizes)) if i not in capped)
        scale = free / mass if mass > 0 else 0.0
        over = [i for i in range(len(sizes)) if i not in capped and weights[i] * scale >= 1]
        if not over:
            break
        capped.update(over)
    for i in range(len(sizes)):
        rate = 1.0 if i in capped else weights[i] * scale
        rates[i] = min(1.0, max(float(f"{rate:.4g}"), 1e-4))
    return rates
