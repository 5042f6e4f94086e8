"""statAP (Pavlu & Aslam 2007; the Million Query track) with its per-topic variance.

From the same sampled pool as xinfAP (`pooling.measures.inferred.SampledTopic`): a judged
document of stratum h was drawn with inclusion probability pi_h = judged_h / pooled_h.
Horvitz-Thompson estimates, x_d = 1 for a relevant document:
- R = sum over judged d of x_d / pi_d;
- statAP = (1/R) * sum over judged relevant d the run ranks of precision(rank d) / pi_d, where
  precision(rank d) = (1 + sum over judged relevant d' ranked above d of 1/pi(d' | d)) / rank d
  counts d itself once and each other document by the inverse of the probability that it was
  drawn given that d was: pi_h' for another stratum, (n_h - 1)/(N_h - 1) for d's own. The
  numerator is then design-unbiased for stratified sampling without replacement (counting d
  by 1/pi_d too, as a with-replacement derivation does, overstates AP at low rates).

Variance: statAP is a ratio of two estimated totals, the numerator itself a sum over pairs of
judged documents. Linearised (first order in each document's inclusion), it is the variance
of the Horvitz-Thompson total of u_d = (x_d * (precision(rank d) + sum over judged relevant e
ranked below d of 1/(pi_e * rank e)) - statAP * x_d) / R under stratified simple random
sampling without replacement: the sum over strata of N_h^2 (1 - n_h/N_h) s_h^2 / n_h, with
s_h^2 the sample variance of u over the judged documents of stratum h. A stratum judged whole
adds nothing; one with a single judged document cannot estimate its spread and adds nothing
either. It is an approximation, close when many documents are judged.
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
    judged = np.bincount(topic.stratum[topic.judged], minlength=len(topic.strata))
    relevant = topic.value > 0  # only judged documents have a value above 0
    inverse = np.divide(1.0, pi, out=np.zeros(len(pi)), where=pi > 0)
    total_rel = float((relevant * inverse[topic.stratum]).sum())
    if total_rel <= 0 or len(positions) == 0:
        return StatAP(0.0, 0.0)
    pooled = positions >= 0
    safe = np.where(pooled, positions, 0)
    x = pooled & relevant[safe]  # judged relevant, at each rank
    stratum = np.where(pooled, topic.stratum[safe], -1)
    k = np.arange(1, len(positions) + 1)
    # Given d was drawn, another document of its stratum was drawn with probability
    # (n_h - 1) / (N_h - 1), one of another stratum with pi_h: each counts by the inverse.
    same = np.divide(topic.pooled - 1, judged - 1, out=np.zeros(len(pi)), where=judged > 1)
    above = np.zeros(len(positions))
    for h in range(len(topic.strata)):
        count = np.cumsum(x & (stratum == h)) - (x & (stratum == h))
        above += count * np.where(stratum == h, same[h], inverse[h])
    precision = (1.0 + above) / k
    weight = np.where(x, inverse[np.maximum(stratum, 0)], 0.0)
    estimate = float((weight * precision).sum() / total_rel)
    # Each judged document's influence on the numerator: its own term, plus what it adds to
    # the precision of every judged relevant document ranked below it; minus statAP times
    # its share of R; over R. A relevant document the run does not rank only adds to R.
    term = weight / k
    below = np.cumsum(term[::-1])[::-1] - term
    influence = np.zeros(len(topic.value))
    influence[positions[x]] = precision[x] + below[x]
    u = (influence - estimate * relevant) / total_rel
    variance = 0.0
    for h in range(len(topic.strata)):
        members = topic.judged & (topic.stratum == h)
        n, size = int(members.sum()), int(topic.pooled[h])
        if n < 2 or n >= size:
            continue
        spread = float(np.var(u[members], ddof=1))
        variance += size * size * (1.0 - n / size) * spread / n
    return StatAP(estimate, variance)
