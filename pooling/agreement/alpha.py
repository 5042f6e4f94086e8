"""Krippendorff's alpha: agreement among any number of assessors, each judging any subset.

Built on the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's Alpha-
Reliability"): pairs judged by one assessor only are not pairable and drop out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from pooling.agreement.errors import AgreementError
from pooling.agreement.judgments import grade_scale, sparse_answers

Level = Literal["nominal", "ordinal", "interval"]


def krippendorff_alpha(
    judgments: Any,
    assessors: Sequence[str] | None = None,
    *,
    level: Level = "nominal",
    grades: Sequence[int] | None = None,
) -> float:
    """Krippendorff's alpha over all pairs judged by at least two of the assessors.

    level: "nominal" (any disagreement counts the same), "ordinal" (distance by how many
    judgments fall between two grades) or "interval" (squared grade difference). Grades on
    the scale that nobody used change nothing. nan when every judgment has the same grade.
    """
    answers = sparse_answers(judgments, assessors)
    answers = answers.subset(answers.raters_per_pair[answers.pair] >= 2)
    scale = grade_scale(answers.grade, grades)
    return alpha_from_counts(answers.category_counts(scale), scale, level=level)


def alpha_from_counts(counts: np.ndarray, scale: np.ndarray, *, level: Level = "nominal") -> float:
    """Alpha from a units × values table of how many assessors gave each value (ordered `scale`).

    alpha = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck, o the coincidence matrix, n_c its margins.
    """
    counts = np.asarray(counts, dtype=np.float64)
    m = counts.sum(axis=1)
    counts = counts[m >= 2]
    m = m[m >= 2]
    if counts.shape[0] == 0:
        return float("nan")
    # Coincidences: ordered pairs of values by different assessors in a unit, 1/(m_u − 1) each.
    pairs = counts[:, :, None] * counts[:, None, :]
    idx = np.arange(counts.shape[1])
    pairs[:, idx, idx] -= counts
    o = (pairs / (m - 1)[:, None, None]).sum(axis=0)
    n_c = o.sum(axis=0)
    n = n_c.sum()
    delta = _distances(np.asarray(scale, dtype=np.float64), n_c, level)
    expected = np.outer(n_c, n_c) - np.diag(n_c)
    disagreement_expected = float(np.sum(expected * delta))
    if disagreement_expected == 0:
        return float("nan")
    return 1.0 - (float(n) - 1) * float(np.sum(o * delta)) / disagreement_expected


def _distances(scale: np.ndarray, n_c: np.ndarray, level: Level) -> np.ndarray:
    if level == "nominal":
        return 1.0 - np.eye(len(scale))
    if level == "interval":
        return (scale[:, None] - scale[None, :]) ** 2
    if level == "ordinal":
        # δ_ck = Σ_{g=c..k} n_g − (n_c + n_k)/2, squared (Krippendorff's ordinal metric).
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        lo = np.minimum.outer(np.arange(len(scale)), np.arange(len(scale)))
        hi = np.maximum.outer(np.arange(len(scale)), np.arange(len(scale)))
        between = cum[hi + 1] - cum[lo]
        return (between - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    raise AgreementError(f"unknown level {level!r}; use 'nominal', 'ordinal' or 'interval'")
