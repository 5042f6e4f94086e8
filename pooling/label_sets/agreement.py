"""Agreement between two label sets of a store, from the pairs up to the leaderboard: what
`pooling agreement STORE --qrels A --qrels B` and `pooling agreement STORE --judge NAME` print.

A is the reference. The pairwise statistics come from `compare_labels`; the leaderboard
correlation scores every stored run under A and under B with one measure: two qrels versions
as they are (through the store's evaluation cache), a judge and its reference on the pairs
compared (qrels made on the fly): by default those both graded, so the judge is not penalised
for pairs it never saw; with `unjudged`, every pair either graded, the missing grade filled.
Either way both rankings are scored on the same topics (a τ between rankings averaged over
different topics would mix a change of assessor with a change of topics): those both sides
have, within `topics` when given.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.agreement.errors import AgreementError
from pooling.agreement.labels import LabelComparison, compare_labels, label_table
from pooling.agreement.statistics import SECTIONS, section_dict
from pooling.agreement.systems import SystemAgreement, competition_ranks, system_agreement
from pooling.store.core import Store

ON_VERSIONS = "every run scored on each qrels version as stored, on the topics both have"
ON_SHARED = "every run scored on qrels made of each side's grades of the shared pairs"
ON_FILLED = ("every run scored on qrels made of each side's grades of the pairs either graded, "
             "a missing grade counting as {unjudged}")


@dataclass(frozen=True)
class LabelAgreement:
    """Label set B against reference A: `labels` pair by pair, `systems` over the runs.

    a, b: what each side is ("qrels official", "judge words", "people"). scores_a/scores_b:
    run_id -> mean `measure` under each side (empty without runs or shared pairs); `scored_on`
    says which qrels they were computed on. systems is None when there is no run to rank.
    """

    a: str
    b: str
    labels: LabelComparison
    measure: str
    scored_on: str
    scores_a: dict[str, float]
    scores_b: dict[str, float]
    systems: SystemAgreement | None

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready values; nan (undefined) becomes None."""
        labels = self.labels.to_dict()
        runs = []
        if self.scores_a:
            names = sorted(self.scores_a)
            ra = competition_ranks([self.scores_a[n] for n in names])
            rb = competition_ranks([self.scores_b[n] for n in names])
            runs = [{"run_id": n, "score_a": self.scores_a[n], "score_b": self.scores_b[n],
                     "rank_a": int(x), "rank_b": int(y)}
                    for n, x, y in zip(names, ra, rb, strict=True)]
        return _no_nan({
            "a": self.a, "b": self.b, "threshold": self.labels.threshold,
            "pairs": {"shared": labels["n_shared"], "only_a": labels["only_a"],
                      "only_b": labels["only_b"], "compared": labels["n_compared"],
                      "left_out": labels["left_out"], "unjudged": labels["unjudged"]},
            "note": labels["note"],
            "confusion": {"grades": labels["grades"], "counts": labels["confusion"],
                          "rows": "a", "columns": "b"},
            **{section: section_dict(self.labels, section) for section in SECTIONS},
            "leaderboard": {"measure": self.measure, "scored_on": self.scored_on,
                            **(self.systems.to_dict() if self.systems else {"n_runs": 0}),
                            "runs": runs},
        })

    def statistics(self) -> list[tuple[str, Any]]:
        """One (name, value) per statistic, in report order: the rows of the CSV output."""
        d = self.to_dict()
        rows: list[tuple[str, Any]] = [("a", self.a), ("b", self.b),
                                       ("threshold", self.labels.threshold)]
        rows += [(f"pairs.{k}", v) for k, v in d["pairs"].items()]
        rows.append(("note", d["note"]))
        grades = d["confusion"]["grades"]
        rows += [(f"confusion.a={ga}.b={gb}", d["confusion"]["counts"][i][j])
                 for i, ga in enumerate(grades) for j, gb in enumerate(grades)]
        for section in SECTIONS:  # probability is None when B gave none
            rows += [(f"{section}.{k}", v) for k, v in (d[section] or {}).items()]
        board = d["leaderboard"]
        rows += [("leaderboard.measure", self.measure), ("leaderboard.n_runs", board["n_runs"])]
        if self.systems is not None:
            rows += [(f"leaderboard.{k}", board[k]) for k in
                     ("kendall_tau", "tau_ap_a", "tau_ap_b", "tau_ap_symmetric", "spearman_rho")]
            for k, change in enumerate(board["changes"], start=1):
                rows += [(f"leaderboard.change.{k}.{f}", change[f]) for f in
                         ("run_id", "rank_a", "rank_b", "score_a", "score_b")]
        return rows

    def to_csv(self) -> str:
        """statistic,value rows; undefined values are empty, text cells spreadsheet-safe."""
        from pooling.formats.csv_cells import safe_cell

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["statistic", "value"])
        for name, value in self.statistics():
            cell = "" if value is None else safe_cell(value) if isinstance(value, str) else value
            writer.writerow([name, repr(cell) if isinstance(cell, float) else cell])
        return buf.getvalue()

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


