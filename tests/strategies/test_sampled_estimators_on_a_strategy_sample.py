"""statAP and xinfAP: exact on a census, sensible intervals on a sample."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from pooling.measures.estimators import EstimatorError, statap, xinfap
from pooling.strategies import get_strategy
from pooling.strategies.replays import mean_ap, parse_topics, prepare


def _judge(table, qrels):
    grades = {(q, d): g for q, d, g in zip(*(qrels[c].to_pylist() for c in ("query_id", "doc_id", "relevance")), strict=True)}
    rel = [grades.get((q, d), 0) for q, d in zip(table["query_id"].to_pylist(), table["doc_id"].to_pylist(), strict=True)]
    return table.append_column("relevance", pa.array(rel, pa.int64()))


@pytest.fixture(scope="module")
def ten_topics(robust03):
    qrels, runs = robust03
    topics = parse_topics("601-610")
    data = prepare(qrels, runs, 100, topics)
    keep = pa.array(topics)
    sub_runs = {r: t.filter(pa.compute.is_in(t["query_id"], keep)) for r, t in runs.items()}
    return data, qrels, sub_runs


@pytest.mark.shared
@pytest.mark.parametrize("estimator", ["statap", "xinfap"])
def test_a_census_of_the_pool_gives_the_exact_map(ten_topics, estimator):
    data, qrels, runs = ten_topics
    design = get_strategy("sample")
    sample = _judge(design.inclusion_probabilities(data.topics, budget=10**6), qrels)
    if estimator == "statap":
        est = statap(sample, runs, n_bootstrap=20)
    else:
        est = xinfap(sample, runs, design.strata(data.topics), n_bootstrap=20)
    exact = mean_ap(data.run_docs, data.pool_relevant, data.pool_relevant_per_topic)
    np.testing.assert_allclose(est["estimate"].to_numpy(), exact, atol=1e-6)
    np.testing.assert_allclose(est["ci_low"].to_numpy(), exact, atol=1e-6)  # a census has no variance


@pytest.mark.shared
def test_xinfap_interval_from_a_sample_is_ordered_and_covers_most_runs(ten_topics):
    data, qrels, runs = ten_topics
    design = get_strategy("sample")
    sample = _judge(design.inclusion_probabilities(data.topics, budget=150), qrels)
    est = xinfap(sample, runs, design.strata(data.topics), n_bootstrap=100)
    exact = mean_ap(data.run_docs, data.pool_relevant, data.pool_relevant_per_topic)
    low, high = est["ci_low"].to_numpy(), est["ci_high"].to_numpy()
    assert np.all(low <= est["estimate"].to_numpy()) and np.all(est["estimate"].to_numpy() <= high)
    assert np.mean((low <= exact) & (exact <= high)) >= 0.7


def test_a_sample_without_probabilities_is_rejected():
    bad = pa.table({"query_id": ["1"], "doc_id": ["d"], "relevance": [1], "stratum": [0]})
    with pytest.raises(EstimatorError, match="inclusion_probability"):
        statap(bad, {})
