#!/usr/bin/env python
"""Benchmark: importing a 7,000-topic x 1,000-document run into a store vs. the parse floor.

The floor is pyarrow reading all six columns of the same file. Both are timed in this process,
alternating, several times; the table shows medians and the ratio import / floor (target <= 2).

    .venv/bin/python scripts/bench_import.py [--topics 7000] [--depth 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from pooling.store import Store


def make_run(path: Path, topics: int, depth: int, seed: int = 7) -> None:
    """A single-space TREC run with realistic ids and many tied scores (2 decimals)."""
    rng = np.random.default_rng(seed)
    n = topics * depth
    qid = np.repeat(np.arange(1, topics + 1), depth)
    rank = np.tile(np.arange(1, depth + 1), topics)
    # distinct within a topic: rank * prime mod 5e7 never repeats for rank < 5e7
    offset = np.repeat(rng.integers(0, 50_000_000, size=topics), depth)
    docs = (offset + rank * 104_729) % 50_000_000
    scores = np.round(20.0 - rank * 0.015 + rng.normal(0, 0.3, size=n), 2)
    table = pa.table(
        {
            "q": pa.array(qid.astype(str)),
            "q0": pa.array(np.full(n, "Q0")),
            "d": pa.array(np.char.add("msmarco_doc_", docs.astype(str))),
            "r": pa.array(rank),
            "s": pa.array(scores),
            "t": pa.array(np.full(n, "benchRun")),
        }
    )
    con = duckdb.connect()
    con.register("t", table)
    con.execute(
        "COPY (SELECT * FROM t) TO ? (FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '')",
        [str(path)],
    )


def time_floor(path: Path) -> float:
    names = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
    types = [pa.string(), pa.string(), pa.string(), pa.int64(), pa.float64(), pa.string()]
    start = time.perf_counter()
    pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names),
        parse_options=pacsv.ParseOptions(delimiter=" "),
        convert_options=pacsv.ConvertOptions(column_types=dict(zip(names, types, strict=True))),
    )
    return time.perf_counter() - start


def time_import(path: Path, workdir: Path, i: int) -> float:
    store_path = workdir / f"bench{i}.duckdb"
    start = time.perf_counter()
    with Store.create(store_path) as store:
        report = store.import_runs([path])
    elapsed = time.perf_counter() - start
    assert report.items[0].status == "imported", report
    store_path.unlink()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=7000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        run = workdir / "bench.run"
        make_run(run, args.topics, args.depth)
        size_mb = run.stat().st_size / 1e6
        lines = args.topics * args.depth
        floor, imports = [], []
        time_floor(run)  # warm the page cache
        for i in range(args.repeat):
            floor.append(time_floor(run))
            imports.append(time_import(run, workdir, i))
        f, m = statistics.median(floor), statistics.median(imports)
        print(f"run file: {lines:,} lines, {size_mb:,.0f} MB, {args.repeat} repeats (median)")
        print(f"{'step':<44}{'seconds':>10}{'lines/s':>14}")
        print(f"{'pyarrow read_csv, all six columns (floor)':<44}{f:>10.2f}{lines / f:>14,.0f}")
        print(f"{'pooling import runs (into a new store)':<44}{m:>10.2f}{lines / m:>14,.0f}")
        print(f"ratio import / floor: {m / f:.2f}  (target <= 2.00)")


if __name__ == "__main__":
    main()
