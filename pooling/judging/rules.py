"""Qrels versions derived from judgments by an explicit, recorded rule.

Rules (each assessor's current judgment per pair is used; see pooling.judging.judgments):
- latest:      the most recent current judgment of any assessor;
- primary:     the grade of the topic's primary assessor (pairs they have not judged are left out);
- majority:    the most frequent grade; a tie goes to the lower grade (`tie="lower"`, the
               conservative choice) or the higher one (`tie="higher"`);
- adjudicated: pairs where assessors disagree take an organiser's judgment; refused while
               disagreements without one remain (see `adjudication_queue`);
- mean:        the mean grade rounded half up;
- human-first: a person's grade where people judged the pair (their majority, ties as
               `tie`), else the named automatic judge's;
- judge-only:  the named automatic judge's grade alone;
- wawa, dawid-skene: an aggregation model's most probable grade, which learns how reliable
               each person is (registered in `DERIVATION_RULES` by
               pooling.crowds.model_rules); `gold` names a qrels version whose pairs seed
               the model and stay out of the derived version;
- gold-weighted: each labeller's vote weighted by the log-odds of their accuracy on the gold
               version `gold` (which it needs); for a jury of unequal automatic judges.
A crowd round's gold pairs (`Round.gold`) never enter a derived version, whatever the rule
(`without_gold`), and an unjudgeable answer is no grade: a pair all of whose current answers
are unjudgeable enters no version, and the version records how many pairs and answers were
(`params["unjudgeable"]`).
The first five and the models use people's judgments only; the last two name the judge, whose grades can be
mapped onto the round's scale (`judge_grades`), and the version records it among its judges.

A subtopic round's judgments give a subtopic qrels version: the rule is applied to each
(topic, subtopic, document) on its own (`derive_subtopic_grades`), and the version's plain
rows are a document's maximum over its topic's subtopics (relevant to any subtopic;
`pooling.store.qrels.plain_from_subtopics`). Agreement is reported per subtopic too
(`subtopic_agreement`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import StoreError
from pooling.judging.history import (
    effective_judgments,
    find_judge,
    judge_current,
    unjudgeable_answers,
)
from pooling.judging.plugins import Registry
from pooling.judging.rounds import crowd_rounds, get_round, gold_pairs
from pooling.judging.sampled_rounds import is_sampled_round, sampled_grades
from pooling.store.core import Store
from pooling.store.qrels import QrelsImport, save_qrels, save_subtopic_qrels
from pooling.store.sampled_qrels import save_sampled_qrels

PEOPLE_RULES = ("latest", "primary", "majority", "adjudicated", "mean")
JUDGE_RULES = ("human-first", "judge-only")


class ModelRule(Protocol):
    """A derivation rule that fits a model of the labellers to their current judgments: the
    package that holds one registers it in `DERIVATION_RULES` (`pooling.crowds.model_rules`:
    wawa, dawid-skene, gold-weighted), and `derive_qrels` stores what it fitted beside the
    version, in the version's transaction."""

    def grades(self, store: Store, *, round_id: str | None, gold: str | None
               ) -> tuple[pa.Table, Any]:
        """(query_id, doc_id, relevance, posterior) of every pair outside the gold version,
        and the fitted model."""
        ...

    def params(self, model: Any, gold: str | None) -> dict[str, Any]:
        """What the version records of the model (beside the rule and the round)."""
        ...

    def save_outputs(self, store: Store, version: str, grades: pa.Table, model: Any) -> None:
        """Store the model's outputs for the version (in the caller's transaction)."""
        ...


DERIVATION_RULES: Registry[ModelRule] = Registry("pooling.derivation_rules", "derivation rule")


def model_rule_names() -> tuple[str, ...]:
    """The rules that fit a model (`DERIVATION_RULES`), in the order they were registered."""
    return tuple(DERIVATION_RULES)


def rule_names() -> tuple[str, ...]:
    """Every rule `derive_qrels` takes: people's, the judge's, then the models'."""
    return (*PEOPLE_RULES, *JUDGE_RULES, *model_rule_names())


