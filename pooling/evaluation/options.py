"""What to evaluate beside the qrels, runs and measures: trec_eval's -c, -l, -M, -J, -N, -Z and a
topic restriction, as one value with its defaults and checks in one place.

`evaluate` takes these as keywords (`EvalInputs`) and every evaluator behind it (trec_eval
qrels, judgment groups, preferences) takes the `EvalOptions` built from them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import TypedDict

from pooling.evaluation.inputs import check_settings
from pooling.evaluation.topics import MissingTopics
from pooling.evaluation.zscores import ZScores


@dataclass(frozen=True)
class EvalOptions:
    """The evaluation inputs besides qrels, runs and measures.

    missing_topics: "error" (trec_eval 10), "zero" (-c) or "skip" (only topics the run shares
    with the qrels); relevance_level: -l; max_docs: -M; topics: restrict to these qrels
    topics (None: all); judged_only: -J; collection_size: -N; zscores: -Z.
    """

    missing_topics: MissingTopics = "error"
    relevance_level: int = 1
    max_docs: int | None = None
    topics: Iterable[str] | None = None
    judged_only: bool = False
    collection_size: int | None = None
    zscores: ZScores | None = None

    def __post_init__(self) -> None:
        if self.topics is not None and not isinstance(self.topics, tuple):
            object.__setattr__(self, "topics", tuple(self.topics))  # read more than once

    @property
    def local_only(self) -> bool:
        """Whether these options need the local engine (-J, -N and -Z do not run on Ray)."""
        return self.judged_only or self.collection_size is not None or self.zscores is not None

    def check(self) -> None:
        """Refuse values trec_eval would refuse (-l, -M, -N out of range), saying what is allowed."""
        check_settings(self.relevance_level, self.max_docs, self.collection_size)


class EvalInputs(TypedDict, total=False):
    """`EvalOptions`' fields as keyword arguments (for `**inputs: Unpack[EvalInputs]`)."""

    missing_topics: MissingTopics
    relevance_level: int
    max_docs: int | None
    topics: Iterable[str] | None
    judged_only: bool
    collection_size: int | None
    zscores: ZScores | None


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(EvalOptions))