def qrels_agreement(
    store: Store,
    a: str,
    b: str,
    *,
    threshold: int = 1,
    measure: str = "map",
    top: int = 5,
    unjudged: int | None = None,
    topics: str | list[str] | None = None,
) -> LabelAgreement:
    """Qrels version B against version A (human or model-derived), each run scored on both.

    unjudged: the grade a pair one version lacks counts as (see `compare_labels`); runs are
    scored on each version as stored, where a missing pair is not relevant either way, over
    the topics both versions have. topics: ids, ranges or a stored subset to compare on."""
    from pooling.label_sets.sources import on_topics, qrels_labels, run_means

    a, b = store.resolve_qrels(a), store.resolve_qrels(b)
    if a == b:
        raise AgreementError(f"qrels version {a!r} was given twice; name two different versions")
    table_a, table_b = (on_topics(store, qrels_labels(store, v), topics) for v in (a, b))
    labels = compare_labels(table_a, table_b, threshold=threshold, unjudged=unjudged)
    topics_a, topics_b = (set(t["query_id"].to_pylist()) for t in (table_a, table_b))
    both = sorted(topics_a & topics_b)
    # As stored (the leaderboard's cached scores) when nothing narrows either version.
    scored = None if topics is None and topics_a == topics_b else both
    scores_a = run_means(store, a, measure, relevance_level=threshold,
                         topics=scored) if both else {}
    scores_b = run_means(store, b, measure, relevance_level=threshold,
                         topics=scored) if scores_a else {}
    return _with_systems(f"qrels {a}", f"qrels {b}", labels, measure, ON_VERSIONS,
                         scores_a, scores_b, top)


def judge_agreement(
    store: Store,
    judge: str,
    *,
    round_id: str | None = None,
    against: str = "people",
    threshold: int = 1,
    measure: str = "map",
    top: int = 5,
    unjudged: int | None = None,
    topics: str | list[str] | None = None,
) -> LabelAgreement:
    """An automatic judge (B) against the people who judged the same pairs (their majority
    per pair, ties lower) or against a qrels version (A), in a round or over all rounds.

    against: "people", or a qrels version's name (`qrels:NAME` for a version called people).
    The judge's probabilities, where it gave them, are scored against A's relevance.
    unjudged: the grade a pair one side lacks counts as (0: not relevant; see
    `compare_labels`); by default such pairs are left out, of the runs' scores too.
    topics: ids, ranges or a stored subset to compare on (both sides' pairs, hence the runs'
    scores, are of the same topics either way).
    """
    from pooling.label_sets.sources import (
        judge_labels,
        on_topics,
        people_labels,
        qrels_labels,
        run_means,
    )

    judged = on_topics(store, judge_labels(store, judge, round_id), topics)
    if against == "people":
        reference, name = people_labels(store, round_id), "people"
    else:
        version = store.resolve_qrels(against.removeprefix("qrels:"))
        reference, name = qrels_labels(store, version), f"qrels {version}"
    reference = on_topics(store, reference, topics)
    labels = compare_labels(reference, judged, threshold=threshold, unjudged=unjudged)
    scores_a: dict[str, float] = {}
    scores_b: dict[str, float] = {}
    if labels.n_compared:
        shared_a, shared_b = shared_pairs(reference, judged, unjudged=unjudged)
        scores_a = run_means(store, shared_a, measure, relevance_level=threshold)
        scores_b = run_means(store, shared_b, measure, relevance_level=threshold) if scores_a else {}
    where = f" (round {round_id})" if round_id else ""
    scored_on = ON_SHARED if unjudged is None else ON_FILLED.format(unjudged=unjudged)
    return _with_systems(name + where, f"judge {_judge_id(store, judge)}{where}", labels,
                         measure, scored_on, scores_a, scores_b, top)


def shared_pairs(a: Any, b: Any, *, unjudged: int | None = None) -> tuple[pa.Table, pa.Table]:
    """A's and B's rows (query_id, doc_id, grade) on the pairs both graded, in one order; with
    `unjudged`, on the pairs either graded, the missing side's grade being `unjudged`."""
    table_a, table_b = label_table(a, "A"), label_table(b, "B")
    joined = table_a.join(table_b, ["query_id", "doc_id"],
                          join_type="inner" if unjudged is None else "full outer",
                          left_suffix="_a", right_suffix="_b").sort_by(
        [("query_id", "ascending"), ("doc_id", "ascending")])
    sides = []
    for side in ("grade_a", "grade_b"):
        grade = joined[side] if unjudged is None else pc.fill_null(
            joined[side], pa.scalar(int(unjudged), pa.int64()))
        sides.append(pa.table([joined["query_id"], joined["doc_id"], grade],
                              names=["query_id", "doc_id", "grade"]))
    return sides[0], sides[1]


def _judge_id(store: Store, judge: str) -> str:
    from pooling.judges.model_judges import get_judge

    return get_judge(store, judge).judge_id


def _with_systems(a: str, b: str, labels: LabelComparison, measure: str, scored_on: str,
                  scores_a: dict[str, float], scores_b: dict[str, float],
                  top: int) -> LabelAgreement:
    systems = system_agreement(scores_a, scores_b, top=top) if scores_a else None
    return LabelAgreement(a, b, labels, measure, scored_on, scores_a, scores_b, systems)


def _no_nan(value: Any) -> Any:
    """JSON-ready: nan -> None, NumPy scalars -> Python numbers, tuples -> lists."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_no_nan(v) for v in value]
    return value