def _votes(store: Store, round_id: str | None, judged: pa.Table | None = None
           ) -> dict[tuple[str, str], list[tuple[str, int, int]]]:
    """(query_id, doc_id) -> [(assessor_id, grade, seq)] of current judgments (`judged`:
    the round's `effective_judgments`, when the caller has read them already)."""
    table = effective_judgments(store, round_id) if judged is None else judged
    out: dict[tuple[str, str], list[tuple[str, int, int]]] = defaultdict(list)
    for a, q, d, g, s in zip(*(table[c].to_pylist() for c in
                               ("assessor_id", "query_id", "doc_id", "grade", "seq")), strict=True):
        out[(q, d)].append((a, g, s))
    return out


def _roles(store: Store) -> dict[str, str]:
    return dict(store.con.execute("SELECT assessor_id, role FROM assessors").fetchall())


def _primaries(store: Store, round_id: str | None) -> dict[str, set[str]]:
    where, params = ("AND round_id = ?", [round_id]) if round_id else ("", [])
    out: dict[str, set[str]] = defaultdict(set)
    for q, a in store.con.execute(
        f"SELECT query_id, assessor_id FROM assignments WHERE role = 'primary' {where}", params
    ).fetchall():
        out[q].add(a)
    return out


def adjudication_queue(store: Store, round_id: str | None = None, *,
                       judged: pa.Table | None = None) -> pa.Table:
    """Pairs on which assessors currently disagree: query_id, doc_id, grades (assessor=grade),
    adjudicated (an organiser has judged the pair). judged: the round's current judgments
    (`effective_judgments`) when the caller has read them already."""
    if round_id is not None:
        get_round(store, round_id)  # an unknown round is an error, not an empty queue
    roles = _roles(store)
    rows: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "grades": [], "adjudicated": []}
    for (q, d), votes in sorted(_votes(store, round_id, judged).items()):
        judges = [(a, g) for a, g, _ in votes if roles.get(a) != "organiser"]
        if len({g for _, g in judges}) > 1:
            rows["query_id"].append(q)
            rows["doc_id"].append(d)
            rows["grades"].append(", ".join(f"{a}={g}" for a, g in sorted(judges)))
            rows["adjudicated"].append(any(roles.get(a) == "organiser" for a, _, _ in votes))
    return pa.table(rows, schema=pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
                                            ("grades", pa.string()), ("adjudicated", pa.bool_())]))


def shared_pairs(store: Store, round_id: str | None = None) -> int:
    """How many pairs two or more assessors (organisers aside) currently judge: the pairs on
    which they can disagree."""
    roles = _roles(store)
    return sum(1 for votes in _votes(store, round_id).values()
               if len({a for a, _, _ in votes if roles.get(a) != "organiser"}) > 1)


def derive_grades(store: Store, rule: str, *, round_id: str | None = None,
                  tie: str = "lower", judge: str | None = None,
                  judge_grades: dict[int, int] | None = None,
                  gold: str | None = None) -> pa.Table:
    """Apply a rule to the current judgments: query_id, doc_id, relevance (and posterior, the
    model's probability of that grade, for an aggregation rule)."""
    rules, models = rule_names(), model_rule_names()
    if rule not in rules:
        raise StoreError(f"unknown rule {rule!r}; use one of {', '.join(rules)}")
    if gold is not None and rule not in models:
        raise StoreError(f"--gold seeds an aggregation model; use it with --rule "
                         f"{' or --rule '.join(models)}")
    if tie not in ("lower", "higher"):
        raise StoreError("tie must be 'lower' or 'higher'")
    if (rule in JUDGE_RULES) != (judge is not None):
        raise StoreError(f"rule {rule!r} needs an automatic judge named with --judge" if judge is None
                         else f"rule {rule!r} uses people's judgments only; --judge goes with "
                         f"{' or '.join(JUDGE_RULES)}")
    if rule in JUDGE_RULES:
        return without_gold(store, _with_judge(store, rule, round_id, tie, judge,
                                               judge_grades or {}), round_id)
    if rule in models:
        return without_gold(store, DERIVATION_RULES.get(rule).grades(
            store, round_id=round_id, gold=gold)[0], round_id)
    votes = _votes(store, round_id)
    roles = _roles(store)
    primaries = _primaries(store, round_id) if rule == "primary" else {}
    if rule == "adjudicated":
        queue = adjudication_queue(store, round_id)
        pending = queue.filter(pc.invert(queue["adjudicated"]))
        if pending.num_rows:
            raise StoreError(f"{pending.num_rows} disagreement(s) are not adjudicated yet; "
                             "adjudicate them (organiser judgments) or use --rule majority")
    out: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "relevance": []}
    for (q, d), vs in sorted(votes.items()):
        grade = _apply(rule, vs, roles, primaries.get(q, set()), tie)
        if grade is not None:
            out["query_id"].append(q)
            out["doc_id"].append(d)
            out["relevance"].append(grade)
    return without_gold(store, pa.table(out, schema=pa.schema(
        [("query_id", pa.string()), ("doc_id", pa.string()), ("relevance", pa.int64())])),
        round_id)


