"""Raw overlap of relevant sets (Voorhees 2000): |relevant by all| / |relevant by any|."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from pooling.agreement.errors import AgreementError
from pooling.agreement.judgments import align


def raw_overlap(
    judgments: Any,
    assessors: Sequence[str] | None = None,
    *,
    threshold: int = 1,
    average: Literal["pooled", "topics"] = "pooled",
) -> float:
    """Overlap of the assessors' relevant sets (grade >= threshold) on pairs all of them judged.

    average="pooled" divides counts summed over all topics; "topics" averages the per-topic
    overlap over topics where anyone found a relevant document (Voorhees reports both views).
    nan when no aligned pair is relevant to anyone.
    """
    if average not in ("pooled", "topics"):
        raise AgreementError(f"unknown average={average!r}; use 'pooled' or 'topics'")
    alignment = align(judgments, assessors)
    if len(alignment.assessors) < 2:
        raise AgreementError("overlap needs at least two assessors")
    complete = ~np.isnan(alignment.grades).any(axis=1)
    relevant = alignment.grades[complete] >= threshold
    both = relevant.all(axis=1)
    either = relevant.any(axis=1)
    if average == "pooled":
        union = int(either.sum())
        return float(both.sum()) / union if union else float("nan")
    topics, topic_idx = np.unique(alignment.query_id[complete], return_inverse=True)
    inter = np.bincount(topic_idx, weights=both, minlength=len(topics))
    union = np.bincount(topic_idx, weights=either, minlength=len(topics))
    has = union > 0
    return float(np.mean(inter[has] / union[has])) if has.any() else float("nan")
