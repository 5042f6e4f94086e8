"""Leaderboards of answer runs: ranked by nugget recall from an assignment version, with
intervals and significance as every leaderboard has (`pooling.leaderboard.board`).

The runs' per-topic scores come from `pooling.nuggets.assignments.score_assignments`; the
column beside them, `Assigned`, is each run's mean share of its answers' (answer, nugget)
pairs the version grades, the answers' Judged@k: a nugget nobody assigned counts as not
supported, so a run well below 1 rests on pairs nobody judged and is flagged. A topic
without a nugget, or one the run did not answer, rests on nothing unjudged: its share is 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from pooling.evaluation.nuggets import nugget_measure_list
from pooling.leaderboard import stats
from pooling.leaderboard.board import Leaderboard, check_options, ranked_board, run_teams
from pooling.leaderboard.errors import LeaderboardError
from pooling.nuggets.assignments import assigned_shares, get_assignment_version, score_assignments
from pooling.store.core import Store

DEFAULT_MEASURES = ("all", "vital", "strict_all", "strict_vital")
ASSIGNED = "Assigned"


def answer_leaderboard(
    store: Store, assignments: str, *, measures: Sequence[str] = DEFAULT_MEASURES,
    primary: str | None = None, test: str = "t", correction: str | None = None,
    alpha: float = 0.05, complete: bool = True, runs: Sequence[str] | None = None,
    confidence: float = 0.95, permutations: int | None = None,
    resamples: int = stats.DEFAULT_PERMUTATIONS, seed: int = 0, min_assigned: float = 0.9,
) -> Leaderboard:
    """Rank answer runs on assignment version `assignments` by `primary` (default: the first
    measure). `complete` (default, as a leaderboard's topics are the campaign's): a topic a
    run did not answer scores 0; else the runs are compared on the topics all answered."""
    columns = list(dict.fromkeys(m for name in measures for m in nugget_measure_list([name])))
    primary_column = nugget_measure_list([primary])[0] if primary else columns[0]
    if primary_column not in columns:
        columns = [primary_column, *columns]
    correction = check_options(test, correction, alpha, confidence, "zero" if complete else "skip")
    version = get_assignment_version(store, assignments)
    chosen = list(runs) if runs else None
    n_runs = len(chosen or version.params.get("answer_runs") or [])
    stats.permutation_plan(test, n_runs * (n_runs - 1) // 2, alpha=alpha, correction=correction,
                           permutations=permutations)
    result = score_assignments(store, assignments, runs=chosen, measures=columns, complete=complete)
    shares = assigned_shares(store, assignments, runs=chosen)
    per_query = pa.concat_tables([result.per_query, _assigned_rows(result, shares)])
    means = pa.concat_tables([result.means, _assigned_means(result, shares)])
    if len(result.runs) < 2:
        raise LeaderboardError("a leaderboard needs at least two answer runs")
    return ranked_board(
        per_query, means, version=assignments, basis="assignments",
        options={"missing_topics": "zero" if complete else "skip",
                 "nugget_version": version.nugget_version},
        columns=columns, primary_column=primary_column, judged=ASSIGNED, test=test,
        correction=correction, alpha=alpha, confidence=confidence, permutations=permutations,
        resamples=resamples, seed=seed, min_judged=min_assigned, teams=_teams(store),
        pooled={})


def _assigned_rows(result, shares: dict[tuple[str, str], float]) -> pa.Table:
    rows = [(run.run_id, q, shares.get((run.run_id, q), 1.0))
            for run in result.runs for q in run.query_ids]
    return pa.table({"run_id": pa.array([r[0] for r in rows], pa.string()),
                     "query_id": pa.array([r[1] for r in rows], pa.string()),
                     "measure": pa.array([ASSIGNED] * len(rows), pa.string()),
                     "value": pa.array([r[2] for r in rows], pa.float64())})


def _assigned_means(result, shares: dict[tuple[str, str], float]) -> pa.Table:
    rows = []
    for run in result.runs:
        values = [shares.get((run.run_id, q), 1.0) for q in run.query_ids]
        rows.append((run.run_id, sum(values) / len(values) if values else 0.0))
    return pa.table({"run_id": pa.array([r[0] for r in rows], pa.string()),
                     "measure": pa.array([ASSIGNED] * len(rows), pa.string()),
                     "value": pa.array([r[1] for r in rows], pa.float64())})


def _teams(store: Store) -> dict[str, str | None]:
    """The answer runs' teams (`pooling import answers --team`), else their ranked runs'."""
    teams = run_teams(store)
    teams.update(dict(store.sql("answer teams", "SELECT run_id, team FROM answer_runs "
                                "WHERE team IS NOT NULL").fetchall()))
    return teams
