"""One strategy replayed against the oracle to a budget per topic, and the tables replays fill."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from pooling.strategies import topic_seed
from pooling.strategies.base import TopicRuns
from pooling.strategies.options import with_options
from pooling.strategies.replays.data import (
    Oracle,
    ReplayData,
    SimulationError,
    StrategySpec,
    with_inputs,
)


@dataclass(frozen=True)
class Replay:
    """One strategy's judgments per topic, in order: (doc number, grade)."""

    label: str
    judgments: dict[str, list[tuple[int, int]]]


def replay(
    data: ReplayData,
    spec: StrategySpec,
    max_budget: int,
    *,
    seed: int = 0,
    floor: int = 0,
    oracle: Oracle | None = None,
    query_ids: Sequence[str] | None = None,
    runs: Sequence[str] | None = None,
) -> Replay:
    """Run one strategy to `max_budget` judgments per topic; the oracle answers each question.

    `runs` restricts the candidates to those runs (leave-one-out).
    """
    oracle = oracle or Oracle(data.qrels)
    strategy = with_options(with_inputs(data, spec), floor=floor, budget=max_budget)
    judgments: dict[str, list[tuple[int, int]]] = {}
    for q in query_ids or data.query_ids:
        topic = data.topics[q]
        if runs is not None:
            topic = TopicRuns(q, {r: topic.rankings[r] for r in runs})
        candidates = topic.candidates()
        selector = strategy.selector(topic, topic_seed(seed, q))
        served: list[tuple[int, int]] = []
        seen: set[str] = set()
        while (doc := selector.next()) is not None:
            if doc not in candidates or doc in seen:
                why = "is not a candidate" if doc not in candidates else "was served twice"
                raise SimulationError(f"strategy {spec.label!r} misbehaved: {doc!r} on topic {q} {why}")
            seen.add(doc)
            grade = oracle.judge(q, doc)
            selector.observe(doc, grade)
            served.append((data.doc_number[(q, doc)], grade))
        judgments[q] = served
    return Replay(spec.label, judgments)


SIMULATION_SCHEMA = pa.schema(
    [
        ("strategy", pa.string()),
        ("budget", pa.int64()),
        ("judged", pa.int64()),
        ("relevant_found", pa.int64()),
        ("found_share", pa.float64()),
        ("tau", pa.float64()),
        ("tau_ap", pa.float64()),
    ]
)


GRID_SCHEMA = pa.schema([("collection", pa.string()), ("seed", pa.int64()), *SIMULATION_SCHEMA])


def check_budgets(budgets: Sequence[int]) -> list[int]:
    """The budgets, each once and ascending; none, or one below 1, is an error."""
    if not budgets:
        raise SimulationError("no budget given; pass --budget N (judgments per topic)")
    bad = [b for b in budgets if b < 1]
    if bad:
        raise SimulationError(f"budgets must be at least 1 judgment per topic, got {bad}")
    return sorted(set(budgets))
