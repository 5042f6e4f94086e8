"""How a replay scores: judged MAP, the runs' ranking against the depth pool's (tau-b, tau_ap,
bootstrap intervals) and the share of relevant documents found."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pooling.strategies.replays.correlations import kendall_tau_b, tau_ap, topic_ap
from pooling.strategies.replays.data import ReplayData
from pooling.strategies.replays.replay import Replay


def judged_ap(data: ReplayData, rep: Replay, budget: int) -> tuple[np.ndarray, int, int]:
    """topics x runs AP under the first `budget` judgments per topic (unjudged = not
    relevant); also the judged and relevant counts."""
    relevant = np.zeros(len(data.pool_relevant), dtype=bool)
    n_rel = np.zeros(len(data.query_ids), dtype=np.int64)
    judged = 0
    for t, q in enumerate(data.query_ids):
        got = rep.judgments.get(q, [])[:budget]
        judged += len(got)
        rel = [n for n, g in got if g > 0]
        relevant[rel] = True
        n_rel[t] = len(rel)
    return topic_ap(data.run_docs, relevant, n_rel), judged, int(n_rel.sum())


def judged_map(data: ReplayData, rep: Replay, budget: int) -> tuple[np.ndarray, int, int]:
    """MAP per run under the first `budget` judgments per topic; also judged and relevant counts."""
    ap, judged, found = judged_ap(data, rep, budget)
    return ap.mean(axis=0), judged, found


def bootstrap_tau(
    data: ReplayData, rep: Replay, budget: int, *, resamples: int = 300, seed: int = 12345
) -> float:
    """Mean Kendall tau-b, over bootstrap resamples of the topics, between the MAP ranking
    at `budget` judgments per topic and the full pool's: a smoother figure than one tau,
    which on few runs moves in steps of 2 / (n (n - 1) / 2)."""
    estimate = judged_ap(data, rep, budget)[0]
    truth = topic_ap(data.run_docs, data.pool_relevant, data.pool_relevant_per_topic)
    n = len(data.query_ids)
    draws = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    return float(np.mean([kendall_tau_b(estimate[d].mean(0), truth[d].mean(0)) for d in draws]))


def found_share(data: ReplayData, rep: Replay, budget: int) -> float:
    """Mean over topics (with a relevant document in the depth pool) of the share found."""
    shares = [
        sum(1 for _, g in rep.judgments.get(q, [])[:budget] if g > 0) / n
        for q, n in zip(data.query_ids, data.pool_relevant_per_topic.tolist(), strict=True)
        if n > 0
    ]
    return float(np.mean(shares)) if shares else 0.0


def score(data: ReplayData, rep: Replay, budgets: Sequence[int]) -> list[dict]:
    """The report rows of one replay at each budget."""
    rows = []
    for b in budgets:
        est, judged, found = judged_map(data, rep, b)
        rows.append(
            {
                "strategy": rep.label,
                "budget": int(b),
                "judged": judged,
                "relevant_found": found,
                "found_share": found_share(data, rep, b),
                "tau": kendall_tau_b(est, data.truth_map),
                "tau_ap": tau_ap(est, data.truth_map),
            }
        )
    return rows
