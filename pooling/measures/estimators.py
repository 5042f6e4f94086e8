"""MAP estimated from a stratified sample of judgments: statAP and xinfAP, with intervals.

The sample is a table (query_id, doc_id, relevance, stratum, inclusion_probability), as
`Sample.inclusion_probabilities` records it plus the judgments. Within a stratum every
sampled document has the same inclusion probability (stratified simple random sampling).

- `statap` (Pavlu & Aslam 2007): Horvitz-Thompson estimates of R, of precision at each
  rank and of AP: AP = (1/R) sum over sampled relevant d of prec(rank d) / pi_d.
- `xinfap` (Yilmaz, Kanoulas & Aslam 2008): infAP inside each stratum; needs every pooled
  document's stratum (`strata`: query_id, doc_id, stratum), since the expected precision
  above rank k counts the unsampled pool documents of each stratum there. Documents outside
  the pool count as non-relevant.
Intervals are percentile bootstraps: sampled documents are resampled with replacement
within each (topic, stratum) (strata judged whole are kept as they are), and MAP is
recomputed over the topics of the sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pooling.errors import PoolingError
from pooling.strategies.base import rankings_by_topic

EPSILON = 1e-5  # xinfAP's smoothing of the relevant share in a stratum

ESTIMATE_SCHEMA = pa.schema(
    [("run_id", pa.string()), ("estimate", pa.float64()), ("ci_low", pa.float64()), ("ci_high", pa.float64())]
)


class EstimatorError(PoolingError):
    """A sample cannot be used for estimation (missing columns, inconsistent probabilities)."""


@dataclass
class _Topic:
    """One topic's sample as arrays over its local documents (the last index is padding)."""

    run_docs: np.ndarray  # runs x L local doc indexes
    sampled: np.ndarray  # local indexes of the sampled docs
    relevant: np.ndarray  # per sampled doc
    stratum: np.ndarray  # per local doc, -1 outside the pool
    probability: np.ndarray  # per sampled doc
    sampled_stratum: np.ndarray  # per sampled doc


def _check(sample: pa.Table) -> None:
    need = {"query_id", "doc_id", "relevance", "stratum", "inclusion_probability"}
    missing = sorted(need - set(sample.column_names))
    if missing:
        raise EstimatorError(f"the sample has no column(s) {', '.join(missing)}; expected {sorted(need)}")
    p = np.asarray(sample["inclusion_probability"].to_numpy(zero_copy_only=False), dtype=float)
    if len(p) and (np.any(p <= 0) or np.any(p > 1)):
        raise EstimatorError("inclusion probabilities must be in (0, 1]; check the sample's design")


def _topics(
    sample: pa.Table, runs: Mapping[str, pa.Table], strata: pa.Table | None
) -> list[_Topic]:
    full = rankings_by_topic(runs, None)
    run_ids = list(runs)
    by_topic: dict[str, list[tuple[str, int, int, float]]] = {}
    for q, d, r, s, p in zip(
        *(sample[c].to_pylist() for c in ("query_id", "doc_id", "relevance", "stratum", "inclusion_probability")),
        strict=True,
    ):
        by_topic.setdefault(q, []).append((d, int(r), int(s), float(p)))
    pool: dict[str, dict[str, int]] = {}
    if strata is not None:
        for q, d, s in zip(*(strata[c].to_pylist() for c in ("query_id", "doc_id", "stratum")), strict=True):
            pool.setdefault(q, {})[d] = int(s)
    out = []
    for q in sorted(by_topic):
        rows = by_topic[q]
        index: dict[str, int] = {}
        for d, *_ in rows:
            index.setdefault(d, len(index))
        rankings = full.get(q)
        lists = [rankings.rankings.get(r, []) if rankings else [] for r in run_ids]
        for ranking in lists:
            for d in ranking:
                index.setdefault(d, len(index))
        longest = max((len(x) for x in lists), default=0)
        pad = len(index)
        run_docs = np.full((len(run_ids), max(longest, 1)), pad, dtype=np.int64)
        for s, ranking in enumerate(lists):
            run_docs[s, : len(ranking)] = [index[d] for d in ranking]
        stratum = np.full(pad + 1, -1, dtype=np.int64)
        for d, s in pool.get(q, {}).items():
            if d in index:
                stratum[index[d]] = s
        sampled = np.array([index[d] for d, *_ in rows], dtype=np.int64)
        sampled_stratum = np.array([s for *_, s, _ in rows], dtype=np.int64)
        stratum[sampled] = sampled_stratum
        out.append(
            _Topic(
                run_docs,
                sampled,
                np.array([r > 0 for _, r, _, _ in rows], dtype=float),
                stratum,
                np.array([p for *_, p in rows], dtype=float),
                sampled_stratum,
            )
        )
    return out


