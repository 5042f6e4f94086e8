"""Benchmark: `pooling release` on Robust03 with its runs, and on a large synthetic store.

1. Robust03 (../shared/data/trec2003-robust): 50 topics, the 17 runs, the official qrels,
   and a depth-125 round pooled from them (the pool NIST judged): the release with runs,
   pool provenance and the datasheet (pool bias included). Target: under 30 s.
2. A synthetic store of --topics topics x --runs runs (default 10,000 x 100, 10 documents
   per topic and run: 10M run rows, 200,000 qrels): the release with runs, without the pool
   bias (it re-scores every run in memory; the datasheet says so). Tables and runs are
   streamed, so peak memory stays flat as the store grows: the release of a tenth of the
   topics is timed too, and the peak RSS of both is printed.
The import of the Robust03 release is timed too: it checks every file's checksum and the
Parquet tables against every TREC qrels and run file before the rebuilt store is kept.

Each release runs in its own `pooling` process; its peak RSS is that child's
(`resource.getrusage(RUSAGE_CHILDREN)` after it alone has run).
Usage: .venv/bin/python scripts/bench_release.py [--shared ../shared] [--topics N] [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
POOLING = [sys.executable, "-m", "pooling"]


def timed(args: list[str]) -> tuple[float, float]:
    """Run `pooling ARGS` in a child process of its own; (seconds, peak RSS in MiB)."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
             "print(time.perf_counter() - t, "
             "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    done = subprocess.run([sys.executable, "-c", probe, *POOLING, *args], check=True,
                          capture_output=True, text=True)
    seconds, rss = done.stdout.split()
    return float(seconds), float(rss)


def robust03(shared: Path, work: Path) -> None:
    base = shared / "data" / "trec2003-robust"
    if not base.is_dir():
        print(f"Robust03: {base} is missing; skipped")
        return
    store = work / "robust03.duckdb"
    for args in (["init", store], ["import", "topics", store, base / "topics" / "topics.robust03.txt"],
                 ["import", "runs", store, *sorted((base / "runs").glob("input.*.gz"))],
                 ["import", "qrels", store, base / "qrels" / "robust03_qrels.txt.gz",
                  "--name", "official"],
                 ["pool", store, "--round", "nist", "--strategy", "depth", "--depth", "125",
                  "--runs", "all"]):
        subprocess.run([*POOLING, *map(str, args)], check=True, stdout=subprocess.DEVNULL)
    seconds, rss = timed(["release", str(store), str(work / "robust03-release")])
    files = sum(1 for _ in (work / "robust03-release").rglob("*"))
    print(f"Robust03 release (17 runs, depth-125 round, pool bias): {seconds:.1f} s "
          f"(target < 30 s), peak RSS {rss:.0f} MiB, {files} files")
    seconds, rss = timed(["import", "release", str(work / "robust03-rebuilt.duckdb"),
                          str(work / "robust03-release")])
    print(f"Robust03 import release (checksums, rebuild, Parquet checked against every TREC "
          f"qrels and run file): {seconds:.1f} s, peak RSS {rss:.0f} MiB")


def synthetic(work: Path, topics: int, runs: int, docs: int) -> Path:
    """A store of `topics` x `runs` x `docs` run rows and 20 qrels per topic, made in SQL."""
    store = work / f"synthetic-{topics}.duckdb"
    subprocess.run([*POOLING, "init", str(store)], check=True, stdout=subprocess.DEVNULL)
    con = duckdb.connect(str(store))
    con.execute("INSERT INTO topics SELECT 'q' || t, 'topic ' || t, NULL, NULL, NULL, 'synthetic' "
                "FROM range(?) r(t)", [topics])
    con.execute("INSERT INTO runs SELECT 'run' || r, 'run' || r, 'team' || (r % 10), NULL, "
                "'synthetic', NULL, now(), ? * ?, ?, r < 20, 'refuse', 0 FROM range(?) x(r)",
                [topics, docs, topics, runs])
    con.execute("INSERT INTO run_results SELECT 'run' || r, 'q' || t, "
                "'d' || ((t * 7919 + r * 104729 + k * 15485863) % 1000000), k + 1, "
                "1000.0 - k - r / 1000.0 FROM range(?) x(r), range(?) y(t), range(?) z(k)",
                [runs, topics, docs])
    con.execute("INSERT INTO qrels_versions VALUES ('official', now(), 'imported', 'synthetic', "
                "NULL, [0, 1], 1, ? * 20, ?, NULL, NULL)", [topics, topics])
    con.execute("INSERT INTO qrels SELECT 'official', 'q' || t, 'd' || ((t * 31 + k) % 1000000), "
                "(k % 3 = 0)::BIGINT FROM range(?) y(t), range(20) z(k)", [topics])
    con.execute("INSERT OR REPLACE INTO store_meta VALUES ('default_qrels', 'official')")
    con.close()
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--docs", type=int, default=10, help="documents per topic and run")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-release-"))
    try:
        robust03(args.shared, work)
        for topics in (max(1, args.topics // 10), args.topics):
            store = synthetic(work, topics, args.runs, args.docs)
            rows = topics * args.runs * args.docs
            seconds, rss = timed(["release", str(store), str(work / f"release-{topics}"),
                                  "--no-pool-bias"])
            print(f"synthetic release, {topics:,} topics x {args.runs} runs ({rows:,} run rows): "
                  f"{seconds:.1f} s, peak RSS {rss:.0f} MiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
