"""Which topics a run is evaluated on: the one place the missing-topics policy lives.

The topic set is the qrels topics (optionally restricted), in strcmp order of query_id.
Topics only in the run are ignored. Qrels topics the run does not cover are, by policy:
`"error"` (trec_eval 10.0 without -c), `"zero"` (trec_eval -c: scored on a dummy ranking
and averaged in), or `"skip"` (trec_eval 9 / pytrec_eval: left out of every average).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from pooling.errors import EvaluationError

MissingTopics = Literal["error", "zero", "skip"]
MISSING_TOPICS_POLICIES: tuple[str, ...] = ("error", "zero", "skip")


class MissingTopicsError(EvaluationError):
    """Qrels topics absent from a run under the `error` policy (exit 4, like trec_eval)."""

    exit_code = 4


@dataclass(frozen=True)
class TopicPlan:
    """Evaluated topics as qrels-topic indices (ascending), and which of them the run lacks."""

    topics: np.ndarray  # int64[T], indices into QrelsIndex.topics
    missing: np.ndarray  # bool[T]: scored on the dummy ranking (policy "zero")


def candidate_topics(qrels_topics: list[str], restrict: Iterable[str] | None) -> np.ndarray:
    """Qrels topic indices to consider, optionally restricted to a list of query_ids."""
    if restrict is None:
        return np.arange(len(qrels_topics))
    wanted = {str(q) for q in restrict}
    unknown = sorted(wanted.difference(qrels_topics))
    if unknown:
        raise EvaluationError(
            f"topics not in the qrels: {_listing(unknown)}; restrict to topics that have judgments"
        )
    return np.array([i for i, q in enumerate(qrels_topics) if q in wanted], dtype=np.int64)


def plan_topics(
    candidates: np.ndarray,
    covered: np.ndarray,
    qrels_topics: list[str],
    policy: MissingTopics,
    run_name: str,
) -> TopicPlan:
    """Apply the missing-topics policy; `covered` is bool per qrels topic (run has lines)."""
    if policy not in MISSING_TOPICS_POLICIES:
        raise EvaluationError(
            f"missing_topics must be one of {', '.join(MISSING_TOPICS_POLICIES)}, not {policy!r}"
        )
    absent = ~covered[candidates]
    if policy == "error" and absent.any():
        names = [qrels_topics[i] for i in candidates[absent]]
        raise MissingTopicsError(
            f"run {run_name} has no lines for {len(names)} qrels topic(s): {_listing(names)}. "
            "Use -c to score them as 0 (trec_eval -c), or --shared-topics to evaluate only "
            "the topics the run and qrels share"
        )
    if policy == "skip":
        return TopicPlan(candidates[~absent], np.zeros(int((~absent).sum()), bool))
    return TopicPlan(candidates, absent)


def _listing(names: list[str], limit: int = 10) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" … (+{len(names) - limit} more)" if len(names) > limit else "")
