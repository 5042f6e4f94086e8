"""Topic folds and cross-validated selection: pick the best of a family on training topics.

Tuning a parameter by looking at the test topics overstates the result. Here the family's
best member is chosen on the training folds only and scored on the held-out fold; the
cross-validated score is the chosen runs' mean over all held-out topics, next to the
(optimistic) score of the run that is best on all topics.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from pooling.leaderboard.errors import LeaderboardError
from pooling.measures.primary import single_column
from pooling.store.core import Store
from pooling.store.topic_selection import resolve_topic_selection, topic_key, topic_subsets


def topic_folds(query_ids: list[str], k: int, seed: int = 0) -> list[list[str]]:
    """k folds of nearly equal size from a seeded shuffle; each fold sorted."""
    if not 2 <= k <= len(query_ids):
        raise LeaderboardError(f"k must lie between 2 and the number of topics ({len(query_ids)}), got {k}")
    shuffled = np.random.default_rng(seed).permutation(sorted(query_ids)).tolist()
    return [sorted(shuffled[f::k], key=topic_key) for f in range(k)]


@dataclass
class CrossValidation:
    """folds: fold, n_train, n_test, chosen (best on training topics), train_score,
    test_score, best_on_test, best_test_score. cv_score: chosen runs' mean over all held-out
    topics; oracle: the run best on all topics, with its score there."""

    measure: str
    family: list[str]
    folds: pa.Table
    cv_score: float
    oracle_run: str
    oracle_score: float

    def summary(self) -> dict[str, Any]:
        return {"measure": self.measure, "runs": len(self.family), "folds": self.folds.num_rows,
                "cv_score": self.cv_score, "oracle_run": self.oracle_run,
                "oracle_score": self.oracle_score}


def family_runs(store: Store, family: str | list[str] | None) -> list[str]:
    """Run ids from a list, a comma string of names or shell patterns (`fub03*`), or all."""
    all_runs = store.run_ids()
    if family is None:
        return all_runs
    patterns = [family] if isinstance(family, str) else list(family)
    patterns = [p.strip() for item in patterns for p in item.split(",") if p.strip()]
    chosen = [r for r in all_runs if any(fnmatch.fnmatchcase(r, p) for p in patterns)]
    if len(chosen) < 2:
        raise LeaderboardError(
            f"the family {', '.join(patterns)} matches {len(chosen)} run(s); it needs at least two"
        )
    return chosen


def cross_validate(
    store: Store,
    *,
    family: str | list[str] | None = None,
    measure: str = "map",
    k: int = 5,
    seed: int = 0,
    folds: list[str] | None = None,
    qrels: str | None = None,
    topics: str | list[str] | None = None,
    missing_topics: str = "zero",
    relevance_level: int = 1,
) -> CrossValidation:
    """k-fold topic cross-validation of choosing the family's best run by `measure`.

    folds: names of stored topic subsets to use as the folds instead of a seeded split.
    """
    from pooling.store.evaluate import evaluate_store

    column = single_column(measure)
    run_ids = family_runs(store, family)
    topic_list = resolve_topic_selection(store, topics)
    result = evaluate_store(store, qrels=qrels, runs=run_ids, measures=[measure],
                            missing_topics=missing_topics, relevance_level=relevance_level,
                            topics=topic_list)
    values: dict[str, dict[str, float]] = {}
    for row in result.per_query.to_pylist():
        values.setdefault(row["query_id"], {})[row["run_id"]] = row["value"]
    shared = sorted((q for q, v in values.items() if len(v) == len(run_ids)), key=topic_key)
    if folds:
        subsets = topic_subsets(store)
        missing = [f for f in folds if f not in subsets]
        if missing:
            raise LeaderboardError(
                f"no topic subset(s) {', '.join(missing)}; store folds with `pooling topics subset`"
            )
        split = [[q for q in subsets[f] if q in values] for f in folds]
    else:
        split = topic_folds(shared, k, seed)
    matrix = np.array([[values[q][r] for r in run_ids] for q in shared])
    index = {q: t for t, q in enumerate(shared)}
    rows: dict[str, list[Any]] = {c: [] for c in ("fold", "n_train", "n_test", "chosen",
                                                  "train_score", "test_score", "best_on_test",
                                                  "best_test_score")}
    held_out: list[float] = []
    for f, test_topics in enumerate(split, start=1):
        test = np.array([index[q] for q in test_topics if q in index], dtype=np.int64)
        train = np.setdiff1d(np.arange(len(shared)), test)
        if len(test) == 0 or len(train) == 0:
            raise LeaderboardError(f"fold {f} leaves no training or no test topics")
        train_means = matrix[train].mean(axis=0)
        test_means = matrix[test].mean(axis=0)
        pick = _best(train_means, run_ids)
        best = _best(test_means, run_ids)
        held_out += matrix[test, pick].tolist()
        rows["fold"].append(f)
        rows["n_train"].append(len(train))
        rows["n_test"].append(len(test))
        rows["chosen"].append(run_ids[pick])
        rows["train_score"].append(float(train_means[pick]))
        rows["test_score"].append(float(test_means[pick]))
        rows["best_on_test"].append(run_ids[best])
        rows["best_test_score"].append(float(test_means[best]))
    overall = matrix.mean(axis=0)
    oracle = _best(overall, run_ids)
    return CrossValidation(column, run_ids, pa.table(rows), float(np.mean(held_out)),
                           run_ids[oracle], float(overall[oracle]))


def _best(means: np.ndarray, run_ids: list[str]) -> int:
    """Highest mean; ties go to the smallest run_id, so the choice is reproducible."""
    top = np.flatnonzero(means == means.max())
    return int(min(top, key=lambda t: run_ids[t]))
