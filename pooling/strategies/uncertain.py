"""`uncertain`: triage for people — the pairs an automatic judge is least sure of first, or
with two judges, the pairs they disagree on most.

A judgment leans towards relevance by its probability of relevance when the judge gives one,
else by its grade's place on the judge's scale (0 at the bottom, 1 at the top); the judge is
least sure where the lean is closest to 0.5. Two judges disagree by the difference of their
grades' places on their scales (so judges on different scales compare), ties going to the
pair they are jointly least sure of. Candidates are the topic's pairs the judge graded (with
two judges: both graded), or with candidates=pool only those among the pooled runs'
candidates. Remaining ties follow the pooled runs' round-robin order (when there are runs),
then doc_id. Static: the queue is computed once, from the judges' grades given as input
`judge_grades`.

A judge's scale is declared, never read off the grades it gave (two stray 5s would stretch
a 0-3 scale and make two judges who both said 3 look apart): `max_grade` (0..N) when given,
else the judge's own (an UMBRELA-style judge's max_grade, the learned judge's 0-1). A grade
off its judge's scale is an error naming the judge and the pairs. Only one judge whose every
judgment carries a probability needs no scale: its grades are not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pooling.strategies.base import (
    Param,
    QueueSelector,
    Selector,
    Strategy,
    StrategyError,
    TopicRuns,
    register,
)
from pooling.strategies.depth import round_robin

CANDIDATES = ("judged", "pool")
_DIGITS = 9


@dataclass(frozen=True)
class JudgeGrade:
    """An automatic judge's current judgment of a pair, and the judge's declared grade scale
    low..high (high None: the judge declares none)."""

    grade: int
    probability: float | None
    low: int
    high: int | None

    def place(self) -> float:
        """The grade's place on the judge's scale: 0 at its lowest grade, 1 at its highest."""
        if self.high is None:
            raise StrategyError("a judge without a declared grade scale was asked where a grade "
                                "lies on it; declare it with max_grade=N (`pooling pool --param "
                                "max_grade=N`, `pooling simulate-triage --max-grade N`)")
        return 0.5 if self.high <= self.low else (self.grade - self.low) / (self.high - self.low)

    def on_scale(self) -> bool:
        return self.high is None or self.low <= self.grade <= self.high

    def lean(self) -> float:
        """Towards relevance, 0 to 1: the probability of relevance, else the grade's place."""
        return self.probability if self.probability is not None else self.place()

    def sureness(self) -> float:
        """How far the lean is from a coin toss (0: not sure at all, 0.5: certain)."""
        return abs(self.lean() - 0.5)


def judge_names(text: str) -> list[str]:
    """'a, b' -> ['a', 'b']."""
    return [j.strip() for j in str(text).split(",") if j.strip()]


def rescaled(grades: Mapping[str, Mapping[str, JudgeGrade]], high: int | None
             ) -> Mapping[str, Mapping[str, JudgeGrade]]:
    """A judge's grades (query_id -> doc_id -> JudgeGrade) on the scale 0..high; as they are
    when high is None."""
    if high is None:
        return grades
    return {q: {d: JudgeGrade(g.grade, g.probability, 0, high) for d, g in docs.items()}
            for q, docs in grades.items()}


def off_scale(judge: str, grades: Mapping[str, Mapping[str, JudgeGrade]]) -> str | None:
    """What is wrong with a judge's grades against its scale, in one sentence, or None."""
    bad = sorted((q, d, g.grade) for q, docs in grades.items() for d, g in docs.items()
                 if not g.on_scale())
    if not bad:
        return None
    some = next(g for docs in grades.values() for g in docs.values())
    shown = ", ".join(f"({q}, {d}) grade {g}" for q, d, g in bad[:10])
    more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
    return (f"judge {judge} gave {len(bad)} grade(s) outside its scale {some.low}-{some.high}: "
            f"{shown}{more}")


def triage_order(topic: TopicRuns, grades: list[Mapping[str, JudgeGrade]], candidates: str) -> list[str]:
    """The topic's pairs to give people, first first (see the module docstring)."""
    docs = set(grades[0]).intersection(*grades[1:])
    if candidates == "pool":
        docs &= topic.candidates()
    pooled = {d: i for i, d in enumerate(round_robin(topic))}

    def key(doc: str) -> tuple:
        return (*triage_key([g[doc] for g in grades]), pooled.get(doc, len(pooled)), doc)

    return sorted(docs, key=key)