def _statap_topic(t: _Topic, multiplicity: np.ndarray) -> np.ndarray:
    weight = np.zeros(len(t.stratum))
    np.add.at(weight, t.sampled, multiplicity * t.relevant / t.probability)
    r_hat = weight.sum()
    if r_hat <= 0:
        return np.zeros(len(t.run_docs))
    w = weight[t.run_docs]
    precision = np.cumsum(w, axis=1) / np.arange(1, w.shape[1] + 1)
    return (w * precision).sum(axis=1) / r_hat


def _xinfap_topic(t: _Topic, multiplicity: np.ndarray) -> np.ndarray:
    n = len(t.stratum)
    rel = np.zeros(n)
    judged = np.zeros(n)
    np.add.at(rel, t.sampled, multiplicity * t.relevant)
    np.add.at(judged, t.sampled, multiplicity)
    strata = np.unique(t.sampled_stratum)
    rate = {s: t.probability[t.sampled_stratum == s][0] for s in strata}
    r_hat = sum(rel[t.sampled[t.sampled_stratum == s]].sum() / rate[s] for s in strata)
    if r_hat <= 0:
        return np.zeros(len(t.run_docs))
    docs = t.run_docs
    k = np.arange(1, docs.shape[1] + 1)
    expected_above = np.zeros(docs.shape)
    doc_stratum = t.stratum[docs]
    for s in strata:
        in_s = doc_stratum == s
        # counts over ranks 1..k-1 (exclusive of rank k)
        pool_above = np.cumsum(in_s, axis=1) - in_s
        rel_above = np.cumsum(in_s * rel[docs], axis=1) - in_s * rel[docs]
        judged_above = np.cumsum(in_s * judged[docs], axis=1) - in_s * judged[docs]
        expected_above += pool_above * (rel_above + EPSILON) / (judged_above + 2 * EPSILON)
    precision = (1.0 + expected_above) / k
    inverse_rate = np.zeros(n)
    for s in strata:
        inverse_rate[t.stratum == s] = 1.0 / rate[s]
    contribution = rel[docs] * inverse_rate[docs] * precision
    return contribution.sum(axis=1) / r_hat


def _estimate(topics: list[_Topic], per_topic, run_ids: list[str], n_bootstrap: int, level: float, seed: int) -> pa.Table:
    if not topics:
        raise EstimatorError("the sample holds no judgment; judge some documents first")
    point = np.mean([per_topic(t, np.ones(len(t.sampled))) for t in topics], axis=0)
    rng = np.random.default_rng(seed)
    reps = np.zeros((n_bootstrap, len(run_ids)))
    for t in topics:
        # A stratum judged whole (probability 1) is a census: it is never resampled.
        groups = [
            g
            for s in np.unique(t.sampled_stratum)
            if (g := np.flatnonzero(t.sampled_stratum == s)).size and t.probability[g[0]] < 1.0
        ]
        fixed = np.ones(len(t.sampled))
        for g in groups:
            fixed[g] = 0.0
        for b in range(n_bootstrap):
            m = fixed.copy()
            for g in groups:
                np.add.at(m, rng.choice(g, size=len(g), replace=True), 1.0)
            reps[b] += per_topic(t, m)
    reps /= len(topics)
    alpha = (1.0 - level) / 2.0
    low, high = (np.quantile(reps, [alpha, 1 - alpha], axis=0) if n_bootstrap else (point, point))
    return pa.Table.from_pylist(
        [
            {"run_id": r, "estimate": float(point[i]), "ci_low": float(low[i]), "ci_high": float(high[i])}
            for i, r in enumerate(run_ids)
        ],
        schema=ESTIMATE_SCHEMA,
    )


def statap(
    sample: pa.Table,
    runs: Mapping[str, pa.Table],
    *,
    n_bootstrap: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> pa.Table:
    """Each run's statAP estimate of MAP over the sample's topics: run_id, estimate, ci_low, ci_high."""
    _check(sample)
    return _estimate(_topics(sample, runs, None), _statap_topic, list(runs), n_bootstrap, level, seed)


def xinfap(
    sample: pa.Table,
    runs: Mapping[str, pa.Table],
    strata: pa.Table,
    *,
    n_bootstrap: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> pa.Table:
    """Each run's xinfAP estimate of MAP: run_id, estimate, ci_low, ci_high.

    strata: every pooled document's stratum (query_id, doc_id, stratum), e.g. `Sample.strata`.
    """
    _check(sample)
    return _estimate(_topics(sample, runs, strata), _xinfap_topic, list(runs), n_bootstrap, level, seed)
