#!/usr/bin/env python
"""Benchmark evaluation on Ray against the local engine: 100 runs x 500 topics x 1,000
documents (50M run lines, fixed seed), stored as Parquet partitions by run_id (as
`pooling evaluate --engine ray` exports a store's runs).

Times the local engine (one process), then a Ray started on this machine with 1 and with 2
worker processes (start-up not timed), checks every value equals the local one, and prints
the times, the speed-up from 1 to 2 workers (target >= 1.7x on a 2-core machine) and the
per-task overhead: the round trip of an empty task, and (Ray 1 worker - local) per task.

    unshare -n sh -c 'ip link set lo up && .venv/bin/python scripts/bench_scale.py'

(options --runs 100 --topics 500 --docs 1000). Run it, as the tests are run, in a network
namespace with loopback alone (as root): Ray gives its nodes the address a route out would
use, and there the only one is 127.0.0.1. The script refuses to start Ray anywhere else.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

MEASURES = ["official"]


def make(directory: Path, runs: int, topics: int, docs: int, seed: int = 1):
    """Qrels (~200 judged per topic, grades 0-2) and `runs` Parquet partitions."""
    rng = np.random.default_rng(seed)
    pool = pa.array([f"D{i:06d}" for i in range(docs * 20)], pa.string())
    qids = pa.array([str(401 + t) for t in range(topics)], pa.string())
    judged = np.stack([rng.choice(docs * 20, 200, replace=False) for _ in range(topics)])
    qrels = pa.table({"query_id": qids.take(pa.array(np.repeat(np.arange(topics), 200))),
                      "doc_id": pool.take(pa.array(judged.ravel())),
                      "relevance": pa.array(rng.choice([0, 0, 0, 1, 2], topics * 200))})
    parts = []
    for r in range(runs):
        # Each topic's documents: judged ones mixed with others, 1,000 distinct per topic.
        picks = np.stack([rng.choice(docs * 20, docs, replace=False) for _ in range(topics)])
        table = pa.table({"query_id": qids.take(pa.array(np.repeat(np.arange(topics), docs))),
                          "doc_id": pool.take(pa.array(picks.ravel())),
                          "score": pa.array(np.round(rng.random(topics * docs), 3))})
        folder = directory / f"run_id=run{r:03d}"
        folder.mkdir(parents=True)
        pq.write_table(table, folder / "part-0.parquet")
        parts.append((str(folder / "part-0.parquet"), f"run{r:03d}"))
    return qrels, parts


def local(qrels, parts):
    from pooling.evaluation import evaluate
    from pooling.evaluation.distributed import parquet_run

    return evaluate(qrels, [parquet_run(p, r) for p, r in parts], MEASURES,
                    missing_topics="zero").runs


def on_ray(qrels, parts, workers: int):
    """(seconds, runs, tasks, empty-task round trip) with a Ray of `workers` CPUs."""
    import ray

    from pooling.evaluation.distributed import block_size, evaluate_partitions

    ray.init(num_cpus=workers, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, logging_level="warning", configure_logging=False)
    try:
        noop = ray.remote(num_cpus=1)(lambda: None)
        ray.get([noop.remote() for _ in range(20)])  # warm the worker processes
        start = time.perf_counter()
        ray.get([noop.remote() for _ in range(200)])
        empty = (time.perf_counter() - start) / 200
        start = time.perf_counter()
        runs = list(evaluate_partitions(qrels, parts, MEASURES, {"missing_topics": "zero"}))
        seconds = time.perf_counter() - start
        tasks = -(-len(parts) // block_size(len(parts), workers))
    finally:
        ray.shutdown()
    return seconds, runs, tasks, empty


def only_loopback() -> bool:
    """Whether nothing but loopback is reachable (a route test; no packet is sent)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return True
        return probe.getsockname()[0].startswith("127.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    if not only_loopback():
        raise SystemExit("run this in a network namespace with loopback alone (as root): "
                         "unshare -n sh -c 'ip link set lo up && .venv/bin/python "
                         "scripts/bench_scale.py'")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    directory = Path(tempfile.mkdtemp(prefix="bench-scale-", dir=args.workdir))
    try:
        start = time.perf_counter()
        qrels, parts = make(directory, args.runs, args.topics, args.docs)
        lines = args.runs * args.topics * args.docs
        print(f"data: {args.runs} runs x {args.topics} topics x {args.docs} docs = {lines:,} "
              f"lines, {qrels.num_rows:,} qrels lines; made in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        expected = local(qrels, parts)
        t_local = time.perf_counter() - start
        print(f"local engine:   {t_local:7.2f} s  ({lines / t_local / 1e6:.1f}M lines/s)")
        want = {r.run_id: r.summary for r in expected}
        times = {}
        for workers in (1, 2):
            seconds, runs, tasks, empty = on_ray(qrels, parts, workers)
            assert {r.run_id: r.summary for r in runs} == want, "Ray's values differ from local"
            times[workers] = (seconds, tasks, empty)
            print(f"ray, {workers} worker{'s' if workers > 1 else ' '}: {seconds:7.2f} s  "
                  f"({tasks} tasks of {len(parts) // tasks}-{-(-len(parts) // tasks)} runs; "
                  f"values equal to local)")
        (t1, tasks1, empty), (t2, _, _) = times[1], times[2]
        print(f"speed-up 1 -> 2 workers: {t1 / t2:.2f}x (target >= 1.7x)")
        print(f"per-task overhead: empty task round trip {empty * 1e3:.2f} ms; "
              f"(ray 1 worker - local) / tasks = {(t1 - t_local) / tasks1 * 1e3:.0f} ms; "
              f"per run evaluated: local {t_local / len(parts) * 1e3:.0f} ms, "
              f"ray 1 worker {t1 / len(parts) * 1e3:.0f} ms")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