def triage_key(mine: list[JudgeGrade]) -> tuple[float, float]:
    """A pair's place in triage, smaller first: (−disagreement, sureness) of one or two
    judges' judgments of it."""
    disagreement = abs(mine[0].place() - mine[1].place()) if len(mine) == 2 else 0.0
    sureness = sum(m.sureness() for m in mine)
    # Rounded so that equal differences computed differently (2/3 - 1, 1/3 - 0) tie.
    return (-round(disagreement, _DIGITS), round(sureness, _DIGITS))


@register
class Uncertain(Strategy):
    name = "uncertain"
    needs = ("judge_grades",)
    summary = ("triage: the pairs an automatic judge is least sure of first, or that two "
               "judges disagree on most (pooling pool --judge NAME [--judge NAME])")
    params = (
        Param("judges", str, "", "one judge (least sure first) or two, comma-separated (most "
              "disagreement first)"),
        Param("candidates", str, "judged", "judged (every pair the judges graded) or pool "
              "(only those among the pooled runs' candidates)"),
        Param("max_grade", str, "", "the judges' grade scale 0..N: one N, or N,M in the order "
              "the judges are named (default: each judge's declared scale)"),
    )

    def judges(self) -> list[str]:
        """The judges named, checked: one or two."""
        names = judge_names(self.options["judges"])
        if len(names) not in (1, 2) or len(set(names)) != len(names):
            raise StrategyError(
                f"strategy 'uncertain' needs one judge or two different ones, got "
                f"{len(names)} ({', '.join(names) or 'none'}); name them with --judge NAME")
        if self.options["candidates"] not in CANDIDATES:
            raise StrategyError(f"uncertain candidates must be one of {', '.join(CANDIDATES)}, "
                                f"got {self.options['candidates']!r}")
        return names

    def reads_runs(self) -> bool:
        """Only candidates=pool reads the runs; otherwise they only break ties."""
        return self.options["candidates"] == "pool"

    def max_grades(self) -> dict[str, int | None]:
        """Judge -> the top of its scale as `max_grade` declares it (None: not declared)."""
        names = self.judges()
        text = str(self.options["max_grade"]).strip()
        if not text:
            return dict.fromkeys(names)
        values = [v.strip() for v in text.split(",")]
        if len(values) not in (1, len(names)) or not all(
                v.isdigit() and int(v) >= 1 for v in values):
            raise StrategyError(
                f"max_grade takes one whole number from 1 up, or one per judge in the order "
                f"{', '.join(names)} (e.g. max_grade=3 or max_grade=3,1); got {text!r}")
        if len(values) == 1:
            values = values * len(names)
        return {n: int(v) for n, v in zip(names, values, strict=True)}

    def given(self, **inputs: Any) -> Strategy:
        """A copy holding `inputs`; judges' grades are put on their declared scales and
        checked against them (every judge's problems at once)."""
        if "judge_grades" in inputs:
            inputs["judge_grades"] = self._on_scales(inputs["judge_grades"])
        return super().given(**inputs)

    def _on_scales(self, given: Mapping[str, Mapping[str, Mapping[str, JudgeGrade]]]
                   ) -> dict[str, Mapping[str, Mapping[str, JudgeGrade]]]:
        names, declared = self.judges(), self.max_grades()
        out = {j: rescaled(grades, declared.get(j)) for j, grades in given.items()}
        problems, fixable = [], False
        for j in names:
            grades = out.get(j, {})
            unscaled = [g for docs in grades.values() for g in docs.values() if g.high is None]
            if unscaled and (len(names) == 2 or any(g.probability is None for g in unscaled)):
                why = ("two judges' grades are compared" if len(names) == 2 else
                       "some of its judgments carry no probability")
                problems.append(f"judge {j} declares no grade scale, and its grades are read "
                                f"({why})")
            elif (problem := off_scale(j, grades)) is not None:
                problems.append(problem)
                fixable = True
        if problems:
            fix = "retract or fix those judgments, or " if fixable else ""
            raise StrategyError("; ".join(problems) + f"; {fix}declare the scale the judges "
                                "grade on with max_grade=N, N,M for two judges (`pooling pool "
                                "--param max_grade=N`, `pooling simulate-triage --max-grade N`)")
        return out

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        names = self.judges()
        given: Mapping[str, Mapping[str, Mapping[str, JudgeGrade]]] = self.input("judge_grades")
        missing = [j for j in names if j not in given]
        if missing:
            raise StrategyError(f"strategy 'uncertain' was given no grades of judge(s) "
                                f"{', '.join(missing)}")
        grades = [given[j].get(topic.query_id, {}) for j in names]
        return QueueSelector(triage_order(topic, grades, self.options["candidates"]))
