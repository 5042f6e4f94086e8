"""The triage replay (`pooling.strategies.replays.triage`) of automatic judges stored in a
store, against one of its qrels versions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pooling.judges.grades_input import declared_max_grade
from pooling.judging.history import find_judge
from pooling.label_sets.sources import judge_labels, qrels_labels
from pooling.strategies.replays.triage import TriageReplay, max_grades, triage_replay


def store_triage_replay(
    store: Any,
    judges: Sequence[str],
    truth: str | None = None,
    *,
    max_grade: int | Sequence[int] | Mapping[str, int | None] | None = None,
    **options: Any,
) -> TriageReplay:
    """`triage_replay` of judges stored in `store` (their current grades and probabilities,
    on the scales they declare unless `max_grade` says otherwise) against a qrels version
    (`truth`; default: the store's default)."""
    names = list(judges)
    declared: dict[str, int | None] = {}
    for name in names:
        judge_id, params = find_judge(store, name)
        declared[name] = declared_max_grade(store, judge_id, params)
    given = max_grades(names, max_grade) if max_grade is not None else {}
    scales = {n: given.get(n) if given.get(n) is not None else declared[n] for n in names}
    labels = {n: judge_labels(store, n) for n in names}
    reference = qrels_labels(store, store.resolve_qrels(truth))
    return triage_replay(labels, reference, max_grade=scales, **options)
