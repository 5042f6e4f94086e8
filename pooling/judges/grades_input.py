"""Automatic judges' current grades as a strategy's input (`judge_grades`: `uncertain`, the
triage strategies), registered with the judging core's `STRATEGY_INPUTS`: reading a judge's
declared scale needs its backend (`pooling.judges.backends`), which the core does not know.

A judge's grades are on 0..its declared top grade (`declared_max_grade`), never the range of
the grades it happened to give.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pooling.errors import StoreError
from pooling.judges.backends.registry import BACKENDS
from pooling.judging.history import find_judge, judge_current
from pooling.judging.strategy_inputs import STRATEGY_INPUTS
from pooling.store.core import Store
from pooling.strategies import Strategy, TopicRuns
from pooling.strategies.uncertain import JudgeGrade, judge_names


def judge_grades(store: Store, name: str, query_ids: list[str]) -> dict[str, dict[str, JudgeGrade]]:
    """A judge's current judgment of each pair of these topics, in any round or outside
    rounds (the latest, after retractions): query_id -> doc_id -> JudgeGrade.

    The scale is 0..the judge's declared top grade (`declared_max_grade`), never the range
    of the grades it happened to give; the strategy's max_grade overrides it.
    """
    try:
        judge_id, params = find_judge(store, name)
    except StoreError as exc:
        raise StoreError(f"--judge {name}: {exc}") from None
    high = declared_max_grade(store, judge_id, params)
    latest = judge_current(store, judge_id, query_ids=query_ids)
    out: dict[str, dict[str, JudgeGrade]] = {}
    for (q, d), (grade, probability, _) in latest.items():
        out.setdefault(q, {})[d] = JudgeGrade(int(grade), probability, 0, high)
    return out


# Backends whose grades are 0 or 1 whatever their parameters: the learned judge grades 1
# when P(relevant) >= 0.5.
_BINARY_BACKENDS = frozenset({"learned"})


def declared_max_grade(store: Store, judge_id: str, params: Mapping[str, Any]) -> int | None:
    """The top of a judge's grade scale as the judge declares it: its max_grade parameter
    (an openai judge without one: the prompt's default), 1 for a binary backend, None for a
    judge that declares none (a command judge: its program's scale is not known here)."""
    if params.get("max_grade") is not None:
        return int(params["max_grade"])
    row = store.one("judge backend", "SELECT backend FROM assessors WHERE assessor_id = ?",
                    [judge_id])
    backend = row[0] if row else None
    if backend in _BINARY_BACKENDS:
        return 1
    spec = BACKENDS.get(backend or "")
    default = next((p.default for p in spec.params if p.name == "max_grade"), None) if spec else None
    return None if default is None else int(default)


class JudgeGrades:
    """`judge_grades`: each named judge's current grades of the topics' pairs, by name
    (`strategy.options["judges"]`); a judge that is not in the store is refused by name."""

    def read(self, store: Store, strategy: Strategy, topics: Mapping[str, TopicRuns],
             judged: Mapping[str, Iterable[str]], *, load: bool
             ) -> dict[str, dict[str, dict[str, JudgeGrade]]] | None:
        names = judge_names(strategy.options.get("judges", ""))
        grades = {name: judge_grades(store, name, list(topics) if load else []) for name in names}
        return grades if load else None

    def topics_without_runs(self, store: Store, strategy: Strategy, topics: list[str] | None
                            ) -> dict[str, TopicRuns]:
        """Every topic a named judge has a current judgment in (of `topics`, when given)."""
        found: set[str] = set()
        for name in judge_names(strategy.options.get("judges", "")):
            try:
                judge_id, _ = find_judge(store, name)
            except StoreError as exc:
                raise StoreError(f"--judge {name}: {exc}") from None
            found |= {q for q, _ in judge_current(store, judge_id, query_ids=topics)}
        return {q: TopicRuns(q, {}) for q in sorted(found)}


STRATEGY_INPUTS.register("judge_grades", JudgeGrades())
