"""The bootstrap behind a sampled leaderboard's intervals, against a plain rank-by-rank
computation: xinfAP, infNDCG and the estimated relevant by rank of every replicate equal a
loop over the ranking written from the formulas (docs/sampling.md), and a run's interval
variances equal the spread of those replicates drawn with the same seed. Random topics with
two or three strata, unsampled and unpooled documents, and rankings with no judged document."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from pooling.evaluation.sampled import load_sampled_qrels
from pooling.evaluation.sampled_intervals import bootstrap_weights, topic_estimates
from pooling.measures.inferred import (
    infer_topic,
    ranked_positions,
    sampled_topics,
    topic_totals,
)

S_REL, S_JUD = 0.00001, 0.00003


def _reference(topic, totals, positions, w: np.ndarray, b: int):
    """Replicate b's xinfAP, infNDCG and estimated relevant by rank, one rank at a time."""
    strata = range(len(topic.strata))
    docs_above = [0] * len(topic.strata)
    judged_above = [0.0] * len(topic.strata)
    rel_above = [0.0] * len(topic.strata)
    pooled_above = 0
    sap = [0.0] * len(topic.strata)
    gain = [0.0] * len(topic.strata)
    by_rank = []
    for k, p in enumerate(positions.tolist(), start=1):
        pooled = p >= 0
        h = int(topic.stratum[p]) if pooled else -1
        value = float(topic.value[p]) if pooled else -1.0
        m = float(w[b, p]) if pooled else 0.0
        if pooled and value > 0:
            above = 0.0
            for g in strata:
                share = docs_above[g] / pooled_above if pooled_above else 0.0
                above += share * (rel_above[g] + S_REL) / (judged_above[g] + S_JUD)
            precision = 1 / k + (pooled_above / k) * above
            sap[h] += m * precision
            gain[h] += m * value / (math.log(k + 1) / math.log(2) if k > 1 else 1.0)
        if pooled:
            docs_above[h] += 1
            pooled_above += 1
            if value >= 0:
                judged_above[h] += m
                rel_above[h] += m if value > 0 else 0.0
        by_rank.append(sum(docs_above[g] * (rel_above[g] + S_REL) / (judged_above[g] + S_JUD)
                           for g in strata))
    num_rel = float(totals.num_rel[b])
    inf_ap = 0.0
    for g in strata:
        judged, relevant = float(totals.judged[b, g]), float(totals.relevant[b, g])
        if judged and num_rel:
            estimate = relevant * topic.pooled[g] / judged
            inf_ap += estimate / num_rel * (sap[g] / relevant if relevant else 0.0)
    dcg = sum(docs_above[g] / pooled_above * gain[g] / judged_above[g]
              for g in strata if pooled_above and judged_above[g])
    ideal = float(totals.ideal_dcg[b])
    return inf_ap, pooled_above * dcg / ideal if ideal else 0.0, by_rank


def _random_topic(rng: np.random.Generator, n_strata: int):
    n = int(rng.integers(40, 160))
    stratum = np.sort(rng.integers(1, n_strata + 1, n))
    judged = (stratum == 1) | (rng.random(n) < 0.3)
    grade = np.where(judged, rng.choice([0, 0, 1, 2], n), -1)
    table = pa.table({"query_id": ["7"] * n, "doc_id": [f"d{i}" for i in range(n)],
                      "stratum": [str(s) for s in stratum], "relevance": grade.tolist()})
    return sampled_topics(table)["7"], n


@pytest.mark.parametrize("seed", range(6))
def test_every_replicate_equals_the_rank_by_rank_formulas(seed):
    rng = np.random.default_rng(seed)
    topic, n = _random_topic(rng, 2 + seed % 2)
    w = bootstrap_weights(topic, 30, rng)
    totals = topic_totals(topic, w)
    docs = [f"d{i}" for i in rng.permutation(n)[: int(rng.integers(1, n))]]
    docs[::5] = [f"x{i}" for i in range(len(docs[::5]))]  # documents outside the pool
    positions = ranked_positions(topic, pa.array(docs))
    full = infer_topic(topic, totals, positions, w)
    lean = infer_topic(topic, totals, positions, w, by_rank=False)
    for b in range(len(w)):
        inf_ap, inf_ndcg, by_rank = _reference(topic, totals, positions, w, b)
        assert full.inf_ap[b] == pytest.approx(inf_ap, rel=1e-12, abs=1e-15)
        assert full.inf_ndcg[b] == pytest.approx(inf_ndcg, rel=1e-12, abs=1e-15)
        assert full.rel_ret_by_rank[b] == pytest.approx(by_rank, rel=1e-12)
    assert np.array_equal(lean.inf_ap, full.inf_ap) and np.array_equal(lean.inf_ndcg,
                                                                        full.inf_ndcg)


def test_a_ranking_with_no_judged_document_scores_zero_in_every_replicate():
    rng = np.random.default_rng(11)
    topic, _ = _random_topic(rng, 2)
    w = bootstrap_weights(topic, 20, rng)
    unjudged = [d for d, v in zip(topic.doc_ids.to_pylist(), topic.value, strict=True) if v < 0]
    values = infer_topic(topic, topic_totals(topic, w),
                         ranked_positions(topic, pa.array(unjudged[:30] + ["nowhere"])), w)
    assert values.inf_ap.tolist() == [0.0] * 20 and values.inf_ndcg.tolist() == [0.0] * 20


def test_interval_variances_are_the_spread_of_the_replicates_drawn_from_the_seed(tmp_path):
    rng = np.random.default_rng(5)
    rows = []
    for q in ("1", "2", "3"):
        for i in range(120):
            stratum = "1" if i < 20 else "2"
            judged = stratum == "1" or rng.random() < 0.25
            rows.append((q, f"d{i}", stratum, int(rng.random() < 0.4) if judged else -1))
    table = pa.table({k: [r[i] for r in rows] for i, k in
                      enumerate(("query_id", "doc_id", "stratum", "relevance"))})
    ranked: dict[tuple[int, str], list[str]] = {}
    files = []
    for r in range(3):
        lines = []
        for q in ("1", "2", "3"):
            ranked[(r, q)] = [f"d{d}" for d in rng.permutation(130)[:90]]
            lines += [f"{q} Q0 {d} {k} {200 - k} run{r}"
                      for k, d in enumerate(ranked[(r, q)], start=1)]
        files.append(tmp_path / f"run{r}")
        files[-1].write_text("\n".join(lines) + "\n")
    qrels = load_sampled_qrels(table)
    got = topic_estimates(qrels, [str(f) for f in files], ["infAP", "infNDCG"], n_bootstrap=40,
                          seed=9)
    assert got.num_rows == 3 * 3 * 2
    # The same draws: topics in the sample's order, one generator seeded once.
    draw = np.random.default_rng(9)
    weights = {q: bootstrap_weights(t, 40, draw) for q, t in qrels.topics.items()}
    for row in got.to_pylist():
        q = row["query_id"]
        topic, w = qrels.topics[q], weights[q]
        totals = topic_totals(topic, w)
        positions = ranked_positions(topic, pa.array(ranked[(int(row["run_id"][-1]), q)]))
        replicates = [_reference(topic, totals, positions, w, b)[row["measure"] == "infNDCG"]
                      for b in range(len(w))]
        assert row["variance"] == pytest.approx(np.var(replicates, ddof=1), rel=1e-9)
