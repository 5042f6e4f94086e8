"""`take`: rank the union of the runs by a fusion score and judge from the top (budget cuts)."""

from __future__ import annotations

from collections import defaultdict

from pooling.strategies.base import (
    Param,
    QueueSelector,
    Selector,
    Strategy,
    StrategyError,
    TopicRuns,
    register,
)

FUSIONS = ("rrf", "rbp", "borda", "combsum", "combmnz")


def fused_scores(topic: TopicRuns, fusion: str, k: float = 60.0, p: float = 0.8) -> dict[str, float]:
    """Per document, the fused score over the pooled runs' rankings.

    rrf: sum 1/(k + rank); rbp: sum (1-p) p^(rank-1); borda: sum (n - rank + 1) with n the
    ranking's length; combsum / combmnz: sum of rank-based scores normalised to (0, 1]
    per run (1 - (rank-1)/n), times the number of runs retrieving the doc for combmnz.
    """
    scores: dict[str, float] = defaultdict(float)
    hits: dict[str, int] = defaultdict(int)
    for ranking in topic.rankings.values():
        n = len(ranking)
        for i, doc in enumerate(ranking):
            rank = i + 1
            if fusion == "rrf":
                scores[doc] += 1.0 / (k + rank)
            elif fusion == "rbp":
                scores[doc] += (1.0 - p) * p ** (rank - 1)
            elif fusion == "borda":
                scores[doc] += n - rank + 1
            elif fusion in ("combsum", "combmnz"):
                scores[doc] += 1.0 - (rank - 1) / n
            else:
                raise StrategyError(f"unknown fusion {fusion!r}; use one of {', '.join(FUSIONS)}")
            hits[doc] += 1
    if fusion == "combmnz":
        return {d: s * hits[d] for d, s in scores.items()}
    return dict(scores)


@register
class Take(Strategy):
    name = "take"
    summary = "judge the pool's documents in order of a fusion score (RRF, RBP, Borda, CombSUM/MNZ)"
    params = (
        Param("fusion", str, "rrf", f"one of {', '.join(FUSIONS)}"),
        Param("k", float, 60.0, "RRF constant"),
        Param("p", float, 0.8, "RBP persistence"),
    )

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        o = self.options
        if o["fusion"] not in FUSIONS:
            raise StrategyError(f"unknown fusion {o['fusion']!r}; use one of {', '.join(FUSIONS)}")
        scores = fused_scores(topic, o["fusion"], o["k"], o["p"])
        # Highest score first; ties by doc_id descending, as trec_eval breaks ties.
        by_doc_desc = sorted(scores, key=lambda d: d.encode(), reverse=True)
        return QueueSelector(sorted(by_doc_desc, key=lambda d: -scores[d]))
