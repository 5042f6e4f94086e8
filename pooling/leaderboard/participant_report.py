"""Participant reports: what a campaign sends each run's owner, gathered from the store.

One `RunReport` per run holds what the TREC appendix shows: the run's summary measures with
their intervals, its per-topic scores beside the best, median and worst of all stored runs,
where it stands on the leaderboard with the pairwise tests against every other run, and how
many of its top documents were judged. Nothing is computed here that the leaderboard does
not already compute: the values come from `leaderboard` (means, intervals, tests),
`topic_report` (per-topic best/median/worst) and `evaluate_store` (Judged@k), so a report's
numbers are those `pooling evaluate` and `pooling leaderboard` print.

On a sampled qrels version the summary holds the inferred measures' estimates with their
intervals (`sampled_leaderboard`), no pairwise test is made, and the report says the values
are estimates from a sample of that size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from pooling.leaderboard.board import DEFAULT_MEASURES, leaderboard
from pooling.leaderboard.per_topic import topic_report
from pooling.leaderboard.render import RANK_NOTE, caption
from pooling.store.core import Store
from pooling.terminal.progress import Progress

# The depths of Judged@k each report shows: the first page, and the usual pool depth.
JUDGED_DEPTHS = (10, 100)


@dataclass(frozen=True)
class Summary:
    """One measure of the run: its mean (or estimate) and intervals (t and bootstrap on plain
    qrels; the estimator's normal interval on sampled qrels, as t_low/t_high)."""

    measure: str
    value: float
    low: float
    high: float
    boot_low: float | None = None
    boot_high: float | None = None


@dataclass(frozen=True)
class TopicScore:
    """The run's score on one topic beside the best, median and worst of all stored runs."""

    query_id: str
    value: float
    best: float
    median: float
    worst: float


@dataclass(frozen=True)
class Standing:
    """Another run on the leaderboard, seen from the reported run: its mean on the primary
    measure, the difference (this run − other), the adjusted p and whether it is significant.
    p is None on sampled qrels, where no test is made."""

    run_id: str
    rank: int
    value: float
    diff: float
    p_adjusted: float | None
    significant: bool


@dataclass
class RunReport:
    """Everything one participant's report shows about one run."""

    run_id: str
    qrels_version: str
    primary: str
    summary: list[Summary]
    topics: dict[str, list[TopicScore]]  # measure -> per-topic scores, topic order
    rank: int
    group: str
    n_runs: int
    standings: list[Standing]  # every run in leaderboard order, this one included
    judged: dict[int, float]  # k -> mean Judged@k over topics
    sampled: bool = False
    notes: list[str] = field(default_factory=list)
    team: str | None = None  # from the run's --meta at import; None if none was given

    @property
    def better(self) -> int:
        """Runs significantly better than this one."""
        return sum(1 for s in self.standings if s.significant and s.diff < 0)

    @property
    def worse(self) -> int:
        """Runs significantly worse than this one."""
        return sum(1 for s in self.standings if s.significant and s.diff > 0)


@dataclass
class ParticipantReports:
    """The reports of a campaign: one per run, in leaderboard order, and how they were made."""

    qrels_version: str
    primary: str
    description: str  # one line: qrels, topics, measure, test (or the sample)
    reports: list[RunReport]
    sampled: bool = False


def participant_reports(
    store: Store,
    *,
    qrels: str | None = None,
    measures: list[str] | tuple[str, ...] | None = None,
    primary: str | None = None,
    runs: list[str] | None = None,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    topics: str | list[str] | None = None,
    missing_topics: str = "zero",
    relevance_level: int = 1,
    seed: int = 0,
    resamples: int = 10_000,
    judged_depths: tuple[int, ...] = JUDGED_DEPTHS,
    progress: Progress | None = None,
) -> ParticipantReports:
    """The reports of `runs` (default: every stored run); every statistic (best, median,
    worst, ranks, tests) is over all stored runs. measures default to map, P_10 and
    ndcg_cut_10, or to infAP, infNDCG and statAP on a sampled qrels version; runs are ranked
    and tested by primary (default: the first measure given, `pooling.measures.primary`).
    progress hears of each run scored (or, on sampled qrels, estimated)."""
    from pooling.store.sampled_qrels import is_sampled

    version = store.resolve_qrels(qrels)
    for r in runs or []:
        store.require_run(r)
    if is_sampled(store, version):
        return _sampled_reports(store, version, measures, primary, runs, topics, seed,
                                judged_depths, progress)
    lb = leaderboard(
        store, qrels=version, measures=list(measures or DEFAULT_MEASURES), primary=primary,
        test=test,
        correction=correction, alpha=alpha, topics=topics, missing_topics=missing_topics,
        relevance_level=relevance_level, seed=seed, resamples=resamples,
        judged_depth=judged_depths[0] if judged_depths else 10, progress=progress,
    )
    per_topic = _per_topic(topic_report(
        store, qrels=version, measures=lb.measures, runs=runs, topics=topics,
        missing_topics=missing_topics, relevance_level=relevance_level))
    judged = _judged(store, version, judged_depths, dict(
        topics=lb.options["topics"], missing_topics=missing_topics,
        relevance_level=relevance_level))
    cols = lb.table.to_pydict()
    row_of = {r: k for k, r in enumerate(cols["run_id"])}
    tests = _tests(lb.pairs.to_pylist())
    teams = dict(zip(cols["run_id"], cols["team"], strict=True))
    reports = []
    for run_id in cols["run_id"]:
        if runs and run_id not in runs:
            continue
        k = row_of[run_id]
        summary = [Summary(m, cols[m][k], cols[f"{m}_t_low"][k], cols[f"{m}_t_high"][k],
                           cols[f"{m}_boot_low"][k], cols[f"{m}_boot_high"][k])
                   for m in lb.measures]
        standings = []
        for other in cols["run_id"]:
            j = row_of[other]
            diff = cols[lb.primary][k] - cols[lb.primary][j]
            p, significant = tests.get((run_id, other), (None, False))
            standings.append(Standing(other, cols["rank"][j], cols[lb.primary][j], diff, p,
                                      significant))
        flag = cols["flag"][k]
        reports.append(RunReport(
            run_id=run_id, qrels_version=lb.qrels_version, primary=lb.primary,
            summary=summary, topics=per_topic.get(run_id, {}), rank=cols["rank"][k],
            group=cols["group"][k], n_runs=len(cols["run_id"]), standings=standings,
            judged={d: judged[(run_id, d)] for d in judged_depths if (run_id, d) in judged},
            notes=[f"Flagged: {flag}; its scores rest on unjudged documents counted as "
                   "non-relevant."] if flag else [],
            team=teams[run_id],
        ))
    description = f"{caption(lb)}. {RANK_NOTE.capitalize()}."
    return ParticipantReports(lb.qrels_version, lb.primary, description, reports)


def _sampled_reports(store: Store, version: str, measures: list[str] | tuple[str, ...] | None,
                     primary: str | None, runs: list[str] | None, topics: str | list[str] | None, seed: int,
                     judged_depths: tuple[int, ...],
                     progress: Progress | None = None) -> ParticipantReports:
    """Reports on a sampled version: estimates with intervals, ordered by the first estimator,
    per-topic estimates beside the best, median and worst, and the sample's size."""
    from pooling.leaderboard.sampled import (
        DEFAULT_ESTIMATORS,
        sample_note,
        sampled_leaderboard,
    )

    lb = sampled_leaderboard(store, qrels=version, measures=list(measures or DEFAULT_ESTIMATORS),
                             primary=primary, topics=topics, seed=seed, progress=progress)
    per_topic = _per_topic(topic_report(store, qrels=version, measures=lb.measures, runs=runs,
                                        topics=topics, missing_topics="skip"))
    judged = _sampled_judged(store, version, judged_depths, topics)
    cols = lb.table.to_pydict()
    note = sample_note(lb) + "."
    teams = dict(zip(cols["run_id"], cols["team"], strict=True))
    reports = []
    for k, run_id in enumerate(cols["run_id"]):
        if runs and run_id not in runs:
            continue
        summary = [Summary(m, cols[m][k], cols[f"{m}_ci_low"][k], cols[f"{m}_ci_high"][k])
                   for m in lb.measures]
        standings = [Standing(other, cols["rank"][j], cols[lb.primary][j],
                              cols[lb.primary][k] - cols[lb.primary][j], None, False)
                     for j, other in enumerate(cols["run_id"])]
        reports.append(RunReport(
            run_id=run_id, qrels_version=version, primary=lb.primary, summary=summary,
            topics=per_topic.get(run_id, {}), rank=cols["rank"][k], group="",
            n_runs=len(cols["run_id"]), standings=standings,
            judged={d: judged[(run_id, d)] for d in judged_depths if (run_id, d) in judged},
            sampled=True, notes=[note], team=teams[run_id],
        ))
    description = (f"qrels {version} (sampled); {lb.sample.topics} topics; ordered by "
                   f"{lb.primary}. {note}")
    return ParticipantReports(version, lb.primary, description, reports, sampled=True)


def _per_topic(table: pa.Table) -> dict[str, dict[str, list[TopicScore]]]:
    """run_id -> measure -> per-topic scores, in `topic_report`'s topic order."""
    out: dict[str, dict[str, list[TopicScore]]] = {}
    cols = table.to_pydict()
    for r, q, m, v, b, md, w in zip(cols["run_id"], cols["query_id"], cols["measure"],
                                    cols["value"], cols["best"], cols["median"], cols["worst"],
                                    strict=True):
        out.setdefault(r, {}).setdefault(m, []).append(TopicScore(q, v, b, md, w))
    return out


def _tests(pairs: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[float, bool]]:
    """(run, other) -> (adjusted p, significant), both ways round."""
    out = {}
    for p in pairs:
        value = (p["p_adjusted"], bool(p["significant"]))
        out[(p["run_a"], p["run_b"])] = out[(p["run_b"], p["run_a"])] = value
    return out


def _judged(store: Store, version: str, depths: tuple[int, ...],
            options: dict[str, Any]) -> dict[tuple[str, int], float]:
    """(run_id, k) -> mean Judged@k, scored and cached as `pooling evaluate` scores it."""
    from pooling.store.evaluate import evaluate_store

    if not depths:
        return {}
    result = evaluate_store(store, qrels=version, measures=[f"Judged@{d}" for d in depths],
                            **options)
    return _judged_means(result.means, depths)


def _sampled_judged(store: Store, version: str, depths: tuple[int, ...],
                    topics: str | list[str] | None) -> dict[tuple[str, int], float]:
    """(run_id, k) -> mean Judged@k against the sample's judged pairs, on the topics each run
    shares with them (the inferred measures' own topic rule)."""
    from pooling.evaluation import evaluate
    from pooling.store.evaluate import stored_trec_run
    from pooling.store.topic_selection import resolve_topic_selection

    if not depths:
        return {}
    result = evaluate(store.qrels_table(version),
                      [stored_trec_run(store, r) for r in store.run_ids()],
                      [f"Judged@{d}" for d in depths], missing_topics="skip",
                      topics=resolve_topic_selection(store, topics))
    return _judged_means(result.means, depths)


def _judged_means(means: pa.Table, depths: tuple[int, ...]) -> dict[tuple[str, int], float]:
    by_name = {f"Judged@{d}": d for d in depths}
    return {(r, by_name[m]): v for r, m, v in zip(
        means["run_id"].to_pylist(), means["measure"].to_pylist(), means["value"].to_pylist(),
        strict=True) if m in by_name}
