"""Measures beyond trec_eval, checked on hand-computed values.

The rules: docs/trec_eval-semantics.md#measures-beyond-trec_eval.
"""

from __future__ import annotations

import math

import pytest

from pooling import evaluate
from pooling.evaluation.trec_input import parse_qrels, parse_run

# q1: a=4, b=0, c=2, d=1 (d never retrieved); run order a, b, c, then unjudged x
QRELS = parse_qrels(b"q1 0 a 4\nq1 0 b 0\nq1 0 c 2\nq1 0 d 1\nq2 0 z 0\n")
RUN = parse_run(b"q1 Q0 a 1 4 t\nq1 Q0 b 2 3 t\nq1 Q0 c 3 2 t\nq1 Q0 x 4 1 t\nq2 Q0 z 1 1 t\n")


def values(*measures: str) -> dict[str, list[float]]:
    run = evaluate(QRELS, RUN, list(measures)).runs[0]
    return {name: list(map(float, v)) for name, v in run.per_query.items()}


def test_err_uses_gdeval_stopping_probabilities_with_max_grade_4():
    # R(4) = 15/16, R(0) = 0, R(2) = 3/16: 15/16 + (1/3)(3/16)(1/16)
    err = values("ERR@3", "ERR@1")
    assert err["ERR@3"][0] == pytest.approx(15 / 16 + (1 / 3) * (3 / 16) * (1 / 16))
    assert err["ERR@1"][0] == pytest.approx(0.9375)
    assert err["ERR@3"][1] == 0.0  # no positive grade


def test_gdeval_ndcg_uses_exponential_gains_and_an_ideal_from_all_judgments():
    v = values("nDCG(dcg='exp-log2')@2")["nDCG(dcg='exp-log2')@2"]
    ideal = 15 + 3 / math.log2(3)  # grades 4, 2 (then 1) sorted, cut at 2
    assert v[0] == pytest.approx(15 / ideal)
    assert v[1] == 0.0


def test_judged_at_k_divides_by_min_k_n_and_breaks_ties_like_trec_eval():
    qrels = parse_qrels(b"q 0 a 0\n")
    tie = parse_run(b"q Q0 x 1 1 t\nq Q0 a 2 1 t\n")  # tie: descending puts x first
    run = evaluate(qrels, tie, ["Judged@1", "Judged@10", "unj.1"]).runs[0]
    assert run.per_query["Judged@1"][0] == 0.0  # trec_eval order: x, a
    assert run.per_query["unj_1"][0] == 1.0  # the same top 1
    assert run.per_query["Judged@10"][0] == 0.5  # 1 judged of min(10, 2)


def test_ir_measures_judged_breaks_ties_by_doc_id_ascending():
    qrels = parse_qrels(b"q 0 a 0\n")
    tie = parse_run(b"q Q0 x 1 1 t\nq Q0 a 2 1 t\n")  # tie: ascending puts a first
    run = evaluate(qrels, tie, ["Judged(ties=asc)@1", "Judged(ties=asc)@10"]).runs[0]
    assert run.per_query["Judged(ties=asc)@1"][0] == 1.0  # ir_measures order: a, x
    assert run.per_query["Judged(ties=asc)@10"][0] == 0.5


def test_cg_and_dcg_at_k_sum_positive_grades():
    v = values("CG@3", "DCG@3")
    assert v["CG@3"][0] == 6.0
    assert v["DCG@3"][0] == pytest.approx(4 + 2 / 2)


def test_rr_at_k_ignores_relevant_docs_below_k():
    qrels = parse_qrels(b"q 0 b 1\n")
    run = parse_run(b"q Q0 a 1 2 t\nq Q0 b 2 1 t\n")
    v = evaluate(qrels, run, ["RR@1", "RR@2", "recip_rank"]).runs[0].per_query
    assert (v["RR@1"][0], v["RR@2"][0], v["recip_rank"][0]) == (0.0, 0.5, 0.5)


def test_ap_with_min_r_k_denominator():
    # relevant at ranks 1 and 3 (a=4, c=2; d=1 unretrieved): R = 3
    v = values("AP(denom=minrk)@2", "AP@2", "AP(denom=minrk)@10")
    assert v["map_cut_2"][0] == pytest.approx(1 / 3)
    assert v["AP(denom=minrk)@2"][0] == pytest.approx(1 / 2)
    assert v["AP(denom=minrk)@10"][0] == pytest.approx((1 + 2 / 3) / 3)
