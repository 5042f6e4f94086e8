"""Evaluating stored runs against a stored qrels version, with results cached in the store.

Runs and qrels versions are immutable once stored, so a value computed for (run, qrels
version, options, measure column) never changes: it is computed once, kept in
`eval_results`, and read back after that. The topic policy used is part of the options and
so recorded with every value.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import PoolingError, StoreError
from pooling.evaluation import evaluate
from pooling.evaluation.qrels_index import QrelsIndex
from pooling.evaluation.results import RunEvaluation
from pooling.evaluation.sampled import load_sampled_qrels, rank_run, run_evaluation, score_run
from pooling.evaluation.trec_input import TrecRun
from pooling.measures import Kind, Measure, parse_measures
from pooling.measures.sampled_names import parse_sampled_measures
from pooling.store.core import Store, utcnow
from pooling.store.sampled_qrels import is_sampled
from pooling.store.streams import StoredRuns
from pooling.terminal.progress import NoProgress, Progress

# Values are written for this many runs at a time: few writes, and an interrupted evaluation
# of many runs keeps what it finished.
RUNS_PER_WRITE = 32


@dataclass
class StoreEvaluation:
    """Values of stored runs: per topic and means, plus the settings they were computed with.

    per_query: run_id, query_id, measure, value. means: run_id, measure, value.
    """

    qrels_version: str
    options: dict[str, Any]
    per_query: pa.Table
    means: pa.Table
    computed: list[str]  # runs evaluated now (the others came from the cache)
    measures: list[str]  # output columns, in trec_eval's order
    run_ids: list[str] = field(default_factory=list)  # the runs scored, in the order asked
    text_measures: list[str] = field(default_factory=list)  # asked for, but not values: runid, relstring


def resolve_topics(store: Store, topics: str | list[str] | None) -> list[str] | None:
    """A topic list, or the name of a stored topic subset, or a comma-separated list."""
    if topics is None or isinstance(topics, list):
        return topics
    rows = store.con.execute(
        "SELECT query_id FROM topic_subsets WHERE name = ? ORDER BY query_id", [topics]
    ).fetchall()
    if rows:
        return [r[0] for r in rows]
    return [t.strip() for t in topics.split(",") if t.strip()]


def evaluate_store(
    store: Store,
    *,
    qrels: str | None = None,
    runs: list[str] | None = None,
    measures: list[str] | tuple[str, ...] = ("official",),
    missing_topics: str = "zero",
    relevance_level: int = 1,
    max_docs: int | None = None,
    topics: str | list[str] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    partitions: str | None = None,
    collection_size: int | None = None,
    progress: Progress | None = None,
) -> StoreEvaluation:
    """Score stored runs (default: all) against a qrels version (default: the store's default).

    Measures that need the collection size (Fallout@k, set_fallout, a utility with d != 0)
    take `collection_size`, else the number of documents in the store.

    Text measures (runid, relstring) are accepted and listed in `text_measures`; only
    numeric values are kept and returned. engine "ray" scores the runs not cached yet on a
    Ray cluster, from Parquet files exported to `partitions` (see `pooling.evaluation.distributed`); this
    process alone writes the values to the store. `progress` hears of each run scored.
    """
    version = store.resolve_qrels(qrels)
    in_store = store.run_ids()
    run_ids = runs or in_store
    known = set(in_store)
    for r in run_ids:
        if r not in known:
            store.require_run(r)  # says which runs there are
    topic_list = resolve_topics(store, topics)
    if is_sampled(store, version):
        return _evaluate_sampled(store, version, run_ids, measures, topic_list,
                                 relevance_level=relevance_level, max_docs=max_docs,
                                 progress=progress)
    diverse = [m for m in measures if is_diversity_measure(m)]
    if diverse:
        plain = [m for m in measures if m not in diverse]
        if engine != "local":
            raise StoreError("diversity measures are computed here, not on Ray: drop --engine "
                             "(or score the plain measures alone on Ray)")
        intent = _evaluate_intent(store, version, run_ids, diverse, topic_list,
                                  missing_topics=missing_topics, relevance_level=relevance_level,
                                  max_docs=max_docs, progress=progress)
        if not plain:
            return intent
        return _merged(evaluate_store(
            store, qrels=version, runs=list(run_ids), measures=plain,
            missing_topics=missing_topics, relevance_level=relevance_level, max_docs=max_docs,
            topics=topic_list, collection_size=collection_size, progress=progress), intent)
    wanted = parse_measures(list(measures))
    options = {"missing_topics": missing_topics, "relevance_level": relevance_level,
               "max_docs": max_docs, "topics": topic_list}
    if any(_needs_collection_size(m) for m in wanted):  # part of the settings the values keep
        options["collection_size"] = (collection_size if collection_size is not None
                                      else store_collection_size(store))
    key = json.dumps(options, sort_keys=True)
    # What the cache holds: every value column (a run's id and text columns are not kept).
    columns = [c for m in wanted if m.spec.kind not in (Kind.TEXT, Kind.RUNID) for c in m.columns]
    text = [c for m in wanted if m.spec.kind in (Kind.TEXT, Kind.RUNID) for c in m.columns]
    if engine != "local":
        from pooling.runner import check_engine

        check_engine(engine)
    have = _cached_runs(store, run_ids, version, key, columns)
    computed = [r for r in dict.fromkeys(run_ids) if r not in have]
    progress = progress or NoProgress()
    if computed:
        progress.start(f"scoring {len(computed)} run(s)", total=len(computed))
    if computed and engine != "local":
        from pooling.evaluation.distributed import evaluate_stored_runs

        for run in evaluate_stored_runs(store, version, computed, wanted, options,
                                        ray_address=ray_address, partitions=partitions):
            _save(store, [run], version, key)  # as each run's values arrive: one writer
            progress.advance()
    elif computed:
        # One qrels index for all the runs, and one write per group of them; one reader
        # hands the runs over one after the other while the evaluator scans.
        index = QrelsIndex(store.qrels_table(version, ordered=False))
        done: list[RunEvaluation] = []
        try:
            with StoredRuns(store, computed) as stored:
                for stream in stored.streams:
                    done += evaluate(index, stream, wanted, missing_topics=missing_topics,
                                     relevance_level=relevance_level, max_docs=max_docs,
                                     topics=topic_list,
                                     collection_size=options.get("collection_size")).runs
                    progress.advance()
                    if len(done) == RUNS_PER_WRITE:
                        _save(store, done, version, key)
                        done = []
        except BaseException:
            # The runs finished before the failing one keep their values; the failure
            # itself is what the caller hears of, even if keeping them fails too.
            with contextlib.suppress(Exception):
                _save(store, done, version, key)
            raise
        _save(store, done, version, key)
    progress.finish()
    per_query, means = _load(store, run_ids, version, key, columns)
    return StoreEvaluation(version, options, per_query, means, computed, columns, list(run_ids),
                           text)


def sampled_measures(measures: list[str] | tuple[str, ...]) -> list[str]:
    """The measures asked of a sampled version: `official` (the default) is everything
    sample_eval.pl prints plus statAP; other names as `pooling.measures.sampled_names` reads."""
    out: list[str] = []
    for m in measures:
        out += ["sample_eval", "statAP"] if m == "official" else [m]
    return out


def stored_trec_run(store: Store, run_id: str) -> TrecRun:
    """A stored run as the sampled evaluator reads a run file (query_id, doc_id, score)."""
    table = store.run_table(run_id).select(["query_id", "doc_id", "score"])
    return TrecRun(table, run_id, f"{store.path}:{run_id}")


def _evaluate_sampled(store: Store, version: str, run_ids: list[str],
                      measures: list[str] | tuple[str, ...], topic_list: list[str] | None, *,
                      relevance_level: int, max_docs: int | None,
                      progress: Progress | None) -> StoreEvaluation:
    """Stored runs scored on a sampled version by `evaluate_sampled`, sample_eval.pl's own
    rules: each run on the topics it shares with the qrels, grades above 0 relevant, a run's
    top 1000 documents. Cached like any other values, under the options recorded."""
    from pooling.store.sampled_qrels import sampled_qrels_table

    if relevance_level != 1 or max_docs is not None:
        raise StoreError(
            f"qrels version {version!r} is sampled: its inferred measures count grades above 0 "
            "as relevant and each run's top 1000 documents, as sample_eval.pl does; leave out "
            "-l and -M")
    wanted = parse_sampled_measures(sampled_measures(measures))
    columns = [m.name for m in wanted]
    options = {"missing_topics": "skip", "relevance_level": 1, "max_docs": None,
               "topics": topic_list, "sampled": "sample_eval.pl"}
    key = json.dumps(options, sort_keys=True)
    have = _cached_runs(store, run_ids, version, key, columns)
    computed = [r for r in dict.fromkeys(run_ids) if r not in have]
    progress = progress or NoProgress()
    if computed:
        table = sampled_qrels_table(store, version)
        if topic_list is not None:
            table = table.filter(pc.is_in(table["query_id"], pa.array(topic_list, pa.string())))
        pools = load_sampled_qrels(table)
        progress.start(f"scoring {len(computed)} run(s)", total=len(computed))
        for run_id in computed:
            run = run_evaluation(pools, score_run(pools, rank_run(stored_trec_run(store, run_id))),
                                 wanted)
            _save(store, [run], version, key)
            progress.advance()
        progress.finish()
    per_query, means = _load(store, run_ids, version, key, columns)
    return StoreEvaluation(version, options, per_query, means, computed, columns, list(run_ids))


def is_diversity_measure(name: str) -> bool:
    """Whether a measure name asks for diversity measures (ndeval's, read from subtopic
    qrels): `alpha-nDCG@20`, `ERR_IA@20`, `ndeval` for all of them."""
    try:
        parsed = parse_measures([name])
    except PoolingError:
        return False  # not a name at all: the plain path says so
    return bool(parsed) and all(m.spec.rel_info == "subtopics" for m in parsed)


def require_subtopics(store: Store, version: str) -> None:
    """Refuse a qrels version without subtopic rows for diversity measures, naming the
    versions that have them and how to get one."""
    having = [r[0] for r in store.con.execute(
        "SELECT DISTINCT version FROM subtopic_qrels ORDER BY 1").fetchall()]
    if version not in having:
        raise StoreError(
            f"diversity measures need subtopic qrels, and qrels version {version!r} has no "
            f"subtopics; versions with subtopics: {', '.join(having) or 'none yet'} (import "
            "one with `pooling import qrels FILE --format subtopic`, or derive one from a "
            "subtopic round with `pooling qrels derive --round R`)")


def _evaluate_intent(store: Store, version: str, run_ids: list[str], measures: list[str],
                     topic_list: list[str] | None, *, missing_topics: str, relevance_level: int,
                     max_docs: int | None, progress: Progress | None) -> StoreEvaluation:
    """Stored runs scored with diversity measures on a version's subtopic rows, by
    `evaluate_subtopics` (ndeval's measures, as `pooling eval -m ndeval` computes them on the
    exported subtopic qrels), cached under the options plus the subtopic marker. A version
    without subtopic rows is refused, naming the versions that have them."""
    from pooling.evaluation.options import EvalOptions
    from pooling.evaluation.subtopics import evaluate_subtopics
    from pooling.store.qrels import subtopic_qrels_table

    require_subtopics(store, version)
    table = subtopic_qrels_table(store, version)
    wanted = parse_measures(list(measures))
    columns = [c for m in wanted for c in m.columns]
    options = {"missing_topics": missing_topics, "relevance_level": relevance_level,
               "max_docs": max_docs, "topics": topic_list, "subtopics": "ndeval"}
    key = json.dumps(options, sort_keys=True)
    have = _cached_runs(store, run_ids, version, key, columns)
    computed = [r for r in dict.fromkeys(run_ids) if r not in have]
    progress = progress or NoProgress()
    if computed:
        settings = EvalOptions(missing_topics=missing_topics,  # type: ignore[arg-type]
                               relevance_level=relevance_level, max_docs=max_docs,
                               topics=topic_list)
        settings.check()
        progress.start(f"scoring {len(computed)} run(s) on subtopics", total=len(computed))
        with StoredRuns(store, computed) as stored:
            for start in range(0, len(stored.streams), RUNS_PER_WRITE):
                group = stored.streams[start:start + RUNS_PER_WRITE]
                result = evaluate_subtopics(table, group, wanted, settings)
                _save(store, result.runs, version, key)
                progress.advance(len(group))
        progress.finish()
    per_query, means = _load(store, run_ids, version, key, columns)
    return StoreEvaluation(version, options, per_query, means, computed, columns, list(run_ids))


def _merged(plain: StoreEvaluation, intent: StoreEvaluation) -> StoreEvaluation:
    """Plain and diversity values of the same runs as one evaluation (plain measures first,
    as `pooling eval` prints them); the settings are the plain ones."""
    order = [("run_id", "ascending"), ("query_id", "ascending"), ("measure", "ascending")]
    per_query = pa.concat_tables([plain.per_query, intent.per_query]).sort_by(order)
    means = pa.concat_tables([plain.means, intent.means]).sort_by(order[::2])
    return StoreEvaluation(plain.qrels_version, plain.options, per_query, means,
                           list(dict.fromkeys(plain.computed + intent.computed)),
                           plain.measures + intent.measures, plain.run_ids, plain.text_measures)


def _needs_collection_size(measure: Measure) -> bool:
    """Whether a measure's value depends on the number of documents in the collection."""
    name = measure.spec.name
    return name in ("Fallout", "set_fallout") or (name == "utility" and measure.values[3] != 0)


def store_collection_size(store: Store) -> int:
    """The number of distinct documents in the store, the collection size of its measures;
    an error when it holds none."""
    (count,) = store.one("count documents", "SELECT count(DISTINCT doc_id) FROM documents")
    if not count:
        raise StoreError("the store holds no documents, so its collection size is unknown: "
                         "import the documents (`pooling import docs`), or give the size with -N")
    return int(count)


def _cached_runs(store: Store, run_ids: list[str], version: str, key: str,
                 columns: list[str]) -> set[str]:
    """The runs whose every value column is in the cache for these settings (one query)."""
    rows = store.con.execute(
        "SELECT run_id, count(DISTINCT measure) FROM eval_results "
        "WHERE run_id IN (SELECT UNNEST(?::VARCHAR[])) AND qrels_version = ? AND options = ? "
        "AND measure IN (SELECT UNNEST(?::VARCHAR[])) GROUP BY run_id",
        [list(dict.fromkeys(run_ids)), version, key, sorted(set(columns))]).fetchall()
    wanted = len(set(columns))
    if not wanted:  # only text measures: nothing to compute or keep
        return set(run_ids)
    return {run_id for run_id, n in rows if n == wanted}


def _save(store: Store, runs: list[RunEvaluation], version: str, key: str) -> None:
    """The runs' values into the cache, replacing what it held for them, in one write."""
    parts: list[pa.Table] = []
    for run in runs:
        topics = pa.array(list(run.query_ids) + [None], pa.string())
        for col in run.columns:
            if col.kind in (Kind.TEXT, Kind.RUNID):
                continue
            summary = float(run.summary[col.name])
            if col.name not in run.per_query:  # a summary-only value (num_q): the `all` row only
                query_id, values = pa.nulls(1, pa.string()), np.array([summary])
            else:
                query_id = topics
                values = np.append(np.asarray(run.per_query[col.name], np.float64), summary)
            n = len(values)
            parts.append(pa.table({
                "run_id": pa.array([run.run_id] * n, pa.string()),
                "measure": pa.array([col.name] * n, pa.string()),
                "query_id": query_id, "value": pa.array(values, pa.float64())}))
    if not parts:
        return
    table = pa.concat_tables(parts)
    measures = sorted({m for t in parts for m in t.column("measure").unique().to_pylist()})
    with store.transaction() as con:
        con.execute("DELETE FROM eval_results WHERE qrels_version = ? AND options = ? "
                    "AND run_id IN (SELECT UNNEST(?::VARCHAR[])) "
                    "AND measure IN (SELECT UNNEST(?::VARCHAR[]))",
                    [version, key, [r.run_id for r in runs], measures])
        con.register("_vals", table)
        try:
            con.execute("INSERT INTO eval_results SELECT run_id, ?, ?, measure, query_id, value, ? "
                        "FROM _vals", [version, key, utcnow()])
        finally:
            con.unregister("_vals")


def _load(store: Store, run_ids: list[str], version: str, key: str,
          columns: list[str]) -> tuple[pa.Table, pa.Table]:
    params = [run_ids, version, key, columns]
    base = ("FROM eval_results WHERE run_id IN (SELECT UNNEST(?::VARCHAR[])) AND qrels_version = ? "
            "AND options = ? AND measure IN (SELECT UNNEST(?::VARCHAR[]))")
    per_query = store.arrow(
        "cached values", f"SELECT run_id, query_id, measure, value {base} AND query_id IS NOT NULL "
        "ORDER BY run_id, query_id, measure", params)
    means = store.arrow(
        "cached means", f"SELECT run_id, measure, value {base} AND query_id IS NULL "
        "ORDER BY run_id, measure", params)
    return per_query, means
