"""`depth`: TREC fixed-depth pooling, every pooled run's top k, queued round-robin by rank."""

from __future__ import annotations

from pooling.strategies.base import Param, QueueSelector, Selector, Strategy, TopicRuns, register


def round_robin(topic: TopicRuns, depth: int | None = None) -> list[str]:
    """Rank 1 of every run (in run order), then rank 2 of every run, ...; each doc once."""
    seen: set[str] = set()
    queue: list[str] = []
    longest = max((len(r) for r in topic.rankings.values()), default=0)
    limit = longest if depth is None else min(depth, longest)
    rankings = list(topic.rankings.values())
    for rank in range(limit):
        for ranking in rankings:
            if rank < len(ranking):
                doc = ranking[rank]
                if doc not in seen:
                    seen.add(doc)
                    queue.append(doc)
    return queue


@register
class Depth(Strategy):
    name = "depth"
    summary = "TREC depth-k pool: the union of every pooled run's top k, round-robin by rank"
    params = (Param("depth", int, 100, "documents taken from the top of each run"),)

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        return QueueSelector(round_robin(topic, self.options["depth"]))
