"""Evaluation on a Ray cluster: a task per block of runs, the qrels broadcast once.

The driver reads the qrels once and puts them in the object store; each worker process
builds the qrels index once per job and keeps it for every block it is given. A block's
values come back as Arrow tables (`pooling.evaluation.values`). Stored runs reach the workers as
Parquet files exported from the store, hive-partitioned by run_id (`partitions`): workers
never open the DuckDB file, and the driver alone writes the values to it.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa

from pooling.evaluation.engine import evaluate_qrels
from pooling.evaluation.inputs import (
    RunStream,
    check_rel_format,
    check_settings,
    measure_list,
    qrels_table,
    run_at,
    run_list,
)
from pooling.evaluation.qrels_index import QrelsIndex
from pooling.evaluation.results import Evaluation, RunEvaluation
from pooling.evaluation.trec_input import TrecRun
from pooling.evaluation.values import run_from_values, run_values
from pooling.runner import EngineError
from pooling.runner.cluster import cause, cluster_cpus, connected, get_all

_INDEXES: dict[str, QrelsIndex] = {}  # in a worker process: the job's qrels index, built once


def evaluate_on_ray(
    qrels: Any,
    runs: Any,
    measures: Any = ("official",),
    *,
    missing_topics: str = "error",
    relevance_level: int = 1,
    max_docs: int | None = None,
    topics: Iterable[str] | None = None,
    ray_address: str | None = None,
    block: int | None = None,
) -> Evaluation:
    """`evaluate` with the runs spread over a Ray cluster; the same Evaluation, run by run.

    Run files are read by the workers at the path given, so on a cluster of several
    machines they must be on storage every node mounts at that path. `block`: runs per task
    (default: about four tasks per CPU of the cluster).
    """
    todo = run_list(runs)
    topic_list = list(topics) if topics is not None else None
    options = {"missing_topics": missing_topics, "relevance_level": relevance_level,
               "max_docs": max_docs, "topics": topic_list}
    check_settings(relevance_level, max_docs)
    wanted = measure_list(measures)
    check_rel_format(wanted, "qrels")
    if not todo:  # nothing to spread: the local engine answers
        return evaluate_qrels(qrels, [], wanted, **options)
    # Tables without a tag are named by their position among all the runs, as locally.
    todo = [r if isinstance(r, (str, os.PathLike, TrecRun)) else run_at(r, i)
            for i, r in enumerate(todo)]
    todo = [os.fspath(r) if isinstance(r, os.PathLike) else r for r in todo]
    warnings: list[str] = []
    table = qrels_table(qrels, warnings)
    with connected(ray_address) as ray:
        task = ray.remote(num_cpus=1)(_evaluate_block)
        qrels_ref = ray.put(table)
        size = block or block_size(len(todo), cluster_cpus(ray))
        refs = [task.remote([qrels_ref], todo[i:i + size], wanted, options)
                for i in range(0, len(todo), size)]
        blocks = get_all(ray, refs)
    results = [run_from_values(t, wanted) for tables, _ in blocks for t in tables]
    warnings += [w for _, said in blocks for w in said]
    columns = results[0].columns if results else []
    return Evaluation(results, wanted, missing_topics, relevance_level, max_docs, columns,
                      warnings=warnings)


def evaluate_stored_runs(
    store: Any,
    version: str,
    run_ids: Sequence[str],
    measures: Any,
    options: dict[str, Any],
    *,
    ray_address: str | None = None,
    partitions: str | None = None,
    block: int | None = None,
) -> Iterator[RunEvaluation]:
    """Each stored run's evaluation, as the cluster finishes it (the caller stores it).

    partitions: a directory (on a disk every node sees) to export the runs to as Parquet;
    default a temporary directory on this machine, removed at the end.
    """
    if not run_ids:
        return
    with _partition_dir(partitions) as directory:
        parts = [export_run(store, run_id, directory) for run_id in run_ids]
        yield from evaluate_partitions(store.qrels_table(version), parts, measures, options,
                                       ray_address=ray_address, block=block)


def evaluate_partitions(
    qrels: pa.Table,
    parts: Sequence[tuple[str, str]],
    measures: Any,
    options: dict[str, Any],
    *,
    ray_address: str | None = None,
    block: int | None = None,
) -> Iterator[RunEvaluation]:
    """Evaluate runs stored as Parquet files ((path, run_id) pairs, as `export_run` writes
    them), a task per block of runs; each run's evaluation as the cluster finishes it."""
    check_settings(options.get("relevance_level", 1), options.get("max_docs"),
                   options.get("collection_size"))
    wanted = measure_list(measures)
    check_rel_format(wanted, "qrels")
    with connected(ray_address) as ray:
        task = ray.remote(num_cpus=1)(_evaluate_parquet_block)
        qrels_ref = ray.put(qrels)
        size = block or block_size(len(parts), cluster_cpus(ray))
        pending = [task.remote([qrels_ref], list(parts[i:i + size]), wanted, options)
                   for i in range(0, len(parts), size)]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            try:
                tables = ray.get(done[0])
            except ray.exceptions.RayTaskError as exc:
                raise cause(exc) from None
            for t in tables:
                yield run_from_values(t, wanted)


