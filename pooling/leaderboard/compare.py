"""Ranking comparisons: Kendall τ, τ_ap and Spearman ρ between leaderboards.

A leaderboard here is one system ordering: a measure on a qrels version, optionally with the
qrels cut down to a depth-k re-pool (the union of the pooled runs' top k) or to the pool of
a judging round. `compare_leaderboards` scores every run under each spec and correlates every
pair of specs; τ_ap takes the first of the two as the reference ordering and treats ties as
Urbano & Marrero's τ_AP_b, so two specs that order the runs identically, ties included, get 1.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pooling.agreement.rankings import kendall_tau, spearman_rho, tau_ap
from pooling.leaderboard.errors import LeaderboardError
from pooling.measures.primary import primary_first, single_column
from pooling.store.core import Store
from pooling.store.evaluate import is_diversity_measure, require_subtopics
from pooling.store.topic_selection import resolve_topic_selection

if TYPE_CHECKING:
    from pooling.judging.rounds import Round


@dataclass(frozen=True)
class BoardSpec:
    """One ordering of the runs: measure on qrels, optionally restricted to a pool."""

    measure: str
    qrels: str | None = None
    depth: int | None = None
    round: str | None = None

    @property
    def label(self) -> str:
        parts = [self.measure]
        if self.qrels:
            parts.append(f"qrels={self.qrels}")
        if self.depth:
            parts.append(f"depth={self.depth}")
        if self.round:
            parts.append(f"round={self.round}")
        return " ".join(parts)


@dataclass
class Comparison:
    """scores: label -> run_id -> mean. pairs: a, b, kendall_tau, tau_ap, spearman_rho,
    swaps (run pairs ordered differently), n_runs."""

    specs: list[BoardSpec]
    scores: dict[str, dict[str, float]]
    pairs: pa.Table


def board_specs(
    measures: list[str],
    qrels: list[str] | None = None,
    depths: list[int] | None = None,
    rounds: list[str] | None = None,
    primary: str | None = None,
) -> list[BoardSpec]:
    """Every combination of the values given: measures × qrels × (full, depths…, rounds…).

    The full qrels always come first, so `--depth 10` alone compares full with depth 10; the
    primary measure's boards come first (default: the first measure as given; one not among
    measures is added), so the primary on the full qrels is tau_ap's reference.
    """
    measures = primary_first(measures, primary)
    pools: list[tuple[int | None, str | None]] = [(None, None)]
    pools += [(d, None) for d in depths or []]
    pools += [(None, r) for r in rounds or []]
    specs = [BoardSpec(m, q, d, r) for m in measures for q in (qrels or [None]) for d, r in pools]
    labels = [s.label for s in specs]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise LeaderboardError(
            f"leaderboard {', '.join(repr(r) for r in repeated)} is given twice; each -m, "
            "--qrels, --depth and --round value once")
    if len(specs) < 2:
        raise LeaderboardError(
            "a comparison needs two leaderboards: give two measures (-m map -m P_10), two "
            "--qrels versions, or --depth/--round values"
        )
    return specs


def board_scores(
    store: Store,
    spec: BoardSpec,
    *,
    runs: list[str] | None = None,
    topics: list[str] | None = None,
    missing_topics: str = "zero",
    relevance_level: int = 1,
) -> dict[str, float]:
    """run_id -> mean of the spec's measure (cached in the store when no pool cut applies)."""
    from pooling.store.evaluate import evaluate_store

    column = single_column(spec.measure)
    if spec.depth is None and spec.round is None:
        result = evaluate_store(store, qrels=spec.qrels, runs=runs, measures=[spec.measure],
                                missing_topics=missing_topics, relevance_level=relevance_level,
                                topics=topics)
        return {r["run_id"]: r["value"] for r in result.means.to_pylist() if r["measure"] == column}
    from pooling.evaluation import evaluate
    from pooling.store.streams import StoredRuns

    qrels_table = restricted_qrels(store, spec.qrels, depth=spec.depth, round=spec.round,
                                   subtopics=is_diversity_measure(spec.measure))
    present = set(qrels_table["query_id"].to_pylist())
    eval_topics = [q for q in topics if q in present] if topics is not None else None
    run_ids = runs or store.run_ids()
    with StoredRuns(store, run_ids) as stored:
        result = evaluate(qrels_table, stored.streams, [spec.measure],
                          missing_topics=missing_topics, relevance_level=relevance_level,
                          topics=eval_topics)
    return {run.run_id: float(run.summary[column]) for run in result.runs}