def round_gold(store: Store, round_id: str | None) -> set[tuple[str, str]]:
    """The gold pairs of a crowd round (of every crowd round with gold when round_id is None),
    of every gold version it has had (`pooling.judging.rounds.set_gold` may replace one):
    known answers, never part of a derived version."""
    rounds = [round_id] if round_id is not None else crowd_rounds(store)
    out: set[tuple[str, str]] = set()
    for r in rounds:
        for q, docs in gold_pairs(store, get_round(store, r), every=True).items():
            out.update((q, d) for d in docs)
    return out


def without_gold(store: Store, table: pa.Table, round_id: str | None) -> pa.Table:
    """The rows of `table` (query_id, doc_id, ...) less the gold pairs of the round(s)."""
    gold = round_gold(store, round_id)
    if not gold or table.num_rows == 0:
        return table
    keep = [(q, d) not in gold for q, d in zip(table["query_id"].to_pylist(),
                                               table["doc_id"].to_pylist(), strict=True)]
    return table.filter(pa.array(keep, pa.bool_()))


def _apply(rule: str, votes: list[tuple[str, int, int]], roles: dict[str, str],
           primaries: set[str], tie: str) -> int | None:
    judges = [(a, g, s) for a, g, s in votes if roles.get(a) != "organiser"]
    organisers = [(a, g, s) for a, g, s in votes if roles.get(a) == "organiser"]
    if rule == "latest":
        return max(votes, key=lambda v: v[2])[1]
    if rule == "primary":
        mine = [v for v in judges if v[0] in primaries]
        return max(mine, key=lambda v: v[2])[1] if mine else None
    if rule == "adjudicated":
        if len({g for _, g, _ in judges}) > 1 and organisers:
            return max(organisers, key=lambda v: v[2])[1]
        pool = judges or organisers
        return pool[0][1]
    pool = judges or organisers
    grades = [g for _, g, _ in pool]
    if rule == "majority":
        counts = Counter(grades)
        top = max(counts.values())
        tied = [g for g, c in counts.items() if c == top]
        return min(tied) if tie == "lower" else max(tied)
    mean = sum(grades) / len(grades)  # rule == "mean": round half up
    return math.floor(mean + 0.5)


