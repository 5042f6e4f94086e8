"""Estimates from sampled qrels with their variance and a confidence interval, per run.

What a leaderboard shows for a sampled collection: for each run, the mean over topics of an
estimator (`infAP` = xinfAP, `infNDCG` or `statAP`), the variance of that mean and a normal
interval estimate +- z * sqrt(variance). The variance is the sampling variance of the
judgments, topics held fixed: topics are sampled independently, so the mean's variance is the
sum of the per-topic variances over T^2.

Per-topic variances: statAP's linearised ratio-estimator variance
(`pooling.measures.statap`); for xinfAP and infNDCG a stratified bootstrap: the judged
documents of each stratum are drawn again with replacement, as many as were judged (a stratum
judged whole, or with one judged document, is kept as it is), the estimate is recomputed on
each replicate, and the replicates' variance is the topic's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import NormalDist

import numpy as np
import pyarrow as pa

from pooling.errors import EvaluationError
from pooling.evaluation.sampled import (
    SampledQrels,
    SampledQrelsInput,
    SampledRunInput,
    load_sampled_qrels,
    rank_run,
    score_run,
)
from pooling.measures.inferred import SampledTopic, infer_topic, topic_totals
from pooling.measures.statap import statap_topic
from pooling.terminal.progress import NoProgress, Progress

ESTIMATORS = ("infAP", "infNDCG", "statAP")
_ALIASES = {"xinfAP": "infAP", "infAP": "infAP", "infNDCG": "infNDCG", "statAP": "statAP"}

TOPIC_SCHEMA = pa.schema([("run_id", pa.string()), ("query_id", pa.string()),
                          ("measure", pa.string()), ("estimate", pa.float64()),
                          ("variance", pa.float64())])
RUN_SCHEMA = pa.schema([("run_id", pa.string()), ("measure", pa.string()),
                        ("estimate", pa.float64()), ("variance", pa.float64()),
                        ("ci_low", pa.float64()), ("ci_high", pa.float64()),
                        ("topics", pa.int64()), ("judged", pa.int64()), ("pooled", pa.int64())])


def bootstrap_weights(topic: SampledTopic, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """replicates x pooled docs: each judged document's multiplicity in a stratified resample."""
    weights = np.ones((replicates, len(topic.value)))
    for h in range(len(topic.strata)):
        members = np.flatnonzero(topic.judged & (topic.stratum == h))
        n = len(members)
        if n < 2 or n >= topic.pooled[h]:
            continue
        weights[:, members] = rng.multinomial(n, np.full(n, 1.0 / n), size=replicates)
    return weights


def topic_estimates(
    qrels: SampledQrels,
    runs: Sequence[SampledRunInput],
    measures: Iterable[str] = ESTIMATORS,
    *,
    n_bootstrap: int = 200,
    seed: int = 0,
    progress: Progress | None = None,
) -> pa.Table:
    """Per run, topic and estimator: the estimate and its variance (TOPIC_SCHEMA).

    Every run is scored on the same replicates of each topic (drawn once, topics in the
    sample's order), and one pass over a run's ranking gives both infAP's and infNDCG's
    replicates. progress hears of each run scored."""
    wanted = [_canonical(m) for m in measures]
    progress = progress or NoProgress()
    rng = np.random.default_rng(seed)
    replicates: dict[str, tuple[np.ndarray, object]] = {}
    if any(m != "statAP" for m in wanted):
        for q, topic in qrels.topics.items():
            w = bootstrap_weights(topic, n_bootstrap, rng)
            replicates[q] = (w, topic_totals(topic, w))
    rows = []
    progress.start("estimating intervals, run by run", total=len(runs))
    for run in runs:
        scored = score_run(qrels, rank_run(run))
        for q in scored.query_ids:
            topic = qrels.topics[q]
            point = scored.values[q]
            boot = None
            if q in replicates:
                w, totals = replicates[q]
                boot = infer_topic(topic, totals, scored.positions[q], w,  # type: ignore[arg-type]
                                   by_rank=False)
            for m in wanted:
                if m == "statAP":
                    s = statap_topic(topic, scored.positions[q])
                    rows.append((scored.run_id, q, m, s.estimate, s.variance))
                    continue
                values = boot.inf_ap if m == "infAP" else boot.inf_ndcg  # type: ignore[union-attr]
                estimate = float((point.inf_ap if m == "infAP" else point.inf_ndcg)[0])
                variance = float(np.var(values, ddof=1)) if len(values) > 1 else 0.0
                rows.append((scored.run_id, q, m, estimate, variance))
        progress.advance()
    progress.finish()
    return pa.table(list(zip(*rows, strict=True)) if rows else [[]] * 5, schema=TOPIC_SCHEMA)


def sampled_estimates(
    qrels: SampledQrelsInput,
    run_or_runs: SampledRunInput | Sequence[SampledRunInput],
    measures: str | Iterable[str] = ESTIMATORS,
    *,
    level: float = 0.95,
    n_bootstrap: int = 200,
    seed: int = 0,
    gains: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> pa.Table:
    """Per run and estimator: the mean over topics, its variance, a normal `level` interval,
    the topics averaged and the judged and pooled pairs of the sample (RUN_SCHEMA).
    progress hears of each run scored."""
    if not 0 < level < 1:
        raise EvaluationError(f"level {level} is not a probability; give e.g. 0.95")
    pools = load_sampled_qrels(qrels, gains)
    runs = ([run_or_runs] if isinstance(run_or_runs, str | bytes) or not isinstance(
        run_or_runs, Sequence) else list(run_or_runs))
    per_topic = topic_estimates(pools, runs, [measures] if isinstance(measures, str) else measures,
                                n_bootstrap=n_bootstrap, seed=seed, progress=progress)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    judged = int(sum(int(t.judged.sum()) for t in pools.topics.values()))
    pooled = int(sum(len(t.value) for t in pools.topics.values()))
    rows = []
    keys = list(dict.fromkeys(zip(per_topic["run_id"].to_pylist(),
                                  per_topic["measure"].to_pylist(), strict=True)))
    run_col = np.array(per_topic["run_id"].to_pylist(), dtype=object)
    measure_col = np.array(per_topic["measure"].to_pylist(), dtype=object)
    estimate_col = per_topic["estimate"].to_numpy()
    variance_col = per_topic["variance"].to_numpy()
    for run_id, m in keys:
        sel = (run_col == run_id) & (measure_col == m)
        t = int(sel.sum())
        mean = float(estimate_col[sel].mean())
        variance = float(variance_col[sel].sum() / (t * t))
        half = z * variance ** 0.5
        rows.append((run_id, m, mean, variance, mean - half, mean + half, t, judged, pooled))
    return pa.table(list(zip(*rows, strict=True)) if rows else [[]] * 9, schema=RUN_SCHEMA)


def _canonical(name: str) -> str:
    if name not in _ALIASES:
        raise EvaluationError(f"no interval for {name!r}; estimators with a variance: "
                              f"{', '.join(ESTIMATORS)} (xinfAP is infAP)")
    return _ALIASES[name]
