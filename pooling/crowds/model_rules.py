"""Qrels rules that aggregate a crowd's judgments with a model of who is reliable.

`wawa`, `dawid-skene` and `gold-weighted` (a vote weighted by each one's accuracy on the
gold, which it needs; see pooling.agreement.aggregation) read each person's current
judgment per pair (organisers' adjudications and automatic judges left out, as the other
people's rules do), and give each pair the model's most probable grade with its posterior
probability. A qrels version derived this way also keeps, in the store, every pair's posterior
(`qrels_posteriors`) and every assessor's estimated confusion matrix (`qrels_workers`), as the
model had them when the version was made.

Gold: a qrels version named as gold seeds the model (its pairs' grades are taken as known, so
the workers' estimates learn from them) and its pairs never enter the derived version: they
are known answers, not the crowd's work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from pooling.agreement.errors import AgreementError
from pooling.errors import StoreError
from pooling.judging.history import effective_judgments
from pooling.judging.rules import DERIVATION_RULES
from pooling.store.core import Store

if TYPE_CHECKING:
    from pooling.agreement.aggregation import Aggregation

MODEL_RULES = ("wawa", "dawid-skene", "gold-weighted")
_SEP = "\t"  # query_id TAB doc_id as one task id: TREC ids never hold a tab


def task_id(query_id: str, doc_id: str) -> str:
    """A pair as one task id of a labels table: query_id TAB doc_id."""
    return f"{query_id}{_SEP}{doc_id}"


def task_pair(task: str) -> tuple[str, str]:
    """A task id's (query_id, doc_id)."""
    query_id, doc_id = task.split(_SEP, 1)
    return query_id, doc_id


def crowd_labels(store: Store, round_id: str | None) -> pa.Table:
    """People's current judgments as a labels table: worker, task (query_id TAB doc_id), label."""
    table = effective_judgments(store, round_id)
    organisers = {a for (a,) in store.con.execute(
        "SELECT assessor_id FROM assessors WHERE role = 'organiser'").fetchall()}
    rows = [(a, f"{q}{_SEP}{d}", g) for a, q, d, g in zip(
        *(table[c].to_pylist() for c in ("assessor_id", "query_id", "doc_id", "grade")),
        strict=True) if a not in organisers and g is not None]
    return pa.table({"worker": pa.array([r[0] for r in rows], pa.string()),
                     "task": pa.array([r[1] for r in rows], pa.string()),
                     "label": pa.array([r[2] for r in rows], pa.int64())})


def gold_grades(store: Store, version: str) -> dict[str, int]:
    """A qrels version's grades by task (query_id TAB doc_id), to seed a model."""
    table = store.qrels_table(version)
    return {f"{q}{_SEP}{d}": g for q, d, g in zip(
        *(table[c].to_pylist() for c in ("query_id", "doc_id", "relevance")), strict=True)}


def model_grades(store: Store, rule: str, *, round_id: str | None = None,
                 gold: str | None = None) -> tuple[pa.Table, Aggregation]:
    """Apply an aggregation rule to the current judgments: (query_id, doc_id, relevance,
    posterior) for every pair not in the gold version, and the model's full result."""
    from pooling.agreement.aggregation import aggregate  # pandas and crowd-kit: when used

    if rule not in MODEL_RULES:
        raise StoreError(f"{rule!r} is not an aggregation rule; use one of {', '.join(MODEL_RULES)}")
    labels = crowd_labels(store, round_id)
    if labels.num_rows == 0:
        raise StoreError("there are no judgments to derive qrels from")
    seed = gold_grades(store, gold) if gold is not None else {}
    try:
        result = aggregate(labels, rule, gold=seed)
    except AgreementError as exc:
        raise StoreError(f"rule {rule!r}: {exc}") from exc
    keep = [t not in seed for t in result.tasks["task"].to_pylist()]
    tasks = result.tasks.filter(pa.array(keep, pa.bool_()))
    pairs = [t.split(_SEP, 1) for t in tasks["task"].to_pylist()]
    table = pa.table({"query_id": pa.array([q for q, _ in pairs], pa.string()),
                      "doc_id": pa.array([d for _, d in pairs], pa.string()),
                      "relevance": tasks["label"], "posterior": tasks["posterior"]})
    return table.sort_by([("query_id", "ascending"), ("doc_id", "ascending")]), result


def model_params(result: Aggregation, gold: str | None) -> dict[str, Any]:
    """What a version records of the model that made it (beside the rule and the round)."""
    return {"model": {k: v for k, v in result.params.items() if k != "model"}, "gold": gold}


def save_model_outputs(store: Store, version: str, grades: pa.Table, result: Aggregation) -> None:
    """Store a derived version's posteriors and its workers' confusion matrices (inside the
    caller's transaction, beside the version's rows)."""
    posteriors = grades.select(["query_id", "doc_id", "posterior"])
    workers = result.confusion
    with store.transaction():
        store.con.register("_posteriors", posteriors)
        store.con.register("_workers", workers)
        try:
            store.sql("insert posteriors", "INSERT INTO qrels_posteriors SELECT ?, query_id, "
                      "doc_id, posterior FROM _posteriors", [version])
            store.sql("insert workers", "INSERT INTO qrels_workers SELECT ?, worker, "
                      "true_label, label, probability FROM _workers", [version])
        finally:
            store.con.unregister("_posteriors")
            store.con.unregister("_workers")


def qrels_posteriors(store: Store, version: str | None = None) -> pa.Table:
    """A derived version's rows with their posteriors: query_id, doc_id, relevance, posterior
    (null for a version no model made)."""
    name = store.resolve_qrels(version)
    return store.arrow(
        "read posteriors",
        "SELECT q.query_id, q.doc_id, q.relevance, p.posterior FROM qrels q "
        "LEFT JOIN qrels_posteriors p ON p.version = q.version AND p.query_id = q.query_id "
        "AND p.doc_id = q.doc_id WHERE q.version = ? ORDER BY q.query_id, q.doc_id", [name])


def worker_confusion(store: Store, version: str | None = None) -> pa.Table:
    """Each assessor's estimated confusion matrix in a version an aggregation rule made:
    assessor_id, true_grade, grade, probability (a worker's rows for one true grade sum to 1).
    A version no model made is refused, naming the rules that record one."""
    name = store.resolve_qrels(version)
    table = store.arrow(
        "read workers", "SELECT assessor_id, true_grade, grade, probability FROM qrels_workers "
        "WHERE version = ? ORDER BY assessor_id, true_grade, grade", [name])
    if table.num_rows == 0:
        raise StoreError(f"qrels version {name!r} was not made by an aggregation model, so it "
                         f"holds no worker estimates; derive one with --rule "
                         f"{' or --rule '.join(MODEL_RULES)}")
    return table


class AggregationRule:
    """One aggregation model as the core's derivation rule
    (`pooling.judging.rules.DERIVATION_RULES`)."""

    def __init__(self, name: str):
        self.name = name

    def grades(self, store: Store, *, round_id: str | None, gold: str | None
               ) -> tuple[pa.Table, Aggregation]:
        return model_grades(store, self.name, round_id=round_id, gold=gold)

    def params(self, model: Aggregation, gold: str | None) -> dict[str, Any]:
        return model_params(model, gold)

    def save_outputs(self, store: Store, version: str, grades: pa.Table,
                     model: Aggregation) -> None:
        save_model_outputs(store, version, grades, model)


for _name in MODEL_RULES:
    DERIVATION_RULES.register(_name, AggregationRule(_name))