def derive_qrels(store: Store, rule: str, name: str, *, round_id: str | None = None,
                 tie: str = "lower", relevance_level: int = 1, judge: str | None = None,
                 judge_grades: dict[int, int] | None = None,
                 gold: str | None = None) -> QrelsImport:
    """Derive and store a new immutable qrels version, recording the rule and its inputs.

    From a round pooled with strata the version is sampled qrels (`pooling.store.sampled_qrels`):
    every pooled pair keeps its stratum, and pairs the rule grades none are pooled, not sampled.
    From a subtopic round it is a subtopic qrels version (module doc).
    An aggregation rule also stores each pair's posterior and each worker's confusion matrix,
    in the same transaction as the version.
    """
    if round_id is not None and get_round(store, round_id).item.version_form == "subtopic qrels":
        if gold is not None:
            raise StoreError(f"round {round_id!r} is judged on subtopics; gold seeds the "
                             f"aggregation models of plain rounds only: drop --gold")
        return derive_subtopic_qrels(store, rule, name, round_id=round_id, tie=tie,
                                     relevance_level=relevance_level, judge=judge,
                                     judge_grades=judge_grades)
    model, fitting = None, None
    if rule in model_rule_names():
        fitting = DERIVATION_RULES.get(rule)
        if judge is not None:
            raise StoreError(f"rule {rule!r} uses people's judgments only; --judge goes with "
                             f"{' or '.join(JUDGE_RULES)}")
        if tie not in ("lower", "higher"):
            raise StoreError("tie must be 'lower' or 'higher'")
        table, model = fitting.grades(store, round_id=round_id, gold=gold)
        posteriors = table = without_gold(store, table, round_id)
        table = table.select(["query_id", "doc_id", "relevance"])
    else:
        table = derive_grades(store, rule, round_id=round_id, tie=tie, judge=judge,
                              judge_grades=judge_grades, gold=gold)
    sampled = is_sampled_round(store, round_id)
    if sampled:
        table = sampled_grades(store, round_id, table)  # type: ignore[arg-type]
    judged = table.filter(pc.greater_equal(table["relevance"], 0)) if sampled else table
    if judged.num_rows == 0:
        raise StoreError("there are no judgments to derive qrels from")
    grades = list(get_round(store, round_id).grades) if round_id else None
    judge_id = _judge_id(store, judge) if judge is not None else None
    params = {"rule": rule, "round": round_id,
              "tie": tie if rule in ("majority", "human-first") else None}
    left_out, answers = unjudgeable_answers(store, round_id, round_gold(store, round_id))
    if answers:
        params["unjudgeable"] = {"pairs": left_out, "answers": answers}
    if judge_id is not None:
        params["judge"] = judge_id
        if judge_grades:
            params["judge_grades"] = {str(k): v for k, v in sorted(judge_grades.items())}
    if model is None:
        return _save(store, table, name, rule, round_id, grades, relevance_level, params,
                     judge_id, sampled)
    assert fitting is not None
    params.update(fitting.params(model, gold))
    with store.transaction():
        saved = _save(store, table, name, rule, round_id, grades, relevance_level, params,
                      judge_id, sampled)
        fitting.save_outputs(store, name, posteriors, model)
    return saved


def _save(store: Store, table: pa.Table, name: str, rule: str, round_id: str | None,
          grades: list[int] | None, relevance_level: int, params: dict[str, Any],
          judge_id: str | None, sampled: bool) -> QrelsImport:
    if sampled:
        params["sampled"] = True
        return save_sampled_qrels(store, table, name, method=f"derived:{rule}", source=round_id,
                                  grades=grades, relevance_level=relevance_level, params=params,
                                  judges=[judge_id] if judge_id else None)
    return save_qrels(store, table, name, method=f"derived:{rule}", source=round_id,
                      grades=grades, relevance_level=relevance_level, params=params,
                      judges=[judge_id] if judge_id else None)


def _judge_id(store: Store, name: str) -> str:
    """The id of an automatic judge by id or name; a person or an unknown name is refused."""
    return find_judge(store, name)[0]


def _with_judge(store: Store, rule: str, round_id: str | None, tie: str, judge: str,
                mapping: dict[int, int]) -> pa.Table:
    """human-first and judge-only: the judge's current grades (in the round, or anywhere when
    no round is named), mapped onto the people's scale, under the people's where they judged."""
    judge_id = _judge_id(store, judge)
    grades = {pair: mapping.get(g, g) for pair, (g, _, _) in judge_current(store, judge_id, round_id).items()}
    if rule == "human-first":
        roles = _roles(store)
        for pair, votes in _votes(store, round_id).items():
            grade = _apply("majority", votes, roles, set(), tie)
            if grade is not None:
                grades[pair] = grade
    rows = sorted(grades.items())
    return pa.table({"query_id": [q for (q, _), _ in rows], "doc_id": [d for (_, d), _ in rows],
                     "relevance": pa.array([g for _, g in rows], pa.int64())})


