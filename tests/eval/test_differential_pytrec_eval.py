"""Differential tests: our evaluator against pytrec_eval (trec_eval 9.0.x) on random data.

Compared only where 9 and 10 agree (docs/trec_eval-semantics.md#trec_eval-9-and-pytrec_eval):
shared topics (`skip`), -l >= 1, float32-representable scores, and not iprec_at_recall,
11pt_avg, unj, rbp, relstring or custom gains. Generated data has heavy score ties, negative
and unjudged grades, topics without relevant docs, and runs shorter than the cutoffs. (A topic
whose judgments are all negative crashes pytrec_eval, so those are left to the golden
edge/levels case.)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pooling.evaluation import evaluate
from pooling.evaluation.trec_format import format_value
from pooling.measures import Kind

pytrec_eval = pytest.importorskip("pytrec_eval")

# >= 300 examples per property; derandomised under CI (profiles in conftest.py).
EVAL_PROFILE = settings.get_profile("eval-ci" if os.environ.get("CI") else "eval")

# Measures whose value is the same in trec_eval 9 and 10 (pytrec_eval's spelling).
SHARED = (
    "map gm_map Rprec bpref recip_rank P recall infAP gm_bpref Rprec_mult utility ndcg "
    "ndcg_cut map_cut relative_P success set_P set_recall set_relative_P set_map set_F "
    "num_ret num_rel num_rel_ret num_nonrel_judged_ret binG G ndcg_rel Rndcg"
).split()
COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
GEO = {"gm_map", "gm_bpref"}

# Doc ids chosen so that tie-breaking by byte order matters ('B' < 'a', 'd10' < 'd9').
DOC_IDS = ["a", "B", "b", "d1", "d10", "d2", "d9", "D9", "e", "x_1", "x-1", "z", "Z0", "00", "0"]
DOC_IDS += [f"doc{i}" for i in range(25)]


@dataclass
class Case:
    qrels: dict[str, dict[str, int]]
    run: dict[str, dict[str, float]]
    level: int


@st.composite
def cases(draw) -> Case:
    """Random qrels and run sharing some topics; scores on a coarse grid for many ties."""
    n_topics = draw(st.integers(1, 5))
    topics = [f"q{i}" for i in draw(st.lists(st.integers(0, 30), min_size=n_topics,
                                             max_size=n_topics, unique=True))]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qid in topics:
        judged = draw(st.lists(st.sampled_from(DOC_IDS), max_size=25, unique=True))
        grades = draw(st.lists(st.integers(-2, 4), min_size=len(judged), max_size=len(judged)))
        if judged and max(grades) >= 0:  # pytrec_eval crashes on all-negative topics
            qrels[qid] = dict(zip(judged, grades, strict=True))
        if draw(st.integers(0, 9)) == 0 and qid in qrels and len(run) > 0:
            continue  # a qrels topic the run lacks (skipped under the shared-topics policy)
        retrieved = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=30, unique=True))
        step = draw(st.sampled_from([0.5, 0.25, 1.0, 0.125]))
        ks = draw(st.lists(st.integers(-6, 6), min_size=len(retrieved), max_size=len(retrieved)))
        run[qid] = {d: k * step for d, k in zip(retrieved, ks, strict=True)}
    if draw(st.booleans()):
        run["run_only"] = {"a": 1.0, "b": 1.0}
    if not set(run) & set(qrels):  # keep at least one shared topic
        qid = next(iter(qrels), "q_only")
        qrels.setdefault(qid, {"a": 1})
        run[qid] = {"a": 0.5, "B": 0.5}
    level = draw(st.sampled_from([1, 1, 2, 3]))
    return Case(qrels, run, level)


def _tables(case: Case) -> tuple[pa.Table, pa.Table]:
    q = [(qid, doc, g) for qid, docs in case.qrels.items() for doc, g in docs.items()]
    r = [(qid, doc, s) for qid, docs in case.run.items() for doc, s in docs.items()]
    qrels = pa.table({"query_id": [x[0] for x in q], "doc_id": [x[1] for x in q],
                      "relevance": pa.array([x[2] for x in q], pa.int64())})
    run = pa.table({"query_id": [x[0] for x in r], "doc_id": [x[1] for x in r],
                    "score": pa.array([x[2] for x in r], pa.float64()), "tag": ["t"] * len(r)})
    return qrels, run


def _theirs(case: Case) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(case.qrels, set(SHARED), relevance_level=case.level)
    return evaluator.evaluate(case.run)


def _fmt(value: float, name: str) -> str:
    kind = Kind.COUNT if name in COUNTS else Kind.FLOAT
    return format_value(int(value) if kind is Kind.COUNT else value, kind)


def assert_agree(ours, theirs: dict[str, dict[str, float]]) -> None:
    """Our run's per-topic values print as pytrec_eval's (gm_* compared as logs, as it keeps
    them)."""
    assert sorted(theirs) == ours.query_ids
    for t, qid in enumerate(ours.query_ids):
        for name, value in theirs[qid].items():
            mine = ours.per_query[name][t]
            if name in GEO:
                mine = math.log(max(mine, 1e-5))
            assert _fmt(mine, name) == _fmt(value, name), (qid, name)


@EVAL_PROFILE
@given(cases())
def test_per_topic_values_agree_with_pytrec_eval(case: Case):
    qrels, run = _tables(case)
    ours = evaluate(qrels, run, SHARED, missing_topics="skip", relevance_level=case.level).runs[0]
    theirs = _theirs(case)
    assert_agree(ours, theirs)


@EVAL_PROFILE
@given(cases())
def test_means_agree_with_pytrec_eval(case: Case):
    qrels, run = _tables(case)
    ours = evaluate(qrels, run, SHARED, missing_topics="skip", relevance_level=case.level).runs[0]
    theirs = _theirs(case)
    names = next(iter(theirs.values())).keys()
    for name in names:
        column = [theirs[q][name] for q in sorted(theirs)]
        if name in COUNTS:
            expected: float = sum(column)
        elif name in GEO:
            expected = math.exp(float(np.cumsum(column)[-1]) / len(column))
        else:
            expected = float(np.cumsum(column)[-1]) / len(column)
        assert _fmt(ours.summary[name], name) == _fmt(expected, name), name


@EVAL_PROFILE
@given(cases())
def test_zero_policy_keeps_shared_topic_values_and_averages_over_all_qrels_topics(case: Case):
    qrels, run = _tables(case)
    skip = evaluate(qrels, run, ["map", "P.5"], missing_topics="skip", relevance_level=case.level)
    zero = evaluate(qrels, run, ["map", "P.5"], missing_topics="zero", relevance_level=case.level)
    s, z = skip.runs[0], zero.runs[0]
    assert z.query_ids == sorted(case.qrels)
    for t, qid in enumerate(z.query_ids):
        if qid in s.query_ids:
            assert z.per_query["map"][t] == s.per_query["map"][s.query_ids.index(qid)]
        else:
            assert z.per_query["map"][t] == 0.0 and z.per_query["P_5"][t] == 0.0
    assert z.summary["map"] == pytest.approx(sum(s.per_query["map"]) / len(z.query_ids))


def test_generated_runs_have_at_least_a_quarter_tied_scores():
    fractions: list[float] = []

    @settings(EVAL_PROFILE, max_examples=200, database=None)
    @given(cases())
    def collect(case: Case) -> None:
        scores = [s for docs in case.run.values() for s in docs.values()]
        tied = sum(
            sum(1 for s in docs.values() if list(docs.values()).count(s) > 1)
            for docs in case.run.values()
        )
        fractions.append(tied / len(scores))

    collect()
    assert np.mean(fractions) >= 0.25


@EVAL_PROFILE
@given(cases())
def test_judged_only_values_agree_with_pytrec_eval(case: Case):
    """-J: each topic ranks only its judged docs, ranks closed up (pytrec_eval's
    judged_docs_only_flag is trec_eval's -J)."""
    qrels, run = _tables(case)
    ours = evaluate(qrels, run, SHARED, missing_topics="skip", relevance_level=case.level,
                    judged_only=True).runs[0]
    evaluator = pytrec_eval.RelevanceEvaluator(case.qrels, set(SHARED), relevance_level=case.level,
                                               judged_docs_only_flag=True)
    theirs = evaluator.evaluate(case.run)
    assert_agree(ours, theirs)
