"""Pooling strategies: a registry of static queues and adaptive selectors (see base.py)."""

from pooling.strategies import (  # noqa: F401  (registration)
    bandits,
    cal,
    depth,
    hedge,
    mmfuse,
    mtf,
    sample,
    take,
    uncertain,
)
from pooling.strategies.base import (
    INPUTS,
    ORDERS,
    REGISTRY,
    REPLAY_INPUTS,
    QueueSelector,
    Selector,
    Strategy,
    StrategyError,
    TopicRuns,
    get_strategy,
    rankings_by_topic,
    topic_seed,
)

# `pooling pool`'s strategy when none is named: chosen across collections, not on one.
# scripts/tune_default.py replays every strategy on Robust03 (candidates at depth 100 and 10),
# Cranfield and the demo collection, each with parameters chosen on the others.
DEFAULT_STRATEGY = "mixfuse"
DEFAULT_WHY = (
    "the smallest worst shortfall against the best strategy that pools from the runs alone "
    "at 10-100 judgments per topic over Robust03 (depth 100 and 10), Cranfield and the demo "
    "collection, each with parameters chosen on the others (scripts/tune_default.py): at most "
    "2 points behind; cal, which also reads the documents' text, is compared apart")

__all__ = [
    "DEFAULT_STRATEGY",
    "DEFAULT_WHY",
    "INPUTS",
    "ORDERS",
    "REGISTRY",
    "REPLAY_INPUTS",
    "QueueSelector",
    "Selector",
    "Strategy",
    "StrategyError",
    "TopicRuns",
    "get_strategy",
    "rankings_by_topic",
    "topic_seed",
]