def restricted_qrels(store: Store, qrels: str | None, *, depth: int | None = None,
                     round: str | None = None, subtopics: bool = False) -> pa.Table:
    """A qrels version cut to a depth-k re-pool of the pooled runs, or to a round's pool;
    with `subtopics`, its subtopic rows (for diversity measures) cut the same way."""
    from pooling.judging.rounds import choose_runs, get_round, pool_table
    from pooling.leaderboard.pool_bias import ranked_documents
    from pooling.store.qrels import subtopic_qrels_table

    if subtopics:
        require_subtopics(store, store.resolve_qrels(qrels))
    table = subtopic_qrels_table(store, qrels) if subtopics else store.qrels_table(qrels)
    if depth is None and round is None:
        return table
    if round is not None:
        pool = pool_table(store, round)
        if pool.num_rows == 0:
            raise LeaderboardError(_empty_pool(get_round(store, round)))
        pool_keys = pc.binary_join_element_wise(pool["query_id"], pool["doc_id"], "\x1f")
    else:
        pool_keys = ranked_documents(store, choose_runs(store, "pooled"), depth)["key"]
    keys = pc.binary_join_element_wise(table["query_id"], table["doc_id"], "\x1f")
    return table.filter(pc.is_in(keys, pc.unique(pool_keys)))


def _empty_pool(rnd: Round) -> str:
    """Why a round's pool cuts every qrels row, and what to do next."""
    if rnd.adaptive:
        return (f"round {rnd.round_id} is adaptive ({rnd.strategy}) and has chosen no document "
                "yet: its pool is the documents chosen as people or judges work it; judge some "
                "(pooling judge or pooling serve), or cut with --depth instead")
    return f"round {rnd.round_id} has an empty pool; nothing would be left of the qrels"


def compare_leaderboards(
    store: Store,
    specs: list[BoardSpec],
    *,
    runs: list[str] | None = None,
    topics: str | list[str] | None = None,
    missing_topics: str = "zero",
    relevance_level: int = 1,
) -> Comparison:
    """Score the runs under every spec and correlate each pair of orderings."""
    topic_list = resolve_topic_selection(store, topics)
    scores = {
        s.label: board_scores(store, s, runs=runs, topics=topic_list,
                              missing_topics=missing_topics, relevance_level=relevance_level)
        for s in specs
    }
    return Comparison(specs, scores, correlation_table(scores))


def correlation_table(scores: dict[str, dict[str, float]]) -> pa.Table:
    """Every pair of orderings: a, b, kendall_tau, tau_ap (a as reference), spearman_rho, swaps."""
    rows: dict[str, list] = {c: [] for c in ("a", "b", "kendall_tau", "tau_ap", "spearman_rho",
                                            "swaps", "n_runs")}
    for a, b in itertools.combinations(scores, 2):
        x, y = scores[a], scores[b]
        names = sorted(x)
        rows["a"].append(a)
        rows["b"].append(b)
        rows["kendall_tau"].append(kendall_tau(x, y))
        rows["tau_ap"].append(tau_ap(x, y))
        rows["spearman_rho"].append(spearman_rho(x, y))
        rows["swaps"].append(sum(
            (x[p] - x[q]) * (y[p] - y[q]) < 0 for p, q in itertools.combinations(names, 2)))
        rows["n_runs"].append(len(names))
    return pa.table(rows, schema=pa.schema([
        ("a", pa.string()), ("b", pa.string()), ("kendall_tau", pa.float64()),
        ("tau_ap", pa.float64()), ("spearman_rho", pa.float64()), ("swaps", pa.int64()),
        ("n_runs", pa.int64())]))
