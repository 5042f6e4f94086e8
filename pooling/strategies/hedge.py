"""`hedge`: online pooling with Hedge (Aslam, Pavlu & Savell 2003).

Each run is an expert with weight w (uniform at first). A document's value is the weighted
mixture of the runs' rank priors; the unjudged document of highest value is judged next.
A judgment costs each run the loss ±½·prior(rank) (negative when relevant), and weights
become w·β^loss, so runs ranking relevant documents high gain weight.
"""

from __future__ import annotations

import numpy as np

from pooling.strategies.base import Param, Selector, Strategy, TopicRuns, register
from pooling.strategies.indexed import IndexedSelector, TopicIndex, first_best


def ap_prior(ranks: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The AP-like rank prior, scaled to 1 at rank 1: (H_N - H_{r-1}) / H_N; 0 where rank is 0.

    A relevant document at rank r adds 1/r to AP through its own precision and 1/i through
    the precision at every later rank i, so its weight in AP grows like sum_{i>=r} 1/i.
    """
    longest = int(lengths.max(initial=1))
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, longest + 1))])
    h_n = harmonic[lengths][:, None]
    r = np.maximum(ranks, 1)
    prior = (h_n - harmonic[r - 1]) / np.where(h_n > 0, h_n, 1.0)
    return np.where(ranks > 0, prior, 0.0)


def prior_matrix(index: TopicIndex) -> np.ndarray:
    """runs x docs: each run's AP prior for each candidate (0 for documents it misses)."""
    lengths = np.array([len(r) for r in index.rankings], dtype=np.int64)
    return ap_prior(index.ranks, lengths)


class HedgeSelector(IndexedSelector):
    def __init__(self, topic: TopicRuns, beta: float):
        super().__init__(topic)
        self.prior = prior_matrix(self.topic_index)
        self.weights = np.full(self.topic_index.n_runs, 1.0 / max(self.topic_index.n_runs, 1))
        self.log_beta = np.log(beta)
        self.open = np.ones(self.topic_index.n_docs, dtype=bool)

    def _next(self) -> int | None:
        if not self.open.any():
            return None
        value = self.weights @ self.prior
        value[~self.open] = -np.inf
        return first_best(value)

    def _observe(self, doc: int, grade: int) -> None:
        self.open[doc] = False
        sign = -1.0 if grade > 0 else 1.0
        loss = 0.5 * sign * self.prior[:, doc]
        self.weights = self.weights * np.exp(self.log_beta * loss)
        self.weights /= self.weights.sum()


@register
class Hedge(Strategy):
    name = "hedge"
    adaptive = True
    summary = "Hedge: judge by the runs' weighted rank priors, reweighting runs by loss (Aslam et al. 2003)"
    params = (Param("beta", float, 0.1, "Hedge's learning rate: weights become w * beta^loss"),)

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        return HedgeSelector(topic, self.options["beta"])
