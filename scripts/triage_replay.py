#!/usr/bin/env python
"""Triage replayed on real label sets: the share of each judge's errors people catch after
reviewing 10%, 20%, ... of the pairs in triage order (`pooling simulate-triage`,
`pooling.strategies.replays.triage`), beside random order (its exact expectation) and the best order.

No LLM-judge label set ships with the shared data, so these are the real label sets at hand:
1. TREC 2010 Relevance Feedback crowd labels against NIST's gold grade, on the pairs NIST
   graded 0-2 (broken-link labels dropped): (a) two judges, the first and the second
   Mechanical Turk worker to label each pair (0-2), most disagreement first; (b) one judge,
   the crowd's majority (relevant when half its votes or more say >= 1) with P(relevant) = the
   share of such votes, least sure first.
2. Cranfield: the pool of the ten runs of scripts/make_cranfield_runs.py at depth 20, against
   cranqrel (5 - g for grades 1-4, unjudged pairs 0: the judgments are near exhaustive), on
   the topics with at least 5 relevant pooled abstracts. Judges: the learned judge
   (pooling.judges.backends.learned's model, 5-fold stratified cross-validation within each
   topic, grade 1 when P(relevant) >= 0.5) and the word judge of tests/judging/word_judge.py
   (grade 1 when a word of the query is in the abstract; P 0.9 or 0.2), run as a command
   judge runs it; most disagreement first.
Errors are binary (relevant or not at grade >= 1). Prints one table per label set.

    .venv/bin/python scripts/triage_replay.py [--shared ../shared] [--workdir out/triage]
        [--shares 10,20,30,50] [--by pairs|topic]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from pooling.strategies.replays.triage import triage_replay  # noqa: E402

WORD_JUDGE = ROOT / "tests" / "judging" / "word_judge.py"
POOL_DEPTH = 20
FOLDS = 5


def table(query_ids, doc_ids, grades, probability=None) -> pa.Table:
    columns = {"query_id": pa.array(query_ids, pa.string()), "doc_id": pa.array(doc_ids, pa.string()),
               "grade": pa.array(grades, pa.int64())}
    if probability is not None:
        columns["probability"] = pa.array(probability, pa.float64())
    return pa.table(columns)


def crowd(shared: Path) -> tuple[dict[str, pa.Table], dict[str, pa.Table], pa.Table]:
    """Two workers per pair, the crowd's majority, and NIST's gold grades."""
    import pandas as pd

    labels = pd.read_csv(shared / "data" / "trec2010-rf-crowd" / "trec-rf10-data.txt", sep="\t",
                         dtype={"topicID": str, "docID": str})
    labels = labels[labels["gold"].between(0, 2) & labels["label"].between(0, 2)]
    labels = labels.assign(nth=labels.groupby(["topicID", "docID"]).cumcount())
    workers = {}
    for nth, name in ((0, "first worker"), (1, "second worker")):
        part = labels[labels["nth"] == nth]
        workers[name] = table(part["topicID"], part["docID"], part["label"])
    votes = labels.assign(relevant=labels["label"] >= 1).groupby(
        ["topicID", "docID"], as_index=False)["relevant"].mean()
    majority = {"majority": table(votes["topicID"], votes["docID"],
                                  (votes["relevant"] >= 0.5).astype(int), votes["relevant"])}
    gold = labels.drop_duplicates(["topicID", "docID"])
    return workers, majority, table(gold["topicID"], gold["docID"], gold["gold"])


def cranfield(shared: Path, workdir: Path) -> tuple[dict[str, pa.Table], pa.Table]:
    """The learned and the word judge on the depth-20 pool, and the qrels (0 where unjudged)."""
    from sklearn.model_selection import StratifiedKFold

    from pooling.strategies.replays import depth_pool, load_inputs, read_texts
    from pooling.strategies.text_classifier import SEED, document_text, model

    runs_dir = workdir / "cranfield-runs"
    if not (runs_dir / "DONE").exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_cranfield_runs.py"),
                        str(runs_dir), "--cranfield", str(shared / "data" / "cranfield")],
                       check=True, stdout=subprocess.DEVNULL)
    qrels, runs = load_inputs(str(runs_dir / "cranfield.qrels"),
                              [str(p) for p in sorted((runs_dir / "runs").glob("*.run"))])
    texts = read_texts(str(shared / "data" / "cranfield" / "cran.all.1400"))
    titles = dict(line.rstrip("\n").split("\t", 1)
                  for line in (runs_dir / "topics.tsv").read_text().splitlines())
    grades = {(q, d): g for q, d, g in zip(qrels["query_id"].to_pylist(),
                                           qrels["doc_id"].to_pylist(),
                                           qrels["relevance"].to_pylist(), strict=True)}
    pool = depth_pool(runs, POOL_DEPTH)
    by_topic: dict[str, list[str]] = {}
    for q, d in zip(pool["query_id"].to_pylist(), pool["doc_id"].to_pylist(), strict=True):
        by_topic.setdefault(q, []).append(d)
    pairs, learned = [], []
    for q, docs in sorted(by_topic.items()):
        truth = np.array([grades.get((q, d), 0) >= 1 for d in docs])
        if truth.sum() < FOLDS or (~truth).sum() < FOLDS:
            continue
        documents = np.array([document_text(None, texts.get(d, "")) for d in docs], dtype=object)
        probability = np.empty(len(docs))
        for train, test in StratifiedKFold(FOLDS, shuffle=True, random_state=SEED).split(
                documents, truth):
            fitted = model().fit(list(documents[train]), truth[train])
            probability[test] = fitted.predict_proba(list(documents[test]))[:, 1]
        pairs += [(q, d) for d in docs]
        learned += probability.tolist()
    requests = "".join(json.dumps({"query_id": q, "doc_id": d, "title": titles[q],
                                   "doc_text": texts.get(d, "")}) + "\n" for q, d in pairs)
    replies = subprocess.run([sys.executable, str(WORD_JUDGE)], input=requests, text=True,
                             capture_output=True, check=True).stdout.splitlines()
    words = [json.loads(r) for r in replies]
    q_ids, d_ids = [q for q, _ in pairs], [d for _, d in pairs]
    judges = {
        "learned": table(q_ids, d_ids, [int(p >= 0.5) for p in learned], learned),
        "words": table(q_ids, d_ids, [w["grade"] for w in words], [w["probability"] for w in words]),
    }
    return judges, table(q_ids, d_ids, [grades.get(p, 0) for p in pairs])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--workdir", type=Path, default=ROOT / "out" / "triage")
    ap.add_argument("--shares", default="10,20,30,50")
    ap.add_argument("--by", default="pairs", choices=("pairs", "topic"))
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    shares = [float(s) / 100 for s in args.shares.split(",")]
    workers, majority, gold = crowd(args.shared)
    sets = [("TREC 2010 RF crowd, two workers per pair (0-2) against NIST's gold", workers, gold, 2),
            ("TREC 2010 RF crowd, the majority with its vote share against NIST's gold",
             majority, gold, 1)]
    judges, qrels = cranfield(args.shared, args.workdir)
    sets.append(("Cranfield depth-20 pool, the learned judge and the word judge against "
                 "cranqrel", judges, qrels, 1))
    for title, labels, truth, top in sets:
        result = triage_replay(labels, truth, max_grade=top, shares=shares, by=args.by)
        print(f"## {title}\n\n{result.render()}")


if __name__ == "__main__":
    main()
