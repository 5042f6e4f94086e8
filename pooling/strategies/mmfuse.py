"""`mmfuse`: a fusion prior weighted by the runs' learned precision (MaxMean meets Hedge).

Each run's quality is a MaxMean-style posterior mean, but over its judged documents weighted
by the AP rank prior g (so a judgment high in a run counts more than one deep down):
    quality_s = (a * m + sum_judged g_sd * rel_d) / (a + sum_judged g_sd)
with prior mean m and strength a. An unjudged document's value is sum_s quality_s^k * g_sd^b:
a rank-prior fusion with run weights sharpened by the power k, so the documents of the runs
that are proving best are judged first while other runs' votes still break ties. b < 1
flattens the fusion prior, so a strong run's deeper documents are reached sooner.

Parameters were chosen on Robust03 topics 601-625 only, maximising half the sum of the found
share at 100 judgments per topic without a floor and with a floor of 10, plus 0.1 x the mean
bootstrap Kendall tau at 50, over a grid of 500 settings (m in {0.05..0.3}, a in {0.5..8},
k in {8..48}, b in {0.3..1}); they were then reported on 626-650 and 601-650.
scripts/tune_mmfuse.py re-runs the choice; tests/strategies/test_robust03_replay.py pins it.
Variants scored on 601-625 too, and lower: RBP, RRF and log fusion priors, annealed powers,
per-rank-band quality, noisy-or fusion, discounted evidence, priors from run consensus or
from each run's true mean precision over all 25 topics (an upper bound on learning across
topics), and an online logistic model.
"""

from __future__ import annotations

import numpy as np

from pooling.strategies.base import Param, Selector, Strategy, StrategyError, TopicRuns, register
from pooling.strategies.hedge import prior_matrix
from pooling.strategies.indexed import IndexedSelector, first_best


class MMFuseSelector(IndexedSelector):
    def __init__(
        self, topic: TopicRuns, prior_mean: float, strength: float, power: float, flatten: float,
        votes: str = "ap", k: float = 60.0, mix: float = 0.5,
    ):
        super().__init__(topic)
        self.prior = prior_matrix(self.topic_index)  # what a judgment teaches each run
        # How much each run votes for each document: its AP rank prior ** flatten, RRF's
        # 1 / (k + rank), or a mix of the two (each scaled to 1 at rank 1).
        ranks = self.topic_index.ranks
        rrf = np.where(ranks > 0, (k + 1.0) / (k + ranks), 0.0)
        ap = self.prior**flatten
        ap = ap / max(float(ap.max()), 1e-300)
        self.fusion = rrf if votes == "rrf" else ap if votes == "ap" else (1 - mix) * ap + mix * rrf
        self.open = np.ones(self.topic_index.n_docs, dtype=bool)
        self.relevant_mass = np.zeros(self.topic_index.n_runs)
        self.judged_mass = np.zeros(self.topic_index.n_runs)
        self.prior_mean, self.strength, self.power = prior_mean, strength, power

    def quality(self) -> np.ndarray:
        return (self.strength * self.prior_mean + self.relevant_mass) / (
            self.strength + self.judged_mass
        )

    def _next(self) -> int | None:
        if not self.open.any():
            return None
        value = self.quality() ** self.power @ self.fusion
        value[~self.open] = -np.inf
        return first_best(value)

    def _observe(self, doc: int, grade: int) -> None:
        if not self.open[doc]:  # a document judged again teaches the runs nothing new
            return
        self.open[doc] = False
        weight = self.prior[:, doc]
        self.judged_mass += weight
        if grade > 0:
            self.relevant_mass += weight


@register
class MMFuse(Strategy):
    name = "mmfuse"
    adaptive = True
    summary = "rank-prior fusion weighted by each run's learned precision, sharpened (tuned on 601-625)"
    params = (
        Param("prior_mean", float, 0.2, "prior precision of a run, before any judgment"),
        Param("strength", float, 4.0, "weight of that prior, in judged-document units"),
        Param("power", float, 24.0, "sharpening: run weights are quality ** power"),
        Param("flatten", float, 0.6, "fusion prior exponent b: documents get rank prior ** b"),
        Param("votes", str, "ap", "a run's vote for a document: ap (its AP rank prior ** flatten), "
              "rrf (1 / (k + rank)) or mix (both, each 1 at rank 1, RRF weighted by mix)"),
        Param("k", float, 60.0, "the RRF constant of votes=rrf or mix"),
        Param("mix", float, 0.5, "votes=mix: the RRF vote's share"),
    )

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        o = self.options
        if (
            not 0.0 < o["prior_mean"] < 1.0
            or o["strength"] <= 0
            or o["power"] <= 0
            or o["flatten"] <= 0
            or o["votes"] not in ("ap", "rrf", "mix")
            or o["k"] < 0
            or not 0.0 <= o["mix"] <= 1.0
        ):
            raise StrategyError(
                f"{self.name} needs 0 < prior_mean < 1, strength, power and flatten > 0, votes "
                "ap, rrf or mix, k >= 0 and 0 <= mix <= 1; got "
                f"{o['prior_mean']}, {o['strength']}, {o['power']}, {o['flatten']}, {o['votes']}, "
                f"{o['k']}, {o['mix']}"
            )
        return MMFuseSelector(topic, o["prior_mean"], o["strength"], o["power"], o["flatten"],
                              o["votes"], o["k"], o["mix"])


@register
class MixFuse(MMFuse):
    """mmfuse whose runs vote with a mix of the AP rank prior (top-heavy: what wins where the
    runs differ) and RRF (flat: consensus, what wins where they agree), with parameters chosen
    across collections (scripts/tune_default.py), not on one."""

    name = "mixfuse"
    summary = ("mmfuse with votes mixing the AP rank prior and RRF; parameters chosen across "
               "collections")
    params = (
        Param("prior_mean", float, 0.2, "prior precision of a run, before any judgment"),
        Param("strength", float, 4.0, "weight of that prior, in judged-document units"),
        Param("power", float, 8.0, "sharpening: run weights are quality ** power"),
        Param("flatten", float, 1.0, "the AP vote's exponent: rank prior ** flatten"),
        Param("votes", str, "mix", "ap, rrf or mix (as mmfuse)"),
        Param("k", float, 10.0, "the RRF constant"),
        Param("mix", float, 0.7, "the RRF vote's share"),
    )
