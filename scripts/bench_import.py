#!/usr/bin/env python
"""Benchmark: importing a 7,000-topic x 1,000-document run into a store vs. DuckDB's own import.

The peer is DuckDB importing the same file into a new database file by itself
(`CREATE TABLE ... AS SELECT * FROM read_csv(...)` with typed columns, then `CHECKPOINT`) with
its default settings, as the store does: rows kept in the file's order. The same with
`preserve_insertion_order = false` (faster: rows may land in any order) is printed beside it,
with the ratio against it, for reference; the store keeps the file's order, so a stored run's
topics stay together for the evaluator. pyarrow reading all six columns is printed too. All
are timed in this process, alternating, several times; the table shows medians and the ratio
import / DuckDB (target <= 1.3).

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


RUN_COLUMNS = {"query_id": "VARCHAR", "q0": "VARCHAR", "doc_id": "VARCHAR", "rank": "BIGINT",
               "score": "DOUBLE", "tag": "VARCHAR"}


def time_duckdb(path: Path, workdir: Path, i: int, keep_order: bool = True) -> float:
    """DuckDB alone: the file into a typed table of a new database file, checkpointed."""
    db_path = workdir / f"duckdb{i}.duckdb"
    start = time.perf_counter()
    con = duckdb.connect(str(db_path))
    if not keep_order:
        con.execute("SET preserve_insertion_order = false")
    con.execute("CREATE TABLE run AS SELECT * FROM read_csv(?, delim = ' ', header = false, "
                "columns = ?)", [str(path), RUN_COLUMNS])
    con.execute("CHECKPOINT")
    con.close()
    elapsed = time.perf_counter() - start
    db_path.unlink()
    return elapsed


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
        floor, ordered, unordered, imports = [], [], [], []
        time_floor(run)  # warm the page cache
        for i in range(args.repeat):
            floor.append(time_floor(run))
            ordered.append(time_duckdb(run, workdir, i))
            unordered.append(time_duckdb(run, workdir, i, keep_order=False))
            imports.append(time_import(run, workdir, i))
        f, m = statistics.median(floor), statistics.median(imports)
        o, u = statistics.median(ordered), statistics.median(unordered)
        print(f"run file: {lines:,} lines, {size_mb:,.0f} MB, {args.repeat} repeats (median)")
        print(f"{'step':<60}{'seconds':>9}{'lines/s':>13}{'x DuckDB':>10}")
        for label, t in (("pyarrow read_csv, all six columns (reference)", f),
                         ("DuckDB read_csv into a new file + CHECKPOINT", o),
                         ("  the same, preserve_insertion_order = false", u),
                         ("pooling import runs (into a new store)", m)):
            print(f"{label:<60}{t:>9.2f}{lines / t:>13,.0f}{t / o:>9.2f}x")
        print(f"ratio import / DuckDB's own import: {m / o:.2f}  (target <= 1.30); against the "
              f"unordered form: {m / u:.2f}")

if __name__ == "__main__":
    main()