def round_agreement(store: Store, round_id: str, *, threshold: int = 1,
                    judged: pa.Table | None = None, topics: str | list[str] | None = None):
    """Agreement among a round's assessors on the pairs judged more than once (organisers'
    adjudications excluded), keyed by (query_id, doc_id). judged: the round's current
    judgments (`effective_judgments`) when the caller has read them already; topics: ids,
    ranges or a stored subset to measure it on (all the round's when None)."""
    from pooling.agreement import agreement_report

    rnd = get_round(store, round_id)
    if rnd.adaptive and shared_pairs(store, round_id) == 0:
        raise StoreError(
            f"round {round_id!r} is adaptive ({rnd.strategy}): each document it chooses goes to "
            "one assessor (it cannot be assigned with --overlap), so no pair is judged twice to "
            "measure agreement on; measure it on a static round assigned with --overlap, or "
            f"against an automatic judge (`pooling judge --round {round_id}`, then `pooling "
            f"agreement --judge NAME --round {round_id}`)")
    roles = _roles(store)
    table = effective_judgments(store, round_id) if judged is None else judged
    selected = _selected_topics(store, topics)
    keep = [roles.get(a) != "organiser" and (selected is None or q in selected)
            for a, q in zip(table["assessor_id"].to_pylist(), table["query_id"].to_pylist(),
                            strict=True)]
    judged = table.filter(pa.array(keep, pa.bool_())).select(
        ["query_id", "doc_id", "assessor_id", "grade"])
    return agreement_report(judged, grades=rnd.grades, threshold=threshold)


def _selected_topics(store: Store, topics: str | list[str] | None) -> set[str] | None:
    """The topics a selection names (ids, ranges, a stored subset), or None for all."""
    if topics is None:
        return None
    from pooling.store.topic_selection import resolve_topic_selection

    return set(resolve_topic_selection(store, topics) or ())


# -- subtopic rounds -----------------------------------------------------------------------

SUBTOPIC_RULES = ("latest", "primary", "majority", "mean", "human-first", "judge-only")


def derive_subtopic_grades(store: Store, rule: str, round_id: str, *,
                           tie: str = "lower", judge: str | None = None,
                           judge_grades: dict[int, int] | None = None) -> pa.Table:
    """A rule applied to each (topic, subtopic, document) of a subtopic round's current
    judgments on its own: query_id, subtopic, doc_id, relevance. The people's rules as for
    documents; judge-only takes the named judge's grade on each subtopic (mapped onto the
    people's scale), human-first the people's majority where they judged it, else the judge's."""
    rnd = get_round(store, round_id)
    if not rnd.item.has_parts:
        raise StoreError(f"round {round_id!r} judges documents as a whole, not subtopics; derive "
                         "its qrels without subtopics")
    if rule not in SUBTOPIC_RULES:
        raise StoreError(f"rule {rule!r} does not derive subtopic qrels; use one of "
                         f"{', '.join(SUBTOPIC_RULES)}")
    if (rule in JUDGE_RULES) != (judge is not None):
        raise StoreError(f"rule {rule!r} needs an automatic judge named with --judge" if judge is None
                         else f"rule {rule!r} uses people's judgments only; --judge goes with "
                         f"{' or '.join(JUDGE_RULES)}")
    if tie not in ("lower", "higher"):
        raise StoreError("tie must be 'lower' or 'higher'")
    columns = ("assessor_id", "query_id", "part", "doc_id", "grade", "seq")
    table = effective_judgments(store, round_id, per_part=True)
    votes: dict[tuple[str, str, str], list[tuple[str, int, int]]] = defaultdict(list)
    for a, q, s, d, g, seq in zip(*(table[c].to_pylist() for c in columns), strict=True):
        votes[(q, s, d)].append((a, g, seq))
    roles = _roles(store)
    grades: dict[tuple[str, str, str], int] = {}
    if judge is not None:
        mapping = judge_grades or {}
        mine = effective_judgments(store, round_id, assessor_id=_judge_id(store, judge),
                                   per_part=True)
        for _, q, s, d, g, _ in zip(*(mine[c].to_pylist() for c in columns), strict=True):
            grades[(q, s, d)] = mapping.get(g, g)
    if rule != "judge-only":
        people = "majority" if rule == "human-first" else rule
        primaries = _primaries(store, round_id) if rule == "primary" else {}
        for (q, s, d), vs in votes.items():
            grade = _apply(people, vs, roles, primaries.get(q, set()), tie)
            if grade is not None:
                grades[(q, s, d)] = grade
    out: dict[str, list[Any]] = {"query_id": [], "subtopic": [], "doc_id": [], "relevance": []}
    for (q, s, d), grade in sorted(grades.items()):
        for column, value in zip(out, (q, s, d, grade), strict=True):
            out[column].append(value)
    return pa.table(out, schema=pa.schema([("query_id", pa.string()), ("subtopic", pa.string()),
                                           ("doc_id", pa.string()), ("relevance", pa.int64())]))


