"""Pooling strategies: a registry of static queues and adaptive selectors (see base.py)."""

from pooling.strategies import (  # noqa: F401  (registration)
    bandits,
    depth,
    hedge,
    mmfuse,
    mtf,
    sample,
    take,
)
from pooling.strategies.base import (
    REGISTRY,
    QueueSelector,
    Selector,
    Strategy,
    StrategyError,
    TopicRuns,
    get_strategy,
    rankings_by_topic,
    topic_seed,
)

__all__ = [
    "REGISTRY",
    "QueueSelector",
    "Selector",
    "Strategy",
    "StrategyError",
    "TopicRuns",
    "get_strategy",
    "rankings_by_topic",
    "topic_seed",
]
