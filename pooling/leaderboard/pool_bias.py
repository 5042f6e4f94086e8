"""Pool bias: how much each pooled run (or team) owes to the judgments only it contributed.

The pool is the union of every pooled run's top `depth` documents per topic (trec_eval
order, as `pooling pool --strategy depth` builds it); with a depth the qrels are first
restricted to that pool (a re-pool), without one the qrels are used as they are and a
run's contribution is everything it retrieved. Leaving a unit out (a run, or a team's runs)
removes the judgments that no other unit contributed, and re-scores the unit's runs: the
drop says how an equally good run that was not pooled would have fared (Zobel 1998).
Other runs keep their scores on the full pool, so the rank change is the place the run
would have taken had it not been pooled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.leaderboard.board import run_teams
from pooling.leaderboard.errors import LeaderboardError
from pooling.measures.primary import single_column
from pooling.store.core import Store
from pooling.store.evaluate import is_diversity_measure, require_subtopics
from pooling.store.topic_selection import resolve_topic_selection

LEAVE_OUT = ("run", "team")
_SEP = "\x1f"  # joins query_id and doc_id into one key; never inside TREC ids


@dataclass
class PoolBias:
    """Leave-one-out results per run.

    table: run_id, team, unit (what was left out), pooled, judged_at_k (the leaderboard's
    Judged@k on the pool's qrels, mean over topics), unique_docs, unique_relevant, score,
    score_without, change, relative_change, rank, rank_without, rank_change (positive: the
    run drops).
    """

    qrels_version: str
    measure: str
    depth: int | None
    leave_out: str
    judged_depth: int
    query_ids: list[str]
    pool_size: int
    judged_in_pool: int
    table: pa.Table

    def summary(self, pooled: bool = True) -> dict[str, Any]:
        """Mean and worst change over the pooled (or unpooled) runs; worst = largest loss."""
        rows = [r for r in self.table.to_pylist() if bool(r["pooled"]) == pooled]
        change = np.array([r["change"] for r in rows], dtype=np.float64)
        relative = np.array([r["relative_change"] for r in rows], dtype=np.float64)
        rank = np.array([r["rank_change"] for r in rows], dtype=np.float64)
        if not rows:
            return {"runs": 0}
        return {
            "runs": len(rows),
            "mean_change": float(np.nanmean(change)),
            "worst_change": float(np.nanmin(change)),
            "mean_relative_change": float(np.nanmean(relative)),
            "worst_relative_change": float(np.nanmin(relative)),
            "max_rank_drop": int(np.nanmax(rank)),
            "worst_run": rows[int(np.nanargmin(relative))]["run_id"],
        }


def ranked_documents(
    store: Store, run_ids: list[str], depth: int | None = None, topics: list[str] | None = None
) -> pa.Table:
    """Each run's top `depth` documents per topic: run_id, query_id, doc_id, rank, key.

    rank follows trec_eval's order (score descending, then doc_id descending), the order
    `rankings_by_topic` and the depth strategy pool in; key joins query_id and doc_id.
    """
    table = store.arrow(
        "ranked documents",
        # Step 1: number each run's documents per topic in trec_eval order.
        # Step 2: keep the top `depth` (all when depth is NULL) of the chosen runs and topics.
        "SELECT run_id, query_id, doc_id, rank FROM ("
        "  SELECT run_id, query_id, doc_id, row_number() OVER ("
        "    PARTITION BY run_id, query_id ORDER BY score DESC, doc_id DESC) AS rank"
        "  FROM run_results WHERE run_id IN (SELECT UNNEST(?::VARCHAR[]))"
        "  AND (?::VARCHAR[] IS NULL OR query_id IN (SELECT UNNEST(?::VARCHAR[])))"
        ") WHERE ?::BIGINT IS NULL OR rank <= ?::BIGINT",
        [run_ids, topics, topics, depth, depth],
    )
    key = pc.binary_join_element_wise(table["query_id"], table["doc_id"], _SEP)
    return table.append_column("key", key)


def pool_bias(
    store: Store,
    *,
    qrels: str | None = None,
    measure: str = "map",
    depth: int | None = None,
    leave_out: str = "run",
    pooled: str | list[str] = "pooled",
    topics: str | list[str] | None = None,
    missing_topics: str = "zero",
    relevance_level: int = 1,
    max_docs: int | None = None,
    judged_depth: int | None = None,
) -> PoolBias:
    """Leave-one-run-out (leave_out="run") or leave-one-team-out ("team") re-evaluation.

    pooled: the runs that built the pool — "pooled" (runs marked pooled; all when none is),
    "all", or a list; the others are scored on the pool but contributed nothing to it.
    judged_depth: k of judged@k per run (default: depth, else 10).
    """
    from pooling.judging.rounds import choose_runs

    if leave_out not in LEAVE_OUT:
        raise LeaderboardError(f"leave_out must be run or team, not {leave_out!r}")
    if depth is not None and depth < 1:
        raise LeaderboardError(f"pool depth must be at least 1 (got {depth})")
    column = single_column(measure)
    version = store.resolve_qrels(qrels)
    run_ids = store.run_ids()
    contributors = choose_runs(store, pooled)
    teams = run_teams(store)
    unit_of = {r: (teams.get(r) or r) if leave_out == "team" else r for r in run_ids}
    topic_list = resolve_topic_selection(store, topics)
    k_judged = judged_depth or depth or 10

    ranked = ranked_documents(store, run_ids, depth, topic_list)
    is_contributor = pc.is_in(ranked["run_id"], pa.array(contributors, pa.string()))
    in_depth = is_contributor if depth is None else pc.and_(
        is_contributor, pc.less_equal(ranked["rank"], depth))
    contributions = ranked.filter(in_depth).select(["run_id", "key"])
    contributions = contributions.append_column("unit", pa.array(
        [unit_of[r] for r in contributions["run_id"].to_pylist()], pa.string()))
    owners = _unique_owners(contributions)
    pool_keys = pc.unique(contributions["key"])

    qrels_table = store.qrels_table(version)
    if topic_list is not None:
        qrels_table = qrels_table.filter(pc.is_in(qrels_table["query_id"], pa.array(topic_list)))
    qkeys = pc.binary_join_element_wise(qrels_table["query_id"], qrels_table["doc_id"], _SEP)
    in_pool = pc.is_in(qkeys, pool_keys)
    base = qrels_table if depth is None else qrels_table.filter(in_pool)
    base_keys = qkeys if depth is None else qkeys.filter(in_pool)
    if base.num_rows == 0:
        raise LeaderboardError("no judged document lies in the pool; check --depth and --topics")
    relevant_keys = base_keys.filter(pc.greater_equal(base["relevance"], relevance_level))
    base_topics = set(base["query_id"].to_pylist())
    eval_topics = sorted(base_topics) if topic_list is None else [q for q in topic_list
                                                                  if q in base_topics]
    tables = {r: store.run_table(r) for r in run_ids}
    subtopics = _subtopic_rows(store, version, base_keys) if is_diversity_measure(measure) else None

    def summaries(qrels_rows: pa.Table, which: list[str],
                  names: list[str]) -> dict[str, dict[str, Any]]:
        from pooling.evaluation import evaluate
        from pooling.evaluation.trec_input import TrecRun

        runs = [TrecRun(tables[r].append_column("tag", pa.array([r] * tables[r].num_rows, pa.string())),
                        r, r) for r in which]
        result = evaluate(qrels_rows, runs, names, missing_topics=missing_topics,
                          relevance_level=relevance_level, max_docs=max_docs, topics=eval_topics)
        return {run.run_id: run.summary for run in result.runs}

    def score(qrels_rows: pa.Table, which: list[str]) -> dict[str, float]:
        return {r: float(v[column]) for r, v in summaries(qrels_rows, which, [measure]).items()}

    # judged@k is the leaderboard's Judged@k (trec_eval's order, which is the pool's) on the
    # pool's qrels: a run the judged depth-k pool covers scores 1 for every k <= depth.
    judged_column = f"Judged@{k_judged}"
    full = summaries(base if subtopics is None else subtopics[0], run_ids,
                     [measure, judged_column])
    base_scores = {r: float(v[column]) for r, v in full.items()}
    judged_at_k = {r: float(v[judged_column]) for r, v in full.items()}
    new_scores: dict[str, float] = {}
    for unit in sorted({unit_of[r] for r in contributors}):
        members = [r for r in contributors if unit_of[r] == unit]
        removed = owners["key"].filter(pc.equal(owners["unit"], unit))
        gone = pc.is_in(base_keys, removed)
        if not pc.any(gone).as_py():
            new_scores.update({r: base_scores[r] for r in members})
            continue
        # Removed judgments become "pooled, not judged" (-1) rather than disappearing, so a
        # topic whose every judgment came from this unit stays in the average (scoring 0).
        # A diversity measure reads the subtopic rows: the unit's documents then relevant to
        # no subtopic (grade 0), the topic kept the same way.
        if subtopics is None:
            reduced = base.set_column(base.schema.get_field_index("relevance"), "relevance",
                                      pc.if_else(gone, pa.scalar(-1, pa.int64()),
                                                 base["relevance"]))
        else:
            rows, keys = subtopics
            reduced = rows.set_column(rows.schema.get_field_index("relevance"), "relevance",
                                      pc.if_else(pc.is_in(keys, removed),
                                                 pa.scalar(0, pa.int64()), rows["relevance"]))
        new_scores.update(score(reduced, members))

    # Per run: its unique contributions that are judged / relevant.
    owner = dict(zip(owners["key"].to_pylist(), owners["unit"].to_pylist(), strict=True))
    unique_docs = dict.fromkeys(run_ids, 0)
    unique_rel = dict.fromkeys(run_ids, 0)
    judged = pc.is_in(contributions["key"], base_keys).to_pylist()
    relevant = pc.is_in(contributions["key"], relevant_keys).to_pylist()
    for r, key, j, rel in zip(contributions["run_id"].to_pylist(), contributions["key"].to_pylist(),
                              judged, relevant, strict=True):
        if j and owner.get(key) == unit_of[r]:
            unique_docs[r] += 1
            unique_rel[r] += rel

    rows: dict[str, list[Any]] = {c: [] for c in (
        "run_id", "team", "unit", "pooled", "judged_at_k", "unique_docs", "unique_relevant",
        "score", "score_without", "change", "relative_change", "rank", "rank_without",
        "rank_change")}
    contributor_set = set(contributors)
    for r in sorted(run_ids, key=lambda r: (-base_scores[r], r)):
        unit = unit_of[r]
        before = base_scores[r]
        after = new_scores.get(r, before)
        # The unit's other runs are re-scored too; everyone else keeps the full-pool score.
        rivals = [new_scores.get(o, base_scores[o]) if unit_of[o] == unit else base_scores[o]
                  for o in run_ids if o != r]
        rank = 1 + sum(base_scores[o] > before for o in run_ids if o != r)
        rank_without = 1 + sum(v > after for v in rivals)
        rows["run_id"].append(r)
        rows["team"].append(teams.get(r))
        rows["unit"].append(unit)
        rows["pooled"].append(r in contributor_set)
        rows["judged_at_k"].append(judged_at_k[r])
        rows["unique_docs"].append(unique_docs[r])
        rows["unique_relevant"].append(unique_rel[r])
        rows["score"].append(before)
        rows["score_without"].append(after)
        rows["change"].append(after - before)
        rows["relative_change"].append((after - before) / before if before else float("nan"))
        rows["rank"].append(rank)
        rows["rank_without"].append(rank_without)
        rows["rank_change"].append(rank_without - rank)
    return PoolBias(
        qrels_version=version, measure=column, depth=depth, leave_out=leave_out,
        judged_depth=k_judged, query_ids=eval_topics, pool_size=len(pool_keys),
        judged_in_pool=base.num_rows, table=pa.table(rows),
    )


def _subtopic_rows(store: Store, version: str,
                   base_keys: pa.ChunkedArray) -> tuple[pa.Table, pa.ChunkedArray]:
    """A subtopic version's rows for the judged pairs in play (the plain rows kept), with
    their (topic, document) keys; a version without subtopics is refused, naming those with."""
    from pooling.store.qrels import subtopic_qrels_table

    require_subtopics(store, version)
    rows = subtopic_qrels_table(store, version)
    keys = pc.binary_join_element_wise(rows["query_id"], rows["doc_id"], _SEP)
    keep = pc.is_in(keys, pc.unique(base_keys))
    rows = rows.filter(keep)
    return rows.set_column(rows.schema.get_field_index("relevance"), "relevance",
                           pc.cast(rows["relevance"], pa.int64())), keys.filter(keep)


def _unique_owners(contributions: pa.Table) -> pa.Table:
    """key, unit: the keys exactly one unit contributed, with that unit."""
    if contributions.num_rows == 0:
        return pa.table({"key": pa.array([], pa.string()), "unit": pa.array([], pa.string())})
    pairs = contributions.group_by(["key", "unit"]).aggregate([])
    counted = pairs.group_by("key").aggregate([("unit", "count"), ("unit", "min")])
    single = counted.filter(pc.equal(counted["unit_count"], 1))
    return pa.table({"key": single["key"], "unit": single["unit_min"]})
