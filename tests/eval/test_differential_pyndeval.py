"""Differential tests: our diversity measures against pyndeval (ndeval.c, run for real).

Random subtopic qrels and runs, one seed per case: score ties (pyndeval breaks them by
doc_id ascending), unjudged documents, documents relevant to no subtopic, topics with one
subtopic or none relevant at all (nNRBP is then 0/0), grades 0, 1 and 2, topics only in the
run or only in the qrels, and runs shorter than the cutoffs. Every per-topic value and every
mean equals pyndeval's to ndeval's printed precision (%.6f: within half a unit of the 6th
decimal), with ndeval's defaults and with other alpha, beta, relevance levels and cutoffs.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass

import pyarrow as pa
import pytest

from pooling.evaluation import evaluate, evaluate_diversity

pyndeval = pytest.importorskip("pyndeval") if not os.environ.get("CI") else __import__("pyndeval")

HALF_UNIT = 5e-7  # ndeval prints %.6f
# Doc ids whose byte order matters for ties ('B' < 'a', 'd10' < 'd9').
DOC_IDS = ["a", "B", "b", "d1", "d10", "d2", "d9", "D9", "e", "x_1", "x-1", "z", "Z0", "00"]
DOC_IDS += [f"doc{i}" for i in range(30)]
# pyndeval's names -> ours (ndeval's, with alpha / beta where they apply)
CUTOFF_MEASURES = ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec")
USES_ALPHA = {"ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "NRBP", "nNRBP"}


@dataclass
class Case:
    qrels: list[tuple[str, str, str, int]]
    run: list[tuple[str, str, float]]


def random_case(seed: int, named: bool = False) -> Case:
    """Qrels and a run sharing at least one topic, written in topic and subtopic order;
    `named`: topic and subtopic ids are words, not numbers."""
    rng = random.Random(seed)
    topics = [f"{'wt-' if named else ''}{t}" for t in rng.sample(range(1, 40), rng.randint(2, 6))]
    qrels_topics = [t for t in topics if rng.random() < 0.8] or topics[:1]
    run_topics = [t for t in topics if rng.random() < 0.8 or t == qrels_topics[0]]
    qrels = []
    for t in sorted(qrels_topics):
        kind = rng.random()
        subtopics = 1 if kind < 0.2 else rng.randint(2, 6)
        docs = rng.sample(DOC_IDS, rng.randint(1, 25))
        for s in range(1, subtopics + 1):
            for d in docs:
                if rng.random() < 0.5:
                    grade = 0 if kind > 0.9 else rng.choice([0, 0, 1, 1, 2])
                    qrels.append((t, f"intent-{'abcdef'[s - 1]}" if named else str(s), d, grade))
    run = []
    for t in run_topics:
        grid = rng.choice([1, 2, 5, 1000])  # few distinct scores: many ties
        for d in rng.sample(DOC_IDS, rng.randint(1, 30)):
            run.append((t, d, float(rng.randint(0, grid))))
    return Case(qrels, run)


def qrels_table(case: Case) -> pa.Table:
    q, s, d, r = zip(*case.qrels, strict=True) if case.qrels else ((), (), (), ())
    return pa.table({"query_id": pa.array(q, pa.string()), "subtopic": pa.array(s, pa.string()),
                     "doc_id": pa.array(d, pa.string()), "relevance": pa.array(r, pa.int64())})


def run_table(case: Case) -> pa.Table:
    q, d, s = zip(*case.run, strict=True)
    return pa.table({"query_id": list(q), "doc_id": list(d), "score": list(s), "tag": ["r"] * len(q)})


def our_names(cutoffs: tuple[int, ...], alpha: float, beta: float, rel: int) -> dict[str, str]:
    """pyndeval's measure name -> the column our evaluation prints for it."""
    out = {}
    for base in (*CUTOFF_MEASURES, "NRBP", "nNRBP", "MAP-IA"):
        args = []
        if base in USES_ALPHA and alpha != 0.5:
            args.append(f"alpha={alpha!r}")
        if base in ("NRBP", "nNRBP") and beta != 0.5:
            args.append(f"beta={beta!r}")
        if rel != 1:
            args.append(f"rel={rel}")
        name = base + (f"({','.join(args)})" if args else "")
        if base in CUTOFF_MEASURES:
            out.update({f"{base}@{k}": f"{name}@{k}" for k in cutoffs})
        else:
            out[base] = name
    return out


