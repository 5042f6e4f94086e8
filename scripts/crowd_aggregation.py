"""The aggregation rules on real crowd labels: the TREC 2010 Relevance Feedback track's.

Reads ../shared/data/trec2010-rf-crowd/trec-rf10-data.txt (98,453 labels by 766 workers on
20,232 pairs; NIST gold for 3,277 of them) and prints, for each aggregation model that
`pooling qrels derive` offers (pooling.agreement.aggregation.MODELS):

- accuracy on the gold pairs (gold grade 0-2): 3-grade, and binary (relevant = grade >= 1),
  all four label values (2, 1, 0, -2 broken link) aggregated as crowd-kit's reference does;
  and binary aggregation (each label read as relevant or not before aggregating);
- the same, the model seeded with gold, under 5-fold cross-validation over the gold pairs
  (each fold scored by a model seeded with the other four folds only);
- the cost curve: accuracy keeping only the first 1, 2, 3 ... labels of each pair (file order);
- aggregation time for all the labels (median of --repeat runs; target < 5 s);
- Kendall's tau between the rankings of simulated systems under the majority qrels and the
  Dawid-Skene qrels (and of each against NIST's gold qrels). No real runs exist for these
  pairs, so --systems runs are built over the judged pairs: run s ranks each topic's pairs by
  quality_s * g + noise, g NIST's grade where it exists and the topic's mean gold grade
  elsewhere, noise standard normal, quality_s spread evenly from 0.1 to 2 (seeded). Every
  ranked document is judged by the crowd; a pair aggregated to -2 (broken link) is graded 0.
  The runs are evaluated with pooling's own evaluation (MAP, nDCG) and the rankings compared
  with pooling.agreement.rankings.

Reference (crowd-kit 1.4.2, the data's README): majority vote 0.477 / 0.652, Dawid-Skene
0.503 / 0.693 (3-grade / binary).
Usage: .venv/bin/python scripts/crowd_aggregation.py [--data DIR] [--folds 5] [--repeat 3]
       [--max-labels 7] [--systems 30] [--seed 28]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from pooling.agreement.aggregation import MODELS, accuracy, aggregate, cross_validated_labels
from pooling.agreement.rankings import kendall_tau, tau_ap
from pooling.evaluation import evaluate

DATA = Path(__file__).resolve().parent.parent.parent / "shared/data/trec2010-rf-crowd"
RELEVANT = 1  # binary: grade >= 1


def read_crowd(folder: Path) -> tuple[pa.Table, dict[str, int], list[int]]:
    """(labels table worker/task/label in file order, gold 0-2 by task, each label's position
    among its pair's labels, from 1)."""
    workers, tasks, labels, position = [], [], [], []
    gold: dict[str, int] = {}
    seen: dict[str, int] = {}
    with open(folder / "trec-rf10-data.txt", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            task = f"{row['topicID']}\t{row['docID']}"
            workers.append(row["workerID"])
            tasks.append(task)
            labels.append(int(row["label"]))
            seen[task] = seen.get(task, 0) + 1
            position.append(seen[task])
            if int(row["gold"]) >= 0:
                gold[task] = int(row["gold"])
    table = pa.table({"worker": workers, "task": tasks, "label": pa.array(labels, pa.int64())})
    return table, gold, position


def scores(predicted: dict[str, int], gold: dict[str, int]) -> tuple[float, float]:
    """(3-grade accuracy, binary accuracy) on the gold tasks."""
    return accuracy(predicted, gold), accuracy(predicted, gold, binary_threshold=RELEVANT)


def binary_gold(gold: dict[str, int]) -> dict[str, int]:
    return {t: int(g >= RELEVANT) for t, g in gold.items()}


def qrels_of(labels: dict[str, int]) -> pa.Table:
    """A qrels table from task -> grade (a -2, broken link, is graded 0: judged, not relevant)."""
    tasks = list(labels)
    return pa.table({"query_id": [t.split("\t")[0] for t in tasks],
                     "doc_id": [t.split("\t")[1] for t in tasks],
                     "relevance": pa.array([max(labels[t], 0) for t in tasks], pa.int64())})


def simulated_runs(tasks: list[str], gold: dict[str, int], systems: int, seed: int) -> list[pa.Table]:
    """Runs over the judged pairs (see the module): run s scores each pair quality_s * g +
    noise, g the NIST grade or the topic's mean gold grade."""
    rng = np.random.default_rng(seed)
    topics = np.array([t.split("\t")[0] for t in tasks])
    docs = [t.split("\t")[1] for t in tasks]
    known = np.array([t in gold for t in tasks])
    grades = np.array([gold.get(t, 0) for t in tasks], dtype=np.float64)
    signal = grades.copy()
    for q in np.unique(topics):
        here = topics == q
        mean = grades[here & known].mean() if (here & known).any() else 0.0
        signal[here & ~known] = mean
    runs = []
    for s, quality in enumerate(np.linspace(0.1, 2.0, systems)):
        score = quality * signal + rng.standard_normal(len(tasks))
        runs.append(pa.table({"query_id": pa.array(topics.tolist(), pa.string()),
                              "doc_id": pa.array(docs, pa.string()),
                              "rank": pa.array(np.zeros(len(tasks), dtype=np.int64)),
                              "score": pa.array(score),
                              "tag": pa.array([f"sim{s:02d}"] * len(tasks), pa.string())}))
    return runs


def system_scores(qrels: pa.Table, runs: list[pa.Table], measure: str) -> dict[str, float]:
    """run_id -> the measure's mean over the qrels' topics (pooling's evaluation)."""
    means = evaluate(qrels, runs, [measure], missing_topics="zero").means
    return {r: v for r, m, v in zip(*(means[c].to_pylist() for c in
                                      ("run_id", "measure", "value")), strict=True)
            if m == measure}


def rank_correlations(labels: pa.Table, gold: dict[str, int], systems: int, seed: int) -> None:
    """Kendall's tau (and tau_ap) between the systems' rankings under majority, Dawid-Skene
    and NIST gold qrels."""
    tasks = sorted(set(labels["task"].to_pylist()))
    runs = simulated_runs(tasks, gold, systems, seed)
    qrels = {"majority": qrels_of(aggregate(labels, "majority").labels()),
             "dawid-skene": qrels_of(aggregate(labels, "dawid-skene").labels()),
             "NIST gold": qrels_of(gold)}
    print(f"\nKendall's tau between rankings of {systems} simulated systems (seed {seed}) "
          "over the judged pairs")
    print(f"{'measure':<8} {'majority/DS':>12} {'majority/gold':>14} {'DS/gold':>9} "
          f"{'tau_ap maj/DS':>14}")
    for measure in ("map", "ndcg"):
        scores = {name: system_scores(q, runs, measure) for name, q in qrels.items()}
        maj, ds, nist = scores["majority"], scores["dawid-skene"], scores["NIST gold"]
        print(f"{measure:<8} {kendall_tau(maj, ds):>12.3f} {kendall_tau(maj, nist):>14.3f} "
              f"{kendall_tau(ds, nist):>9.3f} {tau_ap(maj, ds, symmetric=True):>14.3f}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-labels", type=int, default=7)
    parser.add_argument("--systems", type=int, default=30)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--tau-only", action="store_true",
                        help="Only the rank correlations of simulated systems.")
    args = parser.parse_args()
    labels, gold, position = read_crowd(args.data)
    pairs = len(set(labels["task"].to_pylist()))
    print(f"{labels.num_rows:,} labels by {len(set(labels['worker'].to_pylist())):,} workers "
          f"on {pairs:,} pairs; {len(gold):,} gold pairs (grade 0-2)")
    aggregate(labels.slice(0, 100), "wawa")  # crowd-kit's import is not aggregation time
    if args.tau_only:
        rank_correlations(labels, gold, args.systems, args.seed)
        return

    print("\naccuracy on the gold pairs (3-grade / binary: grade >= 1)")
    print(f"{'model':<12} {'graded':>15} {'binary-aggr.':>13} {'seeded, CV':>15} "
          f"{'binary seeded':>14} {'time (s)':>9}")
    for model in MODELS:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = aggregate(labels, model)
            times.append(time.perf_counter() - start)
        grade3, binary = scores(result.labels(), gold)
        bin_only = accuracy(aggregate(labels, model, binary_threshold=RELEVANT).labels(),
                            binary_gold(gold))
        cv3, cvb = scores(cross_validated_labels(labels, model, gold, folds=args.folds), gold)
        cv_bin = accuracy(cross_validated_labels(labels, model, gold, folds=args.folds,
                                                 binary_threshold=RELEVANT), binary_gold(gold))
        print(f"{model:<12} {grade3:>7.3f} / {binary:.3f} {bin_only:>13.3f} "
              f"{cv3:>7.3f} / {cvb:.3f} {cv_bin:>14.3f} {statistics.median(times):>9.2f}",
              flush=True)

    print("\ncost curve: accuracy on the gold pairs keeping the first k labels of each pair "
          "(3-grade / binary)")
    ks = list(range(1, args.max_labels + 1))
    print(f"{'model':<12} " + " ".join(f"{'k=' + str(k):>13}" for k in ks) + f"{'all':>14}")
    keep_masks = {k: pa.array([p <= k for p in position]) for k in ks}
    keep_masks[max(position)] = pa.array([True] * len(position))
    for model in MODELS:
        cells = []
        for k in keep_masks:
            predicted = aggregate(labels.filter(keep_masks[k]), model).labels()
            grade3, binary = scores(predicted, gold)
            cells.append(f"{grade3:.3f}/{binary:.3f}")
        print(f"{model:<12} " + " ".join(f"{c:>13}" for c in cells), flush=True)
    kept = {k: sum(p <= k for p in position) for k in ks}
    print("\nlabels kept: " + ", ".join(f"k={k} {n:,}" for k, n in kept.items())
          + f"; all {labels.num_rows:,} ({labels.num_rows / pairs:.2f} per pair, "
          f"at most {max(position)})")
    rank_correlations(labels, gold, args.systems, args.seed)


if __name__ == "__main__":
    main()
