"""statAP and xinfAP on a `sample` strategy's draw: exact on a census, sensible intervals on a sample.

The estimators are `pooling.evaluation.sampled` (sample_eval.pl's xinfAP) and
`pooling.evaluation.sampled_intervals` (estimates with their variance); the strategy's draw is
turned into sampled qrels (every pooled pair, -1 when not drawn) as a sampled round stores it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from pooling.errors import FormatError
from pooling.evaluation.sampled_intervals import sampled_estimates
from pooling.evaluation.trec_input import TrecRun
from pooling.formats.sampled_qrels import UNSAMPLED, parse_sampled_qrels
from pooling.strategies import get_strategy
from pooling.strategies.replays import mean_ap, parse_topics, prepare


def _sampled_qrels(design, topics, budget, qrels) -> pa.Table:
    """The draw at `budget` per topic as sampled qrels: pooled pairs, stratum, grade or -1."""
    grades = {(q, d): g for q, d, g in zip(*(qrels[c].to_pylist() for c in
                                            ("query_id", "doc_id", "relevance")), strict=True)}
    drawn = design.inclusion_probabilities(topics, budget=budget)
    picked = set(zip(drawn["query_id"].to_pylist(), drawn["doc_id"].to_pylist(), strict=True))
    strata = design.strata(topics)
    rows = list(zip(*(strata[c].to_pylist() for c in ("query_id", "doc_id", "stratum")),
                    strict=True))
    return pa.table({
        "query_id": [q for q, _, _ in rows], "doc_id": [d for _, d, _ in rows],
        "stratum": [str(s) for _, _, s in rows],
        "relevance": pa.array([max(grades.get((q, d), 0), 0) if (q, d) in picked else UNSAMPLED
                               for q, d, _ in rows], pa.int64())})


@pytest.fixture(scope="module")
def ten_topics(robust03):
    qrels, runs = robust03
    topics = parse_topics("601-610")
    data = prepare(qrels, runs, 100, topics)
    keep = pa.array(topics)
    sub_runs = [TrecRun(t.filter(pa.compute.is_in(t["query_id"], keep)), r, r)
                for r, t in runs.items()]
    return data, qrels, sub_runs


@pytest.mark.shared
@pytest.mark.parametrize("estimator", ["statAP", "infAP"])
def test_a_census_of_the_pool_gives_the_exact_map(ten_topics, estimator):
    data, qrels, runs = ten_topics
    design = get_strategy("sample")
    sample = _sampled_qrels(design, data.topics, 10**6, qrels)
    est = sampled_estimates(sample, runs, estimator, n_bootstrap=20)
    exact = mean_ap(data.run_docs, data.pool_relevant, data.pool_relevant_per_topic)
    # statAP is exact on a census; xinfAP as sample_eval.pl computes it smooths each
    # stratum's relevant share (+0.00001 / +0.00003), which moves a census by under 1e-4.
    atol = 1e-6 if estimator == "statAP" else 1e-4
    np.testing.assert_allclose(est["estimate"].to_numpy(), exact, atol=atol)
    np.testing.assert_allclose(est["ci_low"].to_numpy(), est["estimate"].to_numpy(), atol=1e-12)


@pytest.mark.shared
def test_xinfap_interval_from_a_sample_is_ordered_and_covers_most_runs(ten_topics):
    data, qrels, runs = ten_topics
    design = get_strategy("sample")
    sample = _sampled_qrels(design, data.topics, 150, qrels)
    est = sampled_estimates(sample, runs, "infAP", n_bootstrap=100)
    exact = mean_ap(data.run_docs, data.pool_relevant, data.pool_relevant_per_topic)
    low, high = est["ci_low"].to_numpy(), est["ci_high"].to_numpy()
    assert np.all(low <= est["estimate"].to_numpy()) and np.all(est["estimate"].to_numpy() <= high)
    assert np.mean((low <= exact) & (exact <= high)) >= 0.7


def test_a_sample_without_strata_is_rejected_naming_the_line():
    with pytest.raises(FormatError, match="plain.qrels:1: expected 5 fields"):
        parse_sampled_qrels(b"1 0 d 1\n", "plain.qrels")
