"""Leaderboards on a sampled qrels version: each run's estimate with its confidence interval.

On sampled qrels a run's score is an estimate from a sample of judgments, not a value: the
board shows, per run and estimator (infAP = xinfAP, infNDCG, statAP), the mean over topics,
its normal interval from the estimator's variance (`pooling.evaluation.sampled_intervals`:
statAP's linearised variance, a stratified bootstrap of the judged documents for infAP and
infNDCG; topics held fixed), and says in every format how large the sample is: judged pairs
of pooled pairs, topics, and judged/pooled per stratum. Runs are ordered by the primary
estimate; the intervals show the sampling error only (`INTERVAL_SCOPE` says what they leave
out), and no pairwise test is made.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass

import pyarrow as pa

from pooling.evaluation.sampled_intervals import ESTIMATORS, sampled_estimates
from pooling.leaderboard.board import run_teams
from pooling.leaderboard.errors import LeaderboardError
from pooling.leaderboard.render import fmt, latex, markdown, table_csv
from pooling.measures.primary import ranked_measures
from pooling.store.core import Store
from pooling.store.evaluate import stored_trec_run
from pooling.store.sampled_qrels import SampleSize, sample_size, sampled_qrels_table
from pooling.store.topic_selection import resolve_topic_selection
from pooling.terminal.progress import Progress

DEFAULT_ESTIMATORS = ESTIMATORS  # infAP, infNDCG, statAP
# What a sampled interval does not cover. On a real campaign (CLEF eHealth 2018, 20% sampled)
# the estimators sat about 0.034 above the official MAP while the intervals were about
# +-0.016 wide: every interval missed the official value, though the ranking held (tau 0.954).
INTERVAL_SCOPE = (
    "An interval covers only the chance of which documents were drawn for judging: not the "
    "estimator's own bias (which can shift every run by more than an interval's width), nor "
    "the gap between the pool and complete judgments (documents outside the pool count as "
    "not relevant). Compare runs by them; do not read one as the range of the value that "
    "complete judgments would give.")
_NAMES = {"xinfAP": "infAP", "infAP": "infAP", "infNDCG": "infNDCG", "statAP": "statAP"}


@dataclass
class SampledLeaderboard:
    """Runs ranked by an estimate: table has run_id, team (from --meta; null if none), rank,
    then per estimator `<m>`, `<m>_ci_low`, `<m>_ci_high`, `<m>_variance`, then topics."""

    qrels_version: str
    measures: list[str]
    primary: str
    level: float
    resamples: int
    sample: SampleSize
    table: pa.Table


def sampled_leaderboard(
    store: Store | str | os.PathLike[str], *, qrels: str | None = None,
    measures: list[str] | tuple[str, ...] = DEFAULT_ESTIMATORS, primary: str | None = None,
    runs: list[str] | None = None, topics: str | list[str] | None = None,
    level: float = 0.95, resamples: int = 200, seed: int = 0, progress: Progress | None = None,
) -> SampledLeaderboard:
    """Rank stored runs on a sampled qrels version by an estimator (default: the first as
    given); progress hears of each run estimated."""
    if not isinstance(store, Store):
        with Store(store) as opened:
            return sampled_leaderboard(opened, qrels=qrels, measures=measures, primary=primary,
                                       runs=runs, topics=topics, level=level,
                                       resamples=resamples, seed=seed, progress=progress)
    unknown = [m for m in [*measures, *([primary] if primary else [])] if m not in _NAMES]
    if unknown:
        raise LeaderboardError(
            f"{', '.join(unknown)}: a sampled qrels version ranks by an estimator with a "
            f"variance; use -m infAP (xinfAP), infNDCG or statAP")
    if resamples < 2:
        raise LeaderboardError(f"resamples must be at least 2 (got {resamples})")
    ranked = ranked_measures(measures, primary, sampled=True)
    wanted, first = ranked.columns, ranked.primary
    version = store.resolve_qrels(qrels)
    table = sampled_qrels_table(store, version)
    topic_list = resolve_topic_selection(store, topics)
    if topic_list is not None:
        keep = set(topic_list)
        table = table.filter(pa.array([q in keep for q in table["query_id"].to_pylist()]))
    run_ids = runs or store.run_ids()
    if len(run_ids) < 2:
        raise LeaderboardError("a leaderboard needs at least two runs; import more runs")
    estimates = sampled_estimates(table, [stored_trec_run(store, r) for r in run_ids], wanted,
                                  level=level, n_bootstrap=resamples, seed=seed,
                                  progress=progress)
    values: dict[tuple[str, str], dict] = {
        (row["run_id"], row["measure"]): row for row in estimates.to_pylist()}
    scored = sorted({r for r, _ in values}, key=lambda r: (-values[(r, first)]["estimate"], r))
    teams = run_teams(store)
    rows: dict[str, list] = {"run_id": scored, "team": [teams.get(r) for r in scored],
                             "rank": list(range(1, len(scored) + 1))}
    for m in wanted:
        rows[m] = [values[(r, m)]["estimate"] for r in scored]
        rows[f"{m}_ci_low"] = [values[(r, m)]["ci_low"] for r in scored]
        rows[f"{m}_ci_high"] = [values[(r, m)]["ci_high"] for r in scored]
        rows[f"{m}_variance"] = [values[(r, m)]["variance"] for r in scored]
    rows["topics"] = [values[(r, first)]["topics"] for r in scored]
    return SampledLeaderboard(version, wanted, first, level, resamples,
                              sample_size(store, version), pa.table(rows))


def sample_note(lb: SampledLeaderboard) -> str:
    """What every rendering of the board says: these are estimates, from a sample this big,
    and what their intervals cover and what they do not."""
    return (f"Estimates from a sample, not values: qrels {lb.qrels_version} holds "
            f"{lb.sample.describe()}. Intervals: {lb.level:.0%} normal, from each estimator's "
            f"sampling variance (statAP linearised; infAP and infNDCG by a stratified bootstrap "
            f"of {lb.resamples} resamples), topics held fixed. {INTERVAL_SCOPE} Ranked by "
            f"{lb.primary}; no pairwise test is made")


def display_rows(lb: SampledLeaderboard) -> tuple[list[str], list[list[str]]]:
    """Headers and cells: rank, run, team, each estimate as `value [low, high]`, topics."""
    headers = ["rank", "run_id", "team", *(f"{m} [{lb.level:.0%} CI]" for m in lb.measures),
               "topics"]
    cols = lb.table.to_pydict()
    rows = []
    for k, run_id in enumerate(cols["run_id"]):
        cells = [str(cols["rank"][k]), run_id, cols["team"][k] or ""]
        for m in lb.measures:
            cells.append(f"{fmt(cols[m][k])} [{fmt(cols[f'{m}_ci_low'][k])}, "
                         f"{fmt(cols[f'{m}_ci_high'][k])}]")
        cells.append(str(cols["topics"][k]))
        rows.append(cells)
    return headers, rows


def render_sampled(lb: SampledLeaderboard, format: str) -> str:
    """The board as md, csv, latex or html text, each stating the sample it estimates from."""
    note = sample_note(lb)
    if format == "csv":
        n = lb.table.num_rows
        return table_csv(lb.table.append_column("judged_pairs", pa.array([lb.sample.judged] * n))
                         .append_column("pooled_pairs", pa.array([lb.sample.pooled] * n))
                         .append_column("sample", pa.array([note] * n)))
    headers, rows = display_rows(lb)
    if format == "md":
        return markdown(headers, rows) + f"\n{note}.\n"
    if format == "latex":
        return latex(headers, rows, note)
    if format == "html":
        return _html(lb, headers, rows, note)
    raise LeaderboardError(f"unknown format {format!r}; choose md, csv, latex or html")


def _html(lb: SampledLeaderboard, headers: list[str], rows: list[list[str]], note: str) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>\n" for row in rows)
    title = f"Sampled leaderboard — qrels {lb.qrels_version}"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{e(title)}</title><style>body{{font-family:sans-serif;margin:2em}}"
            "table{border-collapse:collapse}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;"
            "text-align:right}td:nth-child(2),th:nth-child(2),td:nth-child(3),th:nth-child(3)"
            "{text-align:left}"
            ".note{color:#555}</style></head><body>\n"
            f"<h1>{e(title)}</h1>\n<p class=\"note\" id=\"sample-note\">{e(note)}.</p>\n"
            f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>\n"
            "</body></html>\n")