def parquet_run(path: str, run_id: str) -> RunStream:
    """A run stored as a Parquet file (query_id, doc_id, score), streamed to the evaluator."""
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path)
    except OSError as exc:
        raise EngineError(f"cannot read {path}: {exc}; give --partitions a directory every node "
                          "of the cluster can read") from exc
    return RunStream(lambda: file.iter_batches(1 << 20), file.metadata.num_rows, run_id, run_id,
                     unique=True)


def export_run(store: Any, run_id: str, directory: str) -> tuple[str, str]:
    """Write a stored run to `directory/run_id=<id>/part-0.parquet` (hive partitioning,
    the id URI-encoded); returns (the file's path, the run id)."""
    import pyarrow.parquet as pq

    folder = Path(directory) / f"run_id={quote(run_id, safe='')}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "part-0.parquet"
    stream = store.run_stream(run_id)
    schema = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
                        ("score", pa.float64())])
    with pq.ParquetWriter(path, schema) as writer:
        for batch in stream.batches():
            writer.write_table(pa.Table.from_batches([batch]).cast(schema))
    return str(path), run_id


@contextmanager
def _partition_dir(partitions: str | None) -> Iterator[str]:
    if partitions is not None:
        Path(partitions).mkdir(parents=True, exist_ok=True)
        yield str(partitions)
        return
    directory = tempfile.mkdtemp(prefix="pooling-runs-")
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def block_size(runs: int, cpus: int) -> int:
    """Runs per task: about four tasks per CPU, so a slow block does not hold the job up."""
    return max(1, math.ceil(runs / (4 * cpus)))


def _index(ref: Any) -> QrelsIndex:
    """The job's qrels index, built once per worker process from the broadcast table.

    A task holds one CPU: Arrow's thread pools are held to one thread too, so that N
    workers use N cores (as Ray does for OpenMP), not N times Arrow's pool.
    """
    import ray

    if pa.cpu_count() > 1:
        pa.set_cpu_count(1)
        pa.set_io_thread_count(1)
    key = ref.hex()
    if key not in _INDEXES:
        _INDEXES.clear()  # one job's qrels at a time
        _INDEXES[key] = QrelsIndex(ray.get(ref))
    return _INDEXES[key]


def _evaluate_block(qrels: list[Any], runs: list[Any], measures: list[Any],
                    options: dict[str, Any]) -> tuple[list[pa.Table], list[str]]:
    """A task: evaluate a block of runs (paths or TrecRuns) against the broadcast qrels;
    the values, and the warnings about the runs' input."""
    result = evaluate_qrels(_index(qrels[0]), runs, measures, **options)
    return [run_values(r) for r in result.runs], list(result.warnings)


def _evaluate_parquet_block(qrels: list[Any], parts: list[tuple[str, str]], measures: list[Any],
                            options: dict[str, Any]) -> list[pa.Table]:
    """A task: evaluate stored runs read from their Parquet partitions."""
    index = _index(qrels[0])
    return [run_values(r) for path, run_id in parts
            for r in evaluate_qrels(index, parquet_run(path, run_id), measures, **options).runs]