def same(ours: float, theirs: float) -> bool:
    if math.isnan(theirs):
        return math.isnan(ours)
    return abs(ours - theirs) <= HALF_UNIT


SETTINGS = [
    pytest.param((5, 10, 20), 0.5, 0.5, 1, id="ndeval-defaults"),
    pytest.param((1, 2, 3, 7, 20), 0.5, 0.5, 1, id="cutoffs-1-2-3-7"),
    pytest.param((5, 10, 20), 0.3, 0.8, 1, id="alpha-0.3-beta-0.8"),
    pytest.param((5, 20), 1.0, 0.0, 1, id="alpha-1-beta-0"),
    pytest.param((5, 10, 20), 0.5, 0.5, 2, id="rel-2"),
]


@pytest.mark.parametrize(("cutoffs", "alpha", "beta", "rel"), SETTINGS)
@pytest.mark.parametrize("seed", range(30))
def test_every_diversity_value_equals_pyndeval(seed, cutoffs, alpha, beta, rel):
    case = random_case(seed)
    names = our_names(cutoffs, alpha, beta, rel)
    evaluator = pyndeval.RelevanceEvaluator(case.qrels, list(names), relevance_level=rel,
                                            alpha=alpha, beta=beta)
    expected = evaluator.evaluate(case.run)
    table = evaluate_diversity(qrels_table(case), run_table(case), list(names.values()),
                               missing_topics="skip")
    got = {(r["query_id"], r["measure"]): r["value"] for r in table.to_pylist()}
    assert {q for q, _ in got} == set(expected)  # the topics the run and qrels share
    wrong = [(q, theirs, value, got[q, names[theirs]])
             for q, values in expected.items() for theirs, value in values.items()
             if not same(got[q, names[theirs]], value)]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("alpha", [0.5, 0.3])
@pytest.mark.parametrize("seed", range(10))
def test_topic_and_subtopic_ids_may_be_words(seed, alpha):
    case = random_case(seed, named=True)
    names = our_names((5, 10, 20), alpha, 0.5, 1)
    expected = pyndeval.ndeval(case.qrels, case.run, list(names), alpha=alpha)
    table = evaluate_diversity(qrels_table(case), run_table(case), list(names.values()),
                               missing_topics="skip")
    got = {(r["query_id"], r["measure"]): r["value"] for r in table.to_pylist()}
    assert {q for q, _ in got} == set(expected)
    assert all(same(got[q, names[m]], v) for q, values in expected.items()
               for m, v in values.items())


@pytest.mark.parametrize("seed", range(30))
def test_means_are_ndevals_amean_over_the_shared_topics(seed):
    case = random_case(seed)
    expected = pyndeval.ndeval(case.qrels, case.run)
    result = evaluate(qrels_table(case), run_table(case), ["ndeval"], missing_topics="skip")
    means = {r["measure"]: r["value"] for r in result.means.to_pylist()}
    for measure in pyndeval.DEFAULT_MEASURES:
        amean = sum(v[measure] for v in expected.values()) / len(expected)
        assert same(means[measure], amean), measure


def test_the_random_cases_hold_every_edge_the_measures_have():
    cases = [random_case(seed) for seed in range(30)]
    judged_none = single = ties = unjudged = run_only = qrels_only = short = 0
    for case in cases:
        qrels_topics = {q for q, *_ in case.qrels}
        run_topics = {q for q, *_ in case.run}
        run_only += bool(run_topics - qrels_topics)
        qrels_only += bool(qrels_topics - run_topics)
        for t in qrels_topics:
            subs = {s for q, s, _, r in case.qrels if q == t and r >= 1}
            judged_none += not subs
            single += len(subs) == 1
        scores = [(q, s) for q, _, s in case.run]
        ties += len(set(scores)) < len(scores)
        judged = {(q, d) for q, _, d, _ in case.qrels}
        unjudged += any((q, d) not in judged for q, d, _ in case.run)
        short += any(sum(q == t for q, *_ in case.run) < 20 for t in run_topics)
    assert min(judged_none, single, ties, unjudged, run_only, qrels_only, short) > 0
