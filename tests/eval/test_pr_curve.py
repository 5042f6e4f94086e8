"""The precision-recall curve: raw points by hand, and its interpolation equals trec_eval's."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pooling.evaluation import evaluate
from pooling.evaluation.curves import mean_interpolated_curve, precision_recall_points


def test_points_follow_trec_eval_order_and_count_every_retrieved_document():
    qrels = pa.table({"query_id": ["1"] * 3, "doc_id": ["a", "b", "c"], "relevance": [1, 0, 2]})
    # Tie on score 2.0: doc_id descending puts "c" before "b".
    run = pa.table({"query_id": ["1"] * 4, "doc_id": ["a", "b", "c", "z"],
                    "score": [3.0, 2.0, 2.0, 1.0]})
    points = precision_recall_points(qrels, run).to_pylist()
    assert [(p["rank"], p["recall"], p["precision"]) for p in points] == [(1, 0.5, 1.0), (2, 1.0, 1.0)]
    strict = precision_recall_points(qrels, run, relevance_level=2).to_pylist()
    assert [(p["rank"], p["recall"], p["precision"]) for p in strict] == [(2, 1.0, 0.5)]


def test_repeated_documents_are_an_error():
    from pooling.errors import EvaluationError

    qrels = pa.table({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    run = pa.table({"query_id": ["1", "1"], "doc_id": ["a", "a"], "score": [2.0, 1.0]})
    with pytest.raises(EvaluationError, match="twice"):
        precision_recall_points(qrels, run)


def test_mean_interpolated_curve_is_trec_evals_iprec_at_recall(shared_dir):
    golden = shared_dir / "golden/trec_eval"
    for qrels, run in [("qrels.test", "results.test"), ("qrels.rel_level", "results.test")]:
        q, r = str(golden / qrels), str(golden / run)
        curve = mean_interpolated_curve(q, r)
        means = evaluate(q, r, ["iprec_at_recall"], missing_topics="skip").means.to_pylist()
        expected = {m["measure"]: m["value"] for m in means}
        for level, value in zip(curve["recall"].to_pylist(), curve["precision"].to_pylist(),
                                strict=True):
            assert value == pytest.approx(expected[f"iprec_at_recall_{level:3.2f}"], abs=1e-12)


def test_robust03_curves_match_iprec_at_recall(shared_dir):
    root = shared_dir / "data/trec2003-robust"
    q = str(root / "qrels/robust03_qrels.txt.gz")
    for run in ["input.MU03rob01.gz", "input.NLPR03vb10.gz"]:  # tie-heavy, and short
        r = str(root / "runs" / run)
        curve = mean_interpolated_curve(q, r)
        means = {m["measure"]: m["value"] for m in
                 evaluate(q, r, ["iprec_at_recall"], missing_topics="skip").means.to_pylist()}
        for level, value in zip(curve["recall"].to_pylist(), curve["precision"].to_pylist(),
                                strict=True):
            assert value == pytest.approx(means[f"iprec_at_recall_{level:3.2f}"], abs=1e-12)
