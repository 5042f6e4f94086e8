"""Planning a sampled round on a store's pool: `pooling plan-sample`.

Reads the pool a round would draw from (the pooled runs cut at the candidate depth, as
`pooling pool` reads them) and fits `pooling.strategies.sample_plan.plan_sample` to a budget
given per topic or in total.
"""

from __future__ import annotations

from pooling.errors import StoreError
from pooling.judging.rounds import choose_runs, topic_rankings
from pooling.store.core import Store
from pooling.strategies.sample_plan import SamplePlan, plan_sample

DEFAULT_DEPTH = 100


def plan_store_sample(store: Store, *, budget: int | None = None, total_budget: int | None = None,
                      depth: int = DEFAULT_DEPTH, runs: str | list[str] = "pooled",
                      topics: list[str] | None = None, order: str = "score") -> SamplePlan:
    """A sampling plan for the store's pool: `budget` judgments per topic (on average) or
    `total_budget` in all, over the runs' top `depth` documents per topic."""
    if (budget is None) == (total_budget is None):
        raise StoreError("give the judging budget with --budget (documents per topic) or "
                         "--total-budget (documents in all), one of the two")
    if depth < 1:
        raise StoreError(f"--depth must be at least 1, got {depth}")
    per_topic = topic_rankings(store, choose_runs(store, runs), depth, topics, order)
    if not per_topic:
        raise StoreError("the pooled runs retrieve nothing for the chosen topics")
    total = total_budget if total_budget is not None else (budget or 0) * len(per_topic)
    return plan_sample(per_topic, total, depth)
