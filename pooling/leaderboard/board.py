"""`leaderboard`: stored runs ranked by a measure, with intervals, pairwise tests and groups.

Values come from `evaluate_store` (trec_eval-exact, cached in the store). Each run gets the
mean of every measure, a t and a bootstrap interval, its topic count, Judged@k, and a rank
in which statistically indistinguishable runs tie; every pair of runs is tested on the
per-topic scores of the primary measure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from pooling.leaderboard import stats
from pooling.leaderboard.errors import LeaderboardError
from pooling.measures.primary import ranked_measures
from pooling.store.core import Store
from pooling.store.topic_selection import resolve_topic_selection
from pooling.terminal.progress import Progress

DEFAULT_MEASURES = ("map", "P_10", "ndcg_cut_10")


@dataclass
class Leaderboard:
    """A ranked table of runs plus the pairwise tests behind its tied ranks.

    table: one row per run, best first — run_id, team (from the runs' --meta; null if none),
    one column per measure (canonical names, in the order given; a primary not among them first),
    then per measure `<m>_t_low`, `<m>_t_high`, `<m>_boot_low`, `<m>_boot_high`, then
    `Judged@k`, n_topics, rank, group, pooled, flag. rank is 1 + the number of runs
    significantly better (kept non-decreasing down the table); runs sharing a letter in
    group are not significantly different.
    pairs: run_a, run_b, diff (a − b on the primary measure), statistic, p_value,
    p_adjusted, significant, d_z, es_e, draws (permutations drawn; null for the t-test).
    scores: measure -> float64[n_topics, n_runs], topics `query_ids`, runs `run_ids`.
    plan: the permutation count and the smallest corrected p it allows (None for t).
    """

    qrels_version: str
    measures: list[str]
    primary: str
    judged_column: str
    test: str
    correction: str
    alpha: float
    confidence: float
    options: dict[str, Any]
    run_ids: list[str]
    query_ids: list[str]
    scores: dict[str, np.ndarray]
    table: pa.Table
    pairs: pa.Table
    significant: np.ndarray = field(repr=False)
    plan: stats.PermutationPlan | None = None
    basis: str = "qrels"  # what `qrels_version` names: a qrels version, or assignments

    def means(self, measure: str | None = None) -> dict[str, float]:
        """run_id -> mean of a measure (default: the primary one)."""
        column = self.table[measure or self.primary].to_pylist()
        return dict(zip(self.table["run_id"].to_pylist(), column, strict=True))

    def p_matrix(self) -> np.ndarray:
        """float64[n_runs, n_runs] adjusted p-values in `run_ids` order (NaN on the diagonal)."""
        m = len(self.run_ids)
        out = np.full((m, m), np.nan)
        pos = {r: k for k, r in enumerate(self.run_ids)}
        for a, b, p in zip(self.pairs["run_a"].to_pylist(), self.pairs["run_b"].to_pylist(),
                           self.pairs["p_adjusted"].to_pylist(), strict=True):
            out[pos[a], pos[b]] = out[pos[b], pos[a]] = p
        return out


def leaderboard(
    store: Store | str | os.PathLike[str],
    *,
    qrels: str | None = None,
    measures: list[str] | tuple[str, ...] = DEFAULT_MEASURES,
    primary: str | None = None,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    topics: str | list[str] | None = None,
    missing_topics: str = "zero",
    relevance_level: int = 1,
    max_docs: int | None = None,
    runs: list[str] | None = None,
    confidence: float = 0.95,
    permutations: int | None = None,
    resamples: int = stats.DEFAULT_PERMUTATIONS,
    seed: int = 0,
    judged_depth: int = 10,
    min_judged: float = 0.9,
    progress: Progress | None = None,
) -> Leaderboard:
    """Rank stored runs on a qrels version (default: the store's default) by the primary measure.

    primary defaults to the first measure as given (`pooling.measures.primary`); one not
    among measures is added to them, first. correction defaults to holm for the t and
    randomization tests and to none for Tukey HSD, which controls the family-wise error
    itself. missing_topics: "zero" (trec_eval -c) or "skip" (only shared topics; the tests
    then use the topics every run shares). Runs whose Judged@k is below min_judged are
    flagged: their scores rest on unjudged documents counted as non-relevant. store may be
    an open Store or a store file's path. permutations: the randomization or Tukey test's
    count (default: chosen from the number of pairs and alpha, see `stats.permutation_plan`;
    a count too small to reach alpha after correction is refused). resamples: bootstrap.
    progress hears of each run scored (runs already in the store's cache are not).
    """
    if not isinstance(store, Store):
        with Store(store) as opened:
            return leaderboard(
                opened, qrels=qrels, measures=measures, primary=primary, test=test,
                correction=correction, alpha=alpha, topics=topics, missing_topics=missing_topics,
                relevance_level=relevance_level, max_docs=max_docs, runs=runs,
                confidence=confidence, permutations=permutations, resamples=resamples,
                seed=seed, judged_depth=judged_depth, min_judged=min_judged, progress=progress,
            )
    from pooling.store.evaluate import evaluate_store

    correction = check_options(test, correction, alpha, confidence, missing_topics)
    if resamples < 1:
        raise LeaderboardError(f"resamples must be at least 1 (got {resamples})")
    # Refuse a permutation count that cannot reach alpha before evaluating anything.
    n_runs = len(runs) if runs else len(store.run_ids())
    stats.permutation_plan(test, n_runs * (n_runs - 1) // 2, alpha=alpha, correction=correction,
                           permutations=permutations)
    ranked = ranked_measures(measures, primary)
    columns, primary_column = ranked.columns, ranked.primary
    judged = f"Judged@{judged_depth}"
    topic_list = resolve_topic_selection(store, topics)
    result = evaluate_store(
        store, qrels=qrels, runs=runs, measures=list(dict.fromkeys([*columns, judged])),
        missing_topics=missing_topics, relevance_level=relevance_level, max_docs=max_docs,
        topics=topic_list, progress=progress,
    )
    return ranked_board(
        result.per_query, result.means, version=result.qrels_version, options=result.options,
        columns=columns, primary_column=primary_column, judged=judged, test=test,
        correction=correction, alpha=alpha, confidence=confidence, permutations=permutations,
        resamples=resamples, seed=seed, min_judged=min_judged, teams=run_teams(store),
        pooled=_pooled(store))


def ranked_board(
    per_query: pa.Table, means_table: pa.Table, *, version: str, options: dict[str, Any],
    columns: list[str], primary_column: str, judged: str, test: str, correction: str,
    alpha: float, confidence: float, permutations: int | None, resamples: int, seed: int,
    min_judged: float, teams: dict[str, str | None], pooled: dict[str, bool | None],
    basis: str = "qrels",
) -> Leaderboard:
    """The board from per-topic values and means (tidy: run_id, query_id, measure, value):
    the one ranking step of every leaderboard, whatever scored the runs (`leaderboard` on a
    qrels version, `pooling.leaderboard.answers` on an assignment version). `judged`: the
    column saying how much of each run's scoring rests on graded items (flagged below
    `min_judged`)."""
    run_ids, per_run = _per_run_values(per_query)
    if len(run_ids) < 2:
        raise LeaderboardError("a leaderboard needs at least two runs; import more runs")
    means = _means(means_table)
    # Best first by the primary measure, then by run_id; pairs follow this order, so in
    # every pair run_a is the better-placed run.
    run_ids = sorted(run_ids, key=lambda r: (-means[(r, primary_column)], r))
    query_ids = sorted(set.intersection(*(set(per_run[(r, primary_column)]) for r in run_ids)))
    if len(query_ids) < 2:
        raise LeaderboardError(
            f"the runs share {len(query_ids)} topic(s); pairwise tests need at least two"
        )
    scores = {m: _matrix(per_run, run_ids, m, query_ids) for m in dict.fromkeys([*columns, judged])}
    tests = stats.pair_tests(scores[primary_column], test, permutations=permutations, seed=seed,
                             alpha=alpha, correction=correction)
    adjusted = stats.adjust_p_values(tests.p_value, correction)
    significant_pairs = adjusted < alpha
    significant = stats.significance_matrix(len(run_ids), tests.i, tests.j, significant_pairs)
    primary_means = np.array([means[(r, primary_column)] for r in run_ids])
    rows: dict[str, list[Any]] = {"run_id": run_ids, "team": [teams.get(r) for r in run_ids]}
    for m in columns:
        rows[m] = [means[(r, m)] for r in run_ids]
    for m in columns:
        t_low, t_high, b_low, b_high = _intervals(per_run, run_ids, m, confidence,
                                                  resamples, seed)
        rows[f"{m}_t_low"], rows[f"{m}_t_high"] = t_low.tolist(), t_high.tolist()
        rows[f"{m}_boot_low"], rows[f"{m}_boot_high"] = b_low.tolist(), b_high.tolist()
    rows[judged] = [means[(r, judged)] for r in run_ids]
    rows["n_topics"] = [len(per_run[(r, primary_column)]) for r in run_ids]
    # A run never ranks above one placed above it (the raw count can dip for a noisy run).
    rows["rank"] = np.maximum.accumulate(stats.tied_ranks(primary_means, significant)).tolist()
    rows["group"] = stats.letter_groups(primary_means, significant)
    rows["pooled"] = [pooled.get(r) for r in run_ids]
    rows["flag"] = [f"{judged} below {min_judged:g}" if v < min_judged else ""
                    for v in rows[judged]]
    pairs = pa.table({
        "run_a": [run_ids[k] for k in tests.i],
        "run_b": [run_ids[k] for k in tests.j],
        "diff": tests.diff,
        "statistic": tests.statistic,
        "p_value": tests.p_value,
        "p_adjusted": adjusted,
        "significant": significant_pairs,
        "d_z": tests.d_z,
        "es_e": tests.es_e,
        "draws": pa.nulls(len(tests.i), pa.int64()) if tests.draws is None
        else pa.array(tests.draws, type=pa.int64()),
    })
    return Leaderboard(
        qrels_version=version,
        measures=columns,
        primary=primary_column,
        judged_column=judged,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        options={**options, "seed": seed,
                 "permutations": tests.plan.count if tests.plan else None,
                 "resamples": resamples, "min_judged": min_judged},
        run_ids=run_ids,
        query_ids=query_ids,
        scores=scores,
        table=pa.table(rows),
        pairs=pairs,
        significant=significant,
        plan=tests.plan,
        basis=basis,
    )


def check_options(test: str, correction: str | None, alpha: float, confidence: float,
                  missing_topics: str) -> str:
    """The correction a board uses (holm, or none for Tukey HSD, when not given), after
    refusing a test, correction, alpha, confidence or missing-topics rule it cannot take."""
    if test not in stats.TESTS:
        raise LeaderboardError(f"unknown test {test!r}; choose one of {', '.join(stats.TESTS)}")
    if correction is None:
        correction = "none" if test == "tukey" else "holm"
    if correction not in stats.CORRECTIONS:
        raise LeaderboardError(
            f"unknown correction {correction!r}; choose one of {', '.join(stats.CORRECTIONS)}"
        )
    if test == "tukey" and correction != "none":
        raise LeaderboardError(
            "Tukey HSD already controls the family-wise error rate; use --correction none"
        )
    if not 0 < alpha < 1:
        raise LeaderboardError(f"alpha must lie between 0 and 1 (got {alpha})")
    if not 0 < confidence < 1:
        raise LeaderboardError(f"confidence must lie between 0 and 1 (got {confidence})")
    if missing_topics not in ("zero", "skip"):
        raise LeaderboardError(
            f"missing_topics must be 'zero' (-c) or 'skip' (--shared-topics), not {missing_topics!r}"
        )
    return correction


def _per_run_values(per_query: pa.Table):
    """run_ids and (run_id, measure) -> {query_id: value}."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    for r, q, m, v in zip(per_query["run_id"].to_pylist(), per_query["query_id"].to_pylist(),
                          per_query["measure"].to_pylist(), per_query["value"].to_pylist(),
                          strict=True):
        out.setdefault((r, m), {})[q] = v
    return sorted({r for r, _ in out}), out


def _means(means: pa.Table) -> dict[tuple[str, str], float]:
    return {(r, m): v for r, m, v in zip(means["run_id"].to_pylist(), means["measure"].to_pylist(),
                                         means["value"].to_pylist(), strict=True)}


def _matrix(per_run, run_ids: list[str], measure: str, query_ids: list[str]) -> np.ndarray:
    return np.array([[per_run[(r, measure)][q] for r in run_ids] for q in query_ids],
                    dtype=np.float64)


def _intervals(per_run, run_ids: list[str], measure: str, confidence: float, resamples: int,
               seed: int):
    """t and bootstrap intervals per run, each on the run's own topics.

    Runs with the same topics share one vectorised call (and so the same bootstrap resamples).
    """
    m = len(run_ids)
    out = [np.full(m, np.nan) for _ in range(4)]
    by_topics: dict[tuple[str, ...], list[int]] = {}
    for k, r in enumerate(run_ids):
        by_topics.setdefault(tuple(sorted(per_run[(r, measure)])), []).append(k)
    for topics, members in by_topics.items():
        if len(topics) < 2:
            continue
        matrix = _matrix(per_run, [run_ids[k] for k in members], measure, list(topics))
        t_low, t_high = stats.t_interval(matrix, confidence)
        b_low, b_high = stats.bootstrap_interval(matrix, confidence, resamples=resamples, seed=seed)
        for arr, values in zip(out, (t_low, t_high, b_low, b_high), strict=True):
            arr[members] = values
    return out


def run_teams(store: Store) -> dict[str, str | None]:
    """run_id -> its team (set by `import runs --meta`), None where no team was given."""
    return dict(store.sql("run teams", "SELECT run_id, team FROM runs").fetchall())


def _pooled(store: Store) -> dict[str, bool | None]:
    rows = store.sql("runs pooled", "SELECT run_id, pooled FROM runs").fetchall()
    return dict(rows)
