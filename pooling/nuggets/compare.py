"""Two assignment versions set side by side: people against a model, or two models.

On the (answer, nugget) pairs both versions grade (the same nugget version), agreement is
the share of pairs graded the same and Cohen's kappa (unweighted, and linearly weighted on
the support ladder), overall, per importance (vital, okay), per topic and per run. The two
run rankings a nugget measure gives are compared by Kendall's tau-b and by tau_ap (the
first version the reference), on the runs both score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pooling.agreement.kappa import kappa_from_confusion
from pooling.agreement.rankings import kendall_tau, tau_ap
from pooling.errors import StoreError
from pooling.nuggets.assignments import get_assignment_version, score_assignments
from pooling.store.core import Store

GRADES = (0, 1, 2)


@dataclass(frozen=True)
class Agreement:
    """Agreement on one set of (answer, nugget) pairs."""

    pairs: int
    same: float  # share of pairs graded the same
    kappa: float
    weighted_kappa: float  # linear weights over the support ladder


@dataclass(frozen=True)
class AssignmentComparison:
    """What `compare_assignments` finds (module doc)."""

    first: str
    second: str
    measure: str
    overall: Agreement
    by_importance: dict[str, Agreement]
    by_topic: dict[str, Agreement]
    by_run: dict[str, Agreement]
    scores: dict[str, tuple[float, float]]  # run -> (first's, second's) mean on `measure`
    tau: float
    tau_ap: float


def _agreement_of(counts: np.ndarray) -> Agreement:
    """Agreement from a confusion matrix of counts (first's grade by row)."""
    n = int(counts.sum())
    return Agreement(n, float(np.trace(counts)) / n, kappa_from_confusion(counts),
                     kappa_from_confusion(counts, weights="linear"))


def _grouped(keys: np.ndarray, x: np.ndarray, y: np.ndarray) -> dict[str, Agreement]:
    """Agreement per key, from one bincount over (key, first's grade, second's grade)."""
    names, group = np.unique(keys.astype(str), return_inverse=True)
    k = len(GRADES)
    counts = np.bincount(group * k * k + x * k + y, minlength=len(names) * k * k)
    counts = counts.reshape(len(names), k, k)
    return {str(name): _agreement_of(counts[i]) for i, name in enumerate(names)}


def compare_assignments(store: Store, first: str, second: str, *,
                        measure: str = "all") -> AssignmentComparison:
    """Compare assignment versions `first` and `second` (module doc)."""
    a, b = get_assignment_version(store, first), get_assignment_version(store, second)
    if a.nugget_version != b.nugget_version:
        raise StoreError(f"assignment versions {first!r} and {second!r} grade different nugget "
                         f"versions ({a.nugget_version!r}, {b.nugget_version!r}); their grades "
                         "of a nugget id are of different nuggets, so compare versions of one")
    rows = store.sql("paired assignments", """
        SELECT x.query_id, x.run_id, n.importance, x.grade, y.grade
        FROM nugget_assignments x
        JOIN nugget_assignments y ON y.version = ? AND y.query_id = x.query_id
             AND y.run_id = x.run_id AND y.nugget_id = x.nugget_id
        JOIN nuggets n ON n.version = ? AND n.query_id = x.query_id AND n.nugget_id = x.nugget_id
        WHERE x.version = ?""", [second, a.nugget_version, first]).fetchall()
    if not rows:
        raise StoreError(f"assignment versions {first!r} and {second!r} grade no (answer, "
                         "nugget) pair in common")
    topics = np.array([r[0] for r in rows], dtype=object)
    runs = np.array([r[1] for r in rows], dtype=object)
    importance = np.array([r[2] for r in rows], dtype=object)
    x = np.clip(np.array([r[3] for r in rows], dtype=np.int64), 0, 2)
    y = np.clip(np.array([r[4] for r in rows], dtype=np.int64), 0, 2)

    shared_runs = sorted(set(runs))
    mine = {r.run_id: r.summary[measure] for r in
            score_assignments(store, first, runs=shared_runs, measures=[measure]).runs}
    theirs = {r.run_id: r.summary[measure] for r in
              score_assignments(store, second, runs=shared_runs, measures=[measure]).runs}
    both = sorted(set(mine) & set(theirs))
    first_scores = {r: mine[r] for r in both}
    second_scores = {r: theirs[r] for r in both}
    return AssignmentComparison(
        first, second, measure, _grouped(np.zeros(len(x), dtype=np.int64), x, y)["0"],
        _grouped(importance, x, y), _grouped(topics, x, y), _grouped(runs, x, y),
        {r: (mine[r], theirs[r]) for r in both},
        kendall_tau(first_scores, second_scores) if len(both) > 1 else float("nan"),
        tau_ap(first_scores, second_scores) if len(both) > 1 else float("nan"))
