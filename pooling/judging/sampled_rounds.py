"""Sampled rounds: the design a round pooled with strata records, and the qrels it yields.

A round whose strategy puts candidates in strata (`--strategy sample`) records, in
`pool_strata`, every pooled pair, judged or not: its stratum and its inclusion probability,
the share of its stratum (on its topic) that the round queues for judging. Only queued pairs
are served; the others stay pooled and unsampled.

The rule from judgments to sampled qrels lives here: a pooled pair takes the grade the
qrels rule gives it when it was judged, and -1 (pooled, not sampled) otherwise; a judgment of
a pair outside the pool is left out, since the design cannot weigh it. The estimators then
read each stratum's inclusion probability as judged / pooled, so a queued pair nobody judged
lowers its stratum's rate rather than counting as non-relevant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import StoreError
from pooling.formats.sampled_qrels import UNSAMPLED
from pooling.store.core import Store
from pooling.strategies import Strategy, TopicRuns, topic_seed

DESIGN_SCHEMA = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
                           ("stratum", pa.string()), ("inclusion_probability", pa.float64())])


def is_stratified(strategy: Strategy) -> bool:
    """Whether a strategy puts every candidate in a stratum (and so its rounds are sampled)."""
    return callable(getattr(strategy, "stratum_labels", None))


def check_stratified_options(strategy: Strategy, *, floor: int | None, exclude_judged: bool,
                             stop_after: int | None) -> None:
    """Refuse the round options that would break a sample's design, saying why."""
    if not is_stratified(strategy):
        return
    for option, given in (("--floor", floor), ("--exclude-judged", exclude_judged),
                          ("--stop-after", stop_after)):
        if given:
            raise StoreError(
                f"{option} changes which documents are judged outside the sampling design, so "
                f"the inclusion probabilities of --strategy {strategy.name} would no longer "
                "hold; leave it out (the top stratum judged whole is the fair floor)")


def design_table(strategy: Strategy, per_topic: Mapping[str, TopicRuns], seed: int,
                 queues: Mapping[str, Sequence[str]]) -> pa.Table:
    """Every pooled pair's stratum and inclusion probability (DESIGN_SCHEMA): the share of
    its stratum, on its topic, that `queues` (the round's queue per topic) holds."""
    rows: dict[str, list[Any]] = {name: [] for name in DESIGN_SCHEMA.names}
    labels_of = strategy.stratum_labels  # type: ignore[attr-defined]
    for q, topic in per_topic.items():
        labels: dict[str, str] = labels_of(topic, topic_seed(seed, q))
        pooled: dict[str, int] = {}
        queued: dict[str, int] = {}
        for label in labels.values():
            pooled[label] = pooled.get(label, 0) + 1
        for d in queues.get(q, ()):
            queued[labels[d]] = queued.get(labels[d], 0) + 1
        for d, label in sorted(labels.items()):
            rows["query_id"].append(q)
            rows["doc_id"].append(d)
            rows["stratum"].append(label)
            rows["inclusion_probability"].append(queued.get(label, 0) / pooled[label])
    return pa.table(rows, schema=DESIGN_SCHEMA)


def record_design(con: duckdb.DuckDBPyConnection, round_id: str, design: pa.Table) -> None:
    """Store a round's design, inside the caller's transaction (the round's own)."""
    con.register("_design", design)
    try:
        con.execute("INSERT INTO pool_strata SELECT ?, query_id, doc_id, stratum, "
                    "inclusion_probability FROM _design", [round_id])
    finally:
        con.unregister("_design")


def round_design(store: Store, round_id: str) -> pa.Table:
    """A round's recorded design (DESIGN_SCHEMA, by query_id and doc_id); empty when the
    round was pooled without strata."""
    return store.arrow(
        "read round design",
        "SELECT query_id, doc_id, stratum, inclusion_probability FROM pool_strata "
        "WHERE round_id = ? ORDER BY query_id, doc_id", [round_id]).cast(DESIGN_SCHEMA)


def is_sampled_round(store: Store, round_id: str | None) -> bool:
    """Whether a round recorded a sampling design."""
    return round_id is not None and store.one(
        "sampled round?", "SELECT 1 FROM pool_strata WHERE round_id = ? LIMIT 1",
        [round_id]) is not None


def sampled_grades(store: Store, round_id: str, grades: pa.Table) -> pa.Table:
    """The round's pooled pairs as sampled qrels: query_id, doc_id, stratum, relevance, where
    relevance is the grade `grades` (query_id, doc_id, relevance: a qrels rule's output) gives
    a pair, and -1 for a pair it does not grade."""
    design = round_design(store, round_id)
    if design.num_rows == 0:
        raise StoreError(f"round {round_id!r} was pooled without strata; pool a sampled round "
                         "with --strategy sample")
    joined = design.join(grades.select(["query_id", "doc_id", "relevance"]),
                         ["query_id", "doc_id"], join_type="left outer")
    relevance = pc.fill_null(joined["relevance"], UNSAMPLED).cast(pa.int64())
    return pa.table({"query_id": joined["query_id"], "doc_id": joined["doc_id"],
                     "stratum": joined["stratum"], "relevance": relevance}
                    ).sort_by([("query_id", "ascending"), ("doc_id", "ascending")])
