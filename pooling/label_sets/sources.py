"""Label sets read from a store, and the stored runs scored under a label set.

A label set is an Arrow table of query_id, doc_id, grade (plus probability for a judge): a
qrels version, an automatic judge's current grades, or the people's (their majority per
pair). `run_means` scores every stored run under a qrels version (cached, as the leaderboard
does) or under a label set made on the fly.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from pooling.agreement.errors import AgreementError
from pooling.store.core import Store

JUDGE_LABELS_SCHEMA = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
                                 ("grade", pa.int64()), ("probability", pa.float64())])


def qrels_labels(store: Store, version: str | None) -> pa.Table:
    """A qrels version (default: the store's default) as query_id, doc_id, grade."""
    table = store.qrels_table(version)
    return table.rename_columns(["query_id", "doc_id", "grade"])


def judge_labels(store: Store, judge: str, round_id: str | None = None) -> pa.Table:
    """An automatic judge's current grade per pair (in the round, or its latest anywhere),
    with the probability it gave with that grade: query_id, doc_id, grade, probability."""
    from pooling.judging.history import find_judge, judge_current
    from pooling.judging.rounds import get_round

    judge_id = find_judge(store, judge)[0]
    if round_id is not None:
        get_round(store, round_id)  # an unknown round is an error, not an empty label set
    latest = judge_current(store, judge_id, round_id)
    rows = sorted(latest.items())
    return pa.table([pa.array([q for (q, _), _ in rows], pa.string()),
                     pa.array([d for (_, d), _ in rows], pa.string()),
                     pa.array([g for _, (g, _, _) in rows], pa.int64()),
                     pa.array([p for _, (_, p, _) in rows], pa.float64())],
                    schema=JUDGE_LABELS_SCHEMA)


def people_labels(store: Store, round_id: str | None = None) -> pa.Table:
    """The people's current grade per pair (in the round, or in any): one person's grade, or
    the majority of several with ties to the lower grade (qrels rule `majority`).
    Automatic judges are not people and are left out. Columns query_id, doc_id, grade."""
    from pooling.judging.rounds import get_round
    from pooling.judging.rules import derive_grades

    if round_id is not None:
        get_round(store, round_id)
    table = derive_grades(store, "majority", round_id=round_id, tie="lower")
    return table.rename_columns(["query_id", "doc_id", "grade"])


def run_means(
    store: Store,
    labels: str | pa.Table,
    measure: str = "map",
    *,
    relevance_level: int = 1,
    runs: list[str] | None = None,
    topics: list[str] | None = None,
) -> dict[str, float]:
    """run_id -> mean of `measure` over the topics of the labels (those among `topics` when
    given), unjudged documents counting as non-relevant and topics a run lacks as zero
    (trec_eval -c, the leaderboard's default).

    labels: a qrels version's name (evaluated through the store's cache, as the leaderboard
    does) or a table of query_id, doc_id, grade (or relevance) evaluated on the fly.
    """
    from pooling.measures import parse_measures

    if relevance_level < 1:
        raise AgreementError(f"the relevance threshold must be at least 1 to score runs (got "
                             f"{relevance_level}); grades below it count as non-relevant")
    columns = [c for m in parse_measures([measure]) for c in m.columns]
    if len(columns) != 1:
        raise AgreementError(f"measure {measure!r} gives {len(columns)} values per run; name "
                             "one value, e.g. map or P_10")
    run_ids = runs if runs is not None else store.run_ids()
    if not run_ids:
        return {}
    if isinstance(labels, str):
        from pooling.store.evaluate import evaluate_store

        result = evaluate_store(store, qrels=labels, runs=run_ids, measures=[measure],
                                missing_topics="zero", relevance_level=relevance_level,
                                topics=topics)
        return {r["run_id"]: r["value"] for r in result.means.to_pylist()
                if r["measure"] == columns[0]}
    from pooling.evaluation import evaluate
    from pooling.store.streams import StoredRuns

    if topics is not None:
        labels = labels.filter(pc.is_in(labels["query_id"], pa.array(topics, pa.string())))
    names = labels.column_names
    qrels = labels.select(["query_id", "doc_id", "relevance" if "relevance" in names else "grade"])
    qrels = qrels.rename_columns(["query_id", "doc_id", "relevance"])
    with StoredRuns(store, run_ids) as stored:
        result = evaluate(qrels, stored.streams, [measure], missing_topics="zero",
                          relevance_level=relevance_level)
    return {run.run_id: float(run.summary[columns[0]]) for run in result.runs}


def on_topics(store: Store, labels: pa.Table, topics: str | list[str] | None) -> pa.Table:
    """The label set's rows on the selected topics (ids, ranges or a stored subset's name;
    all when None)."""
    from pooling.store.topic_selection import resolve_topic_selection

    selected = resolve_topic_selection(store, topics)
    if selected is None:
        return labels
    return labels.filter(pc.is_in(labels["query_id"], pa.array(selected, pa.string())))
