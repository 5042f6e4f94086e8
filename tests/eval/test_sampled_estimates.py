"""statAP by hand and by simulation, intervals from sampled qrels, and `pooling eval` on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

import pooling
from pooling.cli.app import app
from pooling.errors import EvaluationError
from pooling.evaluation.sampled import sample_eval_text
from pooling.measures.inferred import (
    infer_topic,
    ranked_positions,
    sampled_topics,
    topic_totals,
    unit_weights,
)
from pooling.measures.statap import statap_topic

# Stratum 1 judged whole (a relevant, b not); stratum 2: c relevant, d not, e and f unsampled.
HAND = "1 0 a 1 1\n1 0 b 1 0\n1 0 c 2 1\n1 0 d 2 0\n1 0 e 2 -1\n1 0 f 2 -1\n"


def _topic(text: str):
    rows = [line.split() for line in text.splitlines()]
    table = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                      "stratum": [r[3] for r in rows], "relevance": [int(r[4]) for r in rows]})
    return sampled_topics(table)["1"]


def test_statap_and_its_variance_on_a_case_worked_by_hand():
    topic = _topic(HAND)
    result = statap_topic(topic, ranked_positions(topic, pa.array(["b", "e", "c", "a"])))
    # R = 1/1 + 1/0.5 = 3. Precision at c (rank 3) = (1 + nothing above) / 3 = 1/3; at a
    # (rank 4) = (1 + c counted by 1/pi = 2) / 4 = 3/4. statAP = (2 * 1/3 + 1 * 3/4) / 3 = 17/36.
    assert result.estimate == pytest.approx(17 / 36)
    # u_c = (1/3 + a's 1/(1 * 4) - 17/36) / 3 = 1/27, u_d = 0: s^2 = (1/27)^2 / 2; N = 4,
    # n = 2: 16 * (1 - 1/2) * s^2 / 2.
    assert result.variance == pytest.approx(16 * 0.5 * (1 / 27) ** 2 / 2 / 2)


def test_a_census_has_no_variance_and_statap_equals_ap():
    census = "1 0 a 1 1\n1 0 b 1 0\n1 0 c 1 1\n"
    topic = _topic(census)
    result = statap_topic(topic, ranked_positions(topic, pa.array(["b", "a", "x", "c"])))
    assert result.variance == 0.0
    assert result.estimate == pytest.approx((1 / 2 + 2 / 4) / 2)


def test_statap_is_unbiased_over_many_stratified_samples():
    rng = np.random.default_rng(7)
    n_pool, top = 400, 40
    relevant = rng.random(n_pool) < np.linspace(0.6, 0.02, n_pool)
    order = np.argsort(np.arange(n_pool) + rng.normal(0, 60, n_pool))
    docs = np.array([f"d{i}" for i in range(n_pool)])
    ranked = pa.array(docs[order])
    rel_ranked = relevant[order]
    exact = float((np.cumsum(rel_ranked) / np.arange(1, n_pool + 1))[rel_ranked].sum()
                  / relevant.sum())
    estimates, variances = [], []
    for _ in range(1500):
        judged = np.zeros(n_pool, dtype=bool)
        judged[:top] = True
        judged[top + rng.choice(n_pool - top, 72, replace=False)] = True
        table = pa.table({"query_id": ["1"] * n_pool, "doc_id": docs,
                          "stratum": np.where(np.arange(n_pool) < top, "1", "2"),
                          "relevance": np.where(judged, relevant.astype(int), -1)})
        topic = sampled_topics(table)["1"]
        result = statap_topic(topic, ranked_positions(topic, ranked))
        estimates.append(result.estimate)
        variances.append(result.variance)
    assert abs(np.mean(estimates) - exact) < 0.02
    # The linearised variance is of the order of the spread seen over the samples.
    assert 0.5 < np.mean(variances) / np.var(estimates) < 2.0


def test_xinfap_on_a_census_is_the_ap_over_the_pool_within_the_smoothing():
    topic = _topic("1 0 a 1 1\n1 0 b 1 0\n1 0 c 1 1\n")
    value = infer_topic(topic, topic_totals(topic, unit_weights(topic)),
                        ranked_positions(topic, pa.array(["b", "a", "x", "c"])), unit_weights(topic))
    assert float(value.inf_ap[0]) == pytest.approx(0.5, abs=1e-4)


@pytest.fixture
def sampled_files(tmp_path: Path) -> tuple[str, str, str]:
    rng = np.random.default_rng(3)
    lines, run_a, run_b = [], [], []
    for t in range(1, 6):
        for i in range(300):
            stratum = "1" if i < 30 else "2"
            grade = int(rng.random() < 0.5 - i / 700) if (stratum == "1" or rng.random() < 0.2) else -1
            lines.append(f"{t} 0 d{i} {stratum} {grade}")
        for i, doc in enumerate(rng.permutation(300)[:200]):
            run_a.append(f"{t} Q0 d{doc} {i} {200 - i} ra")
        for i in range(200):
            run_b.append(f"0{t} Q0 d{i} {i} {200 - i} rb")
    paths = [tmp_path / "qrels", tmp_path / "a", tmp_path / "b"]
    for path, text in zip(paths, (lines, run_a, run_b), strict=True):
        path.write_text("\n".join(text) + "\n")
    return tuple(str(p) for p in paths)


def test_each_run_gets_an_estimate_a_variance_and_an_interval_around_it(sampled_files):
    qrels, a, b = sampled_files
    table = pooling.sampled_estimates(qrels, [a, b], n_bootstrap=50)
    assert table["measure"].to_pylist() == ["infAP", "infNDCG", "statAP"] * 2
    for row in table.to_pylist():
        assert row["variance"] > 0 and row["ci_low"] < row["estimate"] < row["ci_high"]
        assert row["topics"] == 5
    infap = pooling.evaluate_sampled(qrels, b, ["xinfAP"]).runs[0].summary["infAP"]
    assert table.to_pylist()[3]["estimate"] == pytest.approx(infap)
    assert table.to_pylist()[3]["estimate"] > table.to_pylist()[0]["estimate"]  # b ranks well


def test_an_estimator_without_a_variance_is_refused(sampled_files):
    qrels, a, _ = sampled_files
    with pytest.raises(EvaluationError, match="no interval for 'iP10'"):
        pooling.sampled_estimates(qrels, a, ["iP10"])


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_pooling_eval_recognises_five_columns_and_prints_trec_eval_layout(sampled_files):
    qrels, a, _ = sampled_files
    out = invoke("eval", "-q", "-m", "xinfAP", "-m", "iP@10", "-m", "statAP", qrels, a).output
    lines = [line.split() for line in out.splitlines()]
    assert [row[0] for row in lines[:3]] == ["infAP", "iP10", "statAP"]
    assert lines[-3][:2] == ["infAP", "all"]
    assert invoke("eval", "-R", "sampled", "-q", "-m", "xinfAP", "-m", "iP@10", "-m", "statAP",
                  qrels, a).output == out


def test_sample_eval_option_prints_the_scripts_own_text(sampled_files):
    qrels, a, _ = sampled_files
    out = invoke("eval", "--sample-eval", "-q", "-G", "1=2", qrels, a).output
    assert out == sample_eval_text(qrels, a, per_query=True, gains=["1=2"])


def test_trec_eval_options_are_refused_with_sampled_qrels(sampled_files):
    qrels, a, _ = sampled_files
    with pytest.raises(EvaluationError, match="-c, -M do.*not apply to sampled qrels"):
        invoke("eval", "-c", "-M", "10", qrels, a)


def test_gains_need_sampled_qrels_and_a_well_formed_pair(tmp_path, sampled_files):
    qrels, a, _ = sampled_files
    plain = tmp_path / "plain"
    plain.write_text("1 0 d1 1\n")
    with pytest.raises(EvaluationError, match="-G and --sample-eval are for sampled qrels"):
        invoke("eval", "-G", "1=2", str(plain), a)
    with pytest.raises(EvaluationError, match="-G '12=3'"):
        invoke("eval", "-G", "12=3", qrels, a)


def test_a_run_sharing_no_topic_is_reported(tmp_path, sampled_files):
    qrels, _, _ = sampled_files
    run = tmp_path / "r"
    run.write_text("99 Q0 d1 1 1 r\n")
    with pytest.raises(EvaluationError, match="shares no topic with the sampled qrels"):
        pooling.evaluate_sampled(qrels, run)
