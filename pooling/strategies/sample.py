"""`random` and `sample`: judging a probability sample of the pool.

`random` serves the candidates in a uniformly random order (seeded). `sample` is stratified
sampling by rank: each candidate falls in the stratum of its best rank over the runs
(strata bounded by `strata`, e.g. 10,30,100), and the serving order interleaves random
permutations of the strata so that every prefix of k judgments is a stratified simple random
sample, with n_h(k) documents from stratum h allocated in proportion to `weights`.
A document's inclusion probability at budget k is therefore n_h(k) / N_h, which
`inclusion_probabilities` records for the inferred measures (`pooling.measures.inferred`,
`pooling.measures.statap`).

With `rates` (one per stratum, e.g. 1,0.2 from `pooling plan-sample`) the design draws a fixed
share of each stratum instead: round(rate_h * N_h) documents (at least one from a stratum that
has any), a simple random sample of it, and the queue is those documents only, interleaved as
above. That is NIST's design: the top ranks judged whole, the rest sampled at a rate.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from pooling.strategies.base import (
    Param,
    QueueSelector,
    Selector,
    Strategy,
    StrategyError,
    TopicRuns,
    register,
    topic_seed,
)
from pooling.strategies.depth import round_robin


@register
class RandomOrder(Strategy):
    name = "random"
    summary = "judge the pool's documents in a uniformly random order (seeded)"

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        queue = round_robin(topic)
        random.Random(seed).shuffle(queue)
        return QueueSelector(queue)


def _int_list(text: str, what: str) -> list[int]:
    try:
        values = [int(v) for v in str(text).split(",") if v.strip()]
    except ValueError as exc:
        raise StrategyError(f"sample {what} must be comma-separated integers, got {text!r}") from exc
    return values


def _float_list(text: str, what: str) -> list[float]:
    try:
        values = [float(v) for v in str(text).split(",") if v.strip()]
    except ValueError as exc:
        raise StrategyError(f"sample {what} must be comma-separated numbers, got {text!r}") from exc
    return values


def allocation_order(sizes: list[int], weights: list[float]) -> list[int]:
    """The stratum of each successive draw, so that after k draws stratum h holds about
    min(N_h, lambda * weight_h * N_h) documents, lambda chosen so the counts add up to k.

    Water-filling: a stratum that runs out hands its share to the others. Deterministic
    (depends on sizes and weights only); the largest shortfall is served first.
    """
    sizes_a = np.asarray(sizes, dtype=float)
    mass = sizes_a * np.asarray(weights, dtype=float)
    taken = np.zeros(len(sizes))
    order: list[int] = []
    for k in range(1, int(sizes_a.sum()) + 1):
        target = _water_fill(sizes_a, mass, k)
        h = int(np.argmax(np.where(taken < sizes_a, target - taken, -np.inf)))
        taken[h] += 1
        order.append(h)
    return order


def _water_fill(sizes: np.ndarray, mass: np.ndarray, k: int) -> np.ndarray:
    """Counts min(N_h, lam * mass_h) summing to k (k <= sum N_h)."""
    capped = np.zeros(len(sizes), dtype=bool)
    while True:
        free = k - sizes[capped].sum()
        lam = free / mass[~capped].sum()
        target = np.where(capped, sizes, lam * mass)
        over = (~capped) & (target > sizes)
        if not over.any():
            return target
        capped |= over


def drawn(rate: float, size: int) -> int:
    """Documents drawn from a stratum of `size` at `rate`: round(rate * size), half up, and at
    least one from a stratum that has any (so every stratum is estimated from its own sample)."""
    if size == 0:
        return 0
    return min(size, max(1, int(rate * size + 0.5)))


class SampleDesign:
    """One topic's stratified design: serving order, each doc's stratum, the stratum sizes."""

    def __init__(self, topic: TopicRuns, seed: int, bounds: list[int], weights: list[float],
                 rates: list[float] | None = None):
        best: dict[str, int] = {}
        for ranking in topic.rankings.values():
            for i, doc in enumerate(ranking):
                if i + 1 < best.get(doc, 1 << 30):
                    best[doc] = i + 1
        self.stratum_of = {d: int(np.searchsorted(bounds, r, side="left")) for d, r in best.items()}
        n_strata = len(bounds) + 1
        members: list[list[str]] = [[] for _ in range(n_strata)]
        for doc in round_robin(topic):
            members[self.stratum_of[doc]].append(doc)
        rng = random.Random(seed)
        for m in members:
            rng.shuffle(m)
        self.sizes = [len(m) for m in members]
        w = (weights + [weights[-1] if weights else 1.0] * n_strata)[:n_strata]
        if rates:
            members = [m[:drawn(rate, len(m))] for m, rate in zip(members, rates, strict=True)]
        cursor = [0] * n_strata
        self.order: list[str] = []
        for h in allocation_order([len(m) for m in members], w):
            self.order.append(members[h][cursor[h]])
            cursor[h] += 1

    def inclusion(self, budget: int) -> list[tuple[str, int, float]]:
        """(doc_id, stratum, inclusion probability) of the first `budget` documents served."""
        chosen = self.order[:budget]
        counts = [0] * len(self.sizes)
        for d in chosen:
            counts[self.stratum_of[d]] += 1
        return [
            (d, self.stratum_of[d], counts[self.stratum_of[d]] / self.sizes[self.stratum_of[d]])
            for d in chosen
        ]


@register
class Sample(Strategy):
    name = "sample"
    summary = "stratified random sample by best rank, with inclusion probabilities (statAP, xinfAP)"
    params = (
        Param("strata", str, "10,30,100", "upper rank bound of each stratum but the last"),
        Param("weights", str, "4,2,1", "per-stratum sampling intensity (relative)"),
        Param("rates", str, "", "per-stratum share drawn, in (0, 1] (e.g. 1,0.2): queue only "
              "that sample (default: the whole pool, in stratified order)"),
    )

    def design(self, topic: TopicRuns, seed: int) -> SampleDesign:
        bounds = _int_list(self.options["strata"], "strata")
        if bounds != sorted(set(bounds)) or any(b < 1 for b in bounds):
            raise StrategyError(f"sample strata must be increasing positive ranks, got {bounds}")
        weights = _float_list(self.options["weights"], "weights")
        if any(w <= 0 for w in weights):
            raise StrategyError(f"sample weights must be positive, got {weights}")
        rates = _float_list(self.options.get("rates") or "", "rates")
        if rates and (len(rates) != len(bounds) + 1 or any(not 0 < r <= 1 for r in rates)):
            raise StrategyError(
                f"sample rates must be one share in (0, 1] per stratum ({len(bounds) + 1} for "
                f"strata bounds {','.join(map(str, bounds)) or '(none)'}), got {rates}")
        return SampleDesign(topic, seed, bounds, weights, rates or None)

    def stratum_labels(self, topic: TopicRuns, seed: int) -> dict[str, str]:
        """Every candidate's stratum as the label stored and written in sampled qrels: "1" for
        the top ranks, then "2", ... (sample_eval.pl compares strata as text)."""
        return {d: str(h + 1) for d, h in self.design(topic, seed).stratum_of.items()}

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        return QueueSelector(self.design(topic, seed).order)

    def inclusion_probabilities(
        self, topics: Mapping[str, TopicRuns], budget: int, seed: int = 0
    ) -> pa.Table:
        """The sample at `budget` per topic: query_id, doc_id, stratum, inclusion_probability.

        Uses the same per-topic seeds as a simulation (`topic_seed(seed, query_id)`).
        """
        rows: dict[str, list] = {"query_id": [], "doc_id": [], "stratum": [], "inclusion_probability": []}
        for qid, topic in topics.items():
            for doc, stratum, p in self.design(topic, topic_seed(seed, qid)).inclusion(budget):
                rows["query_id"].append(qid)
                rows["doc_id"].append(doc)
                rows["stratum"].append(stratum)
                rows["inclusion_probability"].append(p)
        return pa.table(
            rows,
            schema=pa.schema(
                [
                    ("query_id", pa.string()),
                    ("doc_id", pa.string()),
                    ("stratum", pa.int32()),
                    ("inclusion_probability", pa.float64()),
                ]
            ),
        )

    def strata(self, topics: Mapping[str, TopicRuns], seed: int = 0) -> pa.Table:
        """Every candidate's stratum (query_id, doc_id, stratum), as xinfAP needs."""
        rows: dict[str, list] = {"query_id": [], "doc_id": [], "stratum": []}
        for qid, topic in topics.items():
            design = self.design(topic, topic_seed(seed, qid))
            for doc in design.order:
                rows["query_id"].append(qid)
                rows["doc_id"].append(doc)
                rows["stratum"].append(design.stratum_of[doc])
        return pa.table(
            rows,
            schema=pa.schema([("query_id", pa.string()), ("doc_id", pa.string()), ("stratum", pa.int32())]),
        )
