"""Chance-corrected agreement on categories: confusion matrix, Cohen's kappa, Fleiss' kappa.

Every statistic is nan when it is undefined (all judgments in one grade leave no room for
chance agreement to be beaten), so one degenerate pair of assessors never hides the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from pooling.agreement.errors import AgreementError
from pooling.agreement.judgments import align, grade_scale, sparse_answers, two_assessors

Weights = Literal["linear", "quadratic"] | None


@dataclass(frozen=True)
class ConfusionMatrix:
    """counts[i, j]: pairs graded labels[i] by the first assessor and labels[j] by the second."""

    assessors: tuple[str, str]
    labels: tuple[int, ...]
    counts: np.ndarray


def confusion_matrix(
    judgments: Any,
    assessors: Sequence[str] | None = None,
    *,
    labels: Sequence[int] | None = None,
) -> ConfusionMatrix:
    """Cross-tabulate two assessors' grades on the pairs both judged.

    Rows are the first of `assessors` (with two unnamed assessors: the first by name).

    labels: the grade scale, in order; it may include grades nobody used. Inferred when None.
    """
    alignment = align(judgments, assessors)
    a, b = two_assessors(alignment, assessors)
    x, y, _ = alignment.pair(a, b)
    scale = grade_scale(np.concatenate([x, y]), labels)
    return ConfusionMatrix((a, b), tuple(scale.tolist()), contingency(x, y, scale))


def contingency(x: np.ndarray, y: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Counts of (x, y) grade combinations over the ordered scale (int64, K × K)."""
    k = len(scale)
    counts = np.zeros((k, k), dtype=np.int64)
    np.add.at(counts, (np.searchsorted(scale, x), np.searchsorted(scale, y)), 1)
    return counts


def cohen_kappa(
    judgments: Any,
    assessors: Sequence[str] | None = None,
    *,
    weights: Weights = None,
    grades: Sequence[int] | None = None,
) -> float:
    """Cohen's kappa between two assessors on the pairs both judged.

    weights: None (unweighted), "linear" or "quadratic" disagreement weights over positions on
    the ordered grade scale (as scikit-learn does), not over the grade values. `grades` may list
    grades nobody used; one between used grades widens the distances, so it moves weighted kappa.
    """
    table = confusion_matrix(judgments, assessors, labels=grades)
    return kappa_from_confusion(table.counts, weights=weights)


def kappa_from_confusion(counts: np.ndarray, *, weights: Weights = None) -> float:
    """Cohen's kappa from a K × K confusion matrix: 1 − Σ w·observed / Σ w·expected."""
    counts = np.asarray(counts, dtype=np.float64)
    k = counts.shape[0]
    if counts.ndim != 2 or counts.shape[1] != k:
        raise AgreementError(f"a confusion matrix must be square, got shape {counts.shape}")
    n = counts.sum()
    if n == 0:
        return float("nan")
    expected = np.outer(counts.sum(axis=1), counts.sum(axis=0)) / n
    pos = np.arange(k)
    dist = np.abs(pos[:, None] - pos[None, :]).astype(np.float64)
    if weights is None:
        w = (dist > 0).astype(np.float64)
    elif weights == "linear":
        w = dist
    elif weights == "quadratic":
        w = dist**2
    else:
        raise AgreementError(f"unknown weights {weights!r}; use None, 'linear' or 'quadratic'")
    denominator = float(np.sum(w * expected))
    if denominator == 0:
        return float("nan")
    return 1.0 - float(np.sum(w * counts)) / denominator


def fleiss_kappa(
    judgments: Any,
    assessors: Sequence[str] | None = None,
    *,
    grades: Sequence[int] | None = None,
    unequal: Literal["error", "mean", "complete"] = "error",
) -> float:
    """Fleiss' kappa over the pairs judged by at least two of the assessors.

    Fleiss (1971) assumes every item has the same number of raters. When that is not so:
    unequal="error" refuses, "complete" keeps only pairs every assessor judged, and "mean"
    uses the per-item rule of `fleiss_kappa_from_counts` (identical to Fleiss when equal).
    """
    if unequal not in ("error", "mean", "complete"):
        raise AgreementError(f"unknown unequal={unequal!r}; use 'error', 'mean' or 'complete'")
    answers = sparse_answers(judgments, assessors)
    raters = answers.raters_per_pair
    keep = raters == len(answers.assessors) if unequal == "complete" else raters >= 2
    answers = answers.subset(keep[answers.pair])
    scale = grade_scale(answers.grade, grades)
    counts = answers.category_counts(scale)[keep]
    raters = raters[keep]
    if unequal == "error" and len(np.unique(raters)) > 1:
        sizes, n_pairs = np.unique(raters, return_counts=True)
        found = ", ".join(f"{n} pairs by {m}" for m, n in zip(sizes, n_pairs, strict=True))
        raise AgreementError(
            f"Fleiss' kappa needs the same number of assessors per pair, found {found}; pass "
            "unequal='complete' (pairs judged by all), unequal='mean' (varying raters), or use "
            "Krippendorff's alpha, which is built for missing judgments"
        )
    return fleiss_kappa_from_counts(counts)


def fleiss_kappa_from_counts(counts: np.ndarray) -> float:
    """Fleiss' kappa from an items × categories table of how many raters chose each category.

    Varying raters per item (n_i): P_i = Σ_j n_ij(n_ij − 1) / (n_i(n_i − 1)) over items with
    n_i ≥ 2, P̄ = their unweighted mean, p_j = Σ_i n_ij / Σ_i n_i, P_e = Σ_j p_j²;
    kappa = (P̄ − P_e) / (1 − P_e). With equal n_i this is exactly Fleiss (1971).
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2:
        raise AgreementError(f"counts must be items × categories, got shape {counts.shape}")
    raters = counts.sum(axis=1)
    counts = counts[raters >= 2]
    raters = raters[raters >= 2]
    if counts.shape[0] == 0:
        return float("nan")
    p_i = ((counts * (counts - 1)).sum(axis=1)) / (raters * (raters - 1))
    p_bar = float(p_i.mean())
    p_j = counts.sum(axis=0) / raters.sum()
    p_e = float(np.sum(p_j**2))
    if p_e == 1.0:
        return float("nan")
    return (p_bar - p_e) / (1.0 - p_e)
