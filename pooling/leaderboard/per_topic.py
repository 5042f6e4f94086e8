"""Per-topic reports as NIST sends them to participants: each run beside best/median/worst.

For every topic and measure, the best, median and worst score over *all* stored runs are
set beside the run's own score, so a participant sees where their run stands topic by topic.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pooling.leaderboard.board import DEFAULT_MEASURES
from pooling.leaderboard.errors import LeaderboardError
from pooling.measures.primary import ranked_measures
from pooling.store.core import Store
from pooling.store.topic_selection import resolve_topic_selection, topic_key


def topic_report(
    store: Store,
    *,
    qrels: str | None = None,
    measures: list[str] | tuple[str, ...] = DEFAULT_MEASURES,
    primary: str | None = None,
    runs: list[str] | None = None,
    topics: str | list[str] | None = None,
    missing_topics: str = "zero",
    relevance_level: int = 1,
    max_docs: int | None = None,
) -> pa.Table:
    """Rows: run_id, query_id, measure, value, best, median, worst (over all stored runs).

    runs chooses whose rows are reported (default: every run); the statistics always use
    every stored run. Runs come best first by the primary measure's mean (default: the first
    measure as given, `pooling.measures.primary`), then by run_id; measures in the order given,
    the primary first; numeric topic ids sort numerically.
    """
    from pooling.store.evaluate import evaluate_store

    for r in runs or []:
        store.require_run(r)
    from pooling.store.sampled_qrels import is_sampled

    ranked = ranked_measures(measures, primary, sampled=is_sampled(store, qrels))
    result = evaluate_store(
        store, qrels=qrels, measures=ranked.columns, missing_topics=missing_topics,
        relevance_level=relevance_level, max_docs=max_docs,
        topics=resolve_topic_selection(store, topics),
    )
    per_query = result.per_query
    if per_query.num_rows == 0:
        raise LeaderboardError("no per-topic values to report; check --topics and --qrels")
    cols = per_query.to_pydict()
    by_cell: dict[tuple[str, str], list[float]] = {}
    for q, m, v in zip(cols["query_id"], cols["measure"], cols["value"], strict=True):
        by_cell.setdefault((q, m), []).append(v)
    summary = {key: (max(vs), float(np.median(vs)), min(vs)) for key, vs in by_cell.items()}
    wanted = set(runs) if runs else None
    order = {m: k for k, m in enumerate(ranked.columns)}
    means = {r: v for r, m, v in zip(result.means["run_id"].to_pylist(),
                                     result.means["measure"].to_pylist(),
                                     result.means["value"].to_pylist(), strict=True)
             if m == ranked.primary}
    place = {r: k for k, r in enumerate(sorted(means, key=lambda r: (-means[r], r)))}
    rows = sorted(
        (r, q, m, v) for r, q, m, v in zip(cols["run_id"], cols["query_id"], cols["measure"],
                                          cols["value"], strict=True)
        if wanted is None or r in wanted
    )
    rows.sort(key=lambda t: (place.get(t[0], len(place)), t[0], topic_key(t[1]),
                             order.get(t[2], len(order))))
    return pa.table({
        "run_id": [t[0] for t in rows],
        "query_id": [t[1] for t in rows],
        "measure": [t[2] for t in rows],
        "value": pa.array([t[3] for t in rows], pa.float64()),
        "best": pa.array([summary[(t[1], t[2])][0] for t in rows], pa.float64()),
        "median": pa.array([summary[(t[1], t[2])][1] for t in rows], pa.float64()),
        "worst": pa.array([summary[(t[1], t[2])][2] for t in rows], pa.float64()),
    })