def derive_subtopic_qrels(store: Store, rule: str, name: str, *, round_id: str,
                          tie: str = "lower", relevance_level: int = 1,
                          judge: str | None = None,
                          judge_grades: dict[int, int] | None = None) -> QrelsImport:
    """Derive and store a subtopic qrels version from a subtopic round (module doc)."""
    table = derive_subtopic_grades(store, rule, round_id, tie=tie, judge=judge,
                                   judge_grades=judge_grades)
    if table.num_rows == 0:
        raise StoreError("there are no judgments to derive qrels from")
    params = {"rule": rule, "round": round_id, "tie": tie if rule == "majority" else None}
    if judge is not None:
        params.update(judge=judge, judge_grades=judge_grades or None)
    return save_subtopic_qrels(store, table, name, method=f"derived:{rule}", source=round_id,
                               grades=list(get_round(store, round_id).grades),
                               relevance_level=relevance_level, params=params,
                               judges=[_judge_id(store, judge)] if judge else None)


@dataclass(frozen=True)
class SubtopicAgreement:
    """Agreement among a subtopic round's assessors on one subtopic of one topic: the report,
    or why there is none (fewer than two assessors judged any of its pairs)."""

    query_id: str
    subtopic: str
    text: str
    report: Any | None
    problem: str | None


def subtopic_agreement(store: Store, round_id: str, *, threshold: int = 1,
                       topics: str | list[str] | None = None) -> list[SubtopicAgreement]:
    """Agreement per subtopic of a subtopic round (organisers' adjudications excluded), in the
    round's topic and subtopic order, on the selected topics (all when None);
    `round_agreement` gives it on documents (each one's maximum grade over its subtopics)."""
    from pooling.agreement import agreement_report
    from pooling.errors import PoolingError

    rnd = get_round(store, round_id)
    if not rnd.item.has_parts:
        raise StoreError(f"round {round_id!r} judges documents as a whole, not subtopics")
    roles = _roles(store)
    table = effective_judgments(store, round_id, per_part=True)
    rows: dict[tuple[str, str], dict[str, list[Any]]] = {}
    for a, q, s, d, g in zip(*(table[c].to_pylist() for c in
                               ("assessor_id", "query_id", "part", "doc_id", "grade")),
                             strict=True):
        if roles.get(a) == "organiser":
            continue
        part = rows.setdefault((q, s), {"query_id": [], "doc_id": [], "assessor_id": [],
                                        "grade": []})
        for column, value in zip(part, (q, d, a, g), strict=True):
            part[column].append(value)
    out = []
    selected = _selected_topics(store, topics)
    for q, subs in rnd.parts.items():
        if selected is not None and q not in selected:
            continue
        for s, text in subs:
            judged = rows.get((q, s))
            report, problem = None, None
            if judged is None:
                problem = "not judged yet"
            else:
                try:
                    report = agreement_report(pa.table(judged), grades=rnd.grades,
                                              threshold=threshold)
                except PoolingError as exc:
                    problem = str(exc)
            out.append(SubtopicAgreement(q, s, text, report, problem))
    return out
