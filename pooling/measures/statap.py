"""statAP (Pavlu & Aslam 2007; the Million Query track) with its per-topic variance.

From the same sampled pool as xinfAP (`pooling.measures.inferred.SampledTopic`): a judged
document of stratum h was drawn with inclusion probability pi_h = judged_h / pooled_h.
Horvitz-Thompson estimates, x_d = 1 for a relevant document:
- R = sum over judged d of x_d / pi_d;
- precision at rank k = (1/k) * sum over judged d ranked at k or above of x_d / pi_d;
- statAP = (1/R) * sum over judged relevant d the run ranks of precision(rank d) / pi_d.

Variance: statAP is a ratio of two estimated totals. Linearised (first-order Taylor, the
usual ratio-estimator variance), it is the variance of the Horvitz-Thompson total of
u_d = (x_d * precision(rank d) - statAP * x_d) / R under stratified simple random sampling
without replacement: sum over strata of N_h^2 (1 - n_h/N_h) s_h^2 / n_h, with s_h^2 the sample
variance of u over the judged documents of stratum h. A stratum judged whole adds nothing;
one with a single judged document cannot estimate its spread and adds nothing either. The
precisions are treated as fixed in this linearisation, so the variance is an approximation
that is tight when many documents are judged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pooling.measures.inferred import SampledTopic


@dataclass(frozen=True)
class StatAP:
    """One run's statAP on one topic, and its estimated variance."""

    estimate: float
    variance: float


def inclusion_probabilities(topic: SampledTopic) -> np.ndarray:
    """Per stratum: judged / pooled (0 where nothing was judged)."""
    judged = np.bincount(topic.stratum[topic.judged], minlength=len(topic.strata))
    return np.divide(judged, topic.pooled, out=np.zeros(len(topic.strata)),
                     where=topic.pooled != 0)


def statap_topic(topic: SampledTopic, positions: np.ndarray) -> StatAP:
    """statAP of one ranking (`inferred.ranked_positions`, best first) and its variance."""
    pi = inclusion_probabilities(topic)
    relevant = topic.value > 0  # only judged documents have a value above 0
    inverse = np.divide(1.0, pi[topic.stratum], out=np.zeros(len(topic.value)),
                        where=pi[topic.stratum] > 0)
    weight = np.where(relevant, inverse, 0.0)  # x_d / pi_d per pooled document
    total_rel = float(weight.sum())
    if total_rel <= 0 or len(positions) == 0:
        return StatAP(0.0, 0.0)
    pooled = positions >= 0
    w = np.where(pooled, weight[np.where(pooled, positions, 0)], 0.0)
    precision = np.cumsum(w) / np.arange(1, len(w) + 1)
    estimate = float((w * precision).sum() / total_rel)
    # u_d for every judged document: its share of the numerator minus statAP times its
    # share of R, over R (x_d * precision(rank d) is 0 for a document the run does not rank).
    at_rank = np.zeros(len(topic.value))
    ranked = positions[pooled]
    at_rank[ranked] = precision[pooled]
    u = (relevant * at_rank - estimate * relevant) / total_rel
    variance = 0.0
    for h in range(len(topic.strata)):
        members = topic.judged & (topic.stratum == h)
        n, size = int(members.sum()), int(topic.pooled[h])
        if n < 2 or n >= size:
            continue
        spread = float(np.var(u[members], ddof=1))
        variance += size * size * (1.0 - n / size) * spread / n
    return StatAP(estimate, variance)
