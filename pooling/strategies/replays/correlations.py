"""AP and MAP over replayed judgments, and the rank correlations (tau-b, tau_ap) between two
rankings of runs: pure functions over NumPy arrays."""

from __future__ import annotations

import numpy as np


def topic_ap(run_docs: np.ndarray, relevant: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    """topics x runs AP (0 where a topic has no relevant document).

    run_docs: topics x runs x L doc numbers; relevant: per doc number (last = padding, False);
    n_relevant: per topic, the number of relevant documents in the qrels.
    """
    hits = relevant[run_docs]
    ranks = np.arange(1, run_docs.shape[2] + 1)
    precision_sum = (np.cumsum(hits, axis=2) * hits / ranks).sum(axis=2)
    return precision_sum / np.maximum(n_relevant, 1)[:, None]


def mean_ap(run_docs: np.ndarray, relevant: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    """Per run, MAP over the topics (see `topic_ap`)."""
    return topic_ap(run_docs, relevant, n_relevant).mean(axis=0)


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b between two score vectors (ties counted as neither concordant nor not)."""
    i, j = np.triu_indices(len(x), 1)
    sx = np.sign(x[i] - x[j])
    sy = np.sign(y[i] - y[j])
    n0 = len(i)
    denom = np.sqrt(float((n0 - np.sum(sx == 0)) * (n0 - np.sum(sy == 0))))
    return float(np.sum(sx * sy) / denom) if denom > 0 else 0.0


def tau_ap(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Yilmaz, Aslam & Robertson's AP correlation of the `estimate` ranking against `truth`.

    Runs are ordered by estimate descending (ties: run order); for each run below the first,
    the share of the runs above it that truth also puts strictly above it.
    """
    order = np.argsort(-estimate, kind="stable")
    n = len(order)
    if n < 2:
        return 1.0
    t = truth[order]
    above = np.tril(t[None, :] > t[:, None], k=-1)  # above[i, j]: j < i and truth_j > truth_i
    correct = above.sum(axis=1)[1:] / np.arange(1, n)
    return float(2.0 * correct.sum() / (n - 1) - 1.0)
