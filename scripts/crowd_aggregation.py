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
- aggregation time for all the labels (median of --repeat runs; target < 5 s).

Reference (crowd-kit 1.4.2, the data's README): majority vote 0.477 / 0.652, Dawid-Skene
0.503 / 0.693 (3-grade / binary).
Usage: .venv/bin/python scripts/crowd_aggregation.py [--data DIR] [--folds 5] [--repeat 3]
       [--max-labels 7]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from pathlib import Path

import pyarrow as pa

from pooling.agreement.aggregation import MODELS, accuracy, aggregate, cross_validated_labels

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-labels", type=int, default=7)
    args = parser.parse_args()
    labels, gold, position = read_crowd(args.data)
    pairs = len(set(labels["task"].to_pylist()))
    print(f"{labels.num_rows:,} labels by {len(set(labels['worker'].to_pylist())):,} workers "
          f"on {pairs:,} pairs; {len(gold):,} gold pairs (grade 0-2)")
    aggregate(labels.slice(0, 100), "wawa")  # crowd-kit's import is not aggregation time

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


if __name__ == "__main__":
    main()
