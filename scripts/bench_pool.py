"""Benchmark: a depth-100 pool of 100 generated runs x 50 topics, and a 50-topic bandit replay.

Runs are generated with a fixed seed: per topic, 1000 documents per run drawn from a
20,000-document collection with Zipf-like popularity (so runs overlap as real ones do).
Targets: the pool in under a second; the replay (MaxMean and mmfuse, budget 100 per topic)
in a few seconds.

The peer is trectools' `TrecPoolMaker` (`pip install -e '.[bench]'`), timed in the same
process on the same runs, both starting from runs already in memory. With ../shared present
the Robust03 depth-125 pool is also built by both and checked against the official qrels,
which NIST built from exactly that pool in trec_eval's order (score desc, doc_id desc).
Usage: .venv/bin/python scripts/bench_pool.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from pooling.strategies.replays import (
    depth_pool,
    load_inputs,
    parse_strategy,
    prepare,
    replay,
    score,
)

N_RUNS, N_TOPICS, RUN_DEPTH, COLLECTION, SEED = 100, 50, 1000, 20_000, 20240601


def generate() -> tuple[dict[str, pa.Table], pa.Table]:
    rng = np.random.default_rng(SEED)
    popularity = 1.0 / np.arange(1, COLLECTION + 1) ** 0.8
    popularity /= popularity.sum()
    qids = [str(401 + t) for t in range(N_TOPICS)]
    runs: dict[str, pa.Table] = {}
    for r in range(N_RUNS):
        q_col, d_col, s_col = [], [], []
        for q in qids:
            docs = rng.choice(COLLECTION, size=RUN_DEPTH, replace=False, p=popularity)
            q_col += [q] * RUN_DEPTH
            d_col += [f"D{q}-{d:05d}" for d in docs]
            s_col.append(np.sort(rng.random(RUN_DEPTH))[::-1] * 10)
        runs[f"run{r:03d}"] = pa.table(
            {"query_id": q_col, "doc_id": d_col, "score": np.concatenate(s_col)}
        )
    # qrels: the most popular documents are more often relevant
    rel_q, rel_d, rel_g = [], [], []
    for q in qids:
        docs = rng.choice(COLLECTION, size=400, replace=False, p=popularity)
        grades = (rng.random(400) < 0.25).astype(int)
        rel_q += [q] * 400
        rel_d += [f"D{q}-{d:05d}" for d in docs]
        rel_g += grades.tolist()
    return runs, pa.table({"query_id": rel_q, "doc_id": rel_d, "relevance": rel_g})


def _trectools_runs(runs: dict[str, pa.Table]) -> list:
    """The same runs as trectools `TrecRun`s, rows in rank order as a run file holds them."""
    from trectools import TrecRun

    out = []
    for name, table in runs.items():
        df = table.to_pandas().rename(columns={"query_id": "query", "doc_id": "docid"})
        df = df.sort_values(["query", "score", "docid"], ascending=[True, False, False], kind="stable")
        df["q0"], df["system"] = "Q0", name
        df["rank"] = df.groupby("query").cumcount() + 1
        run = TrecRun()
        run.run_data = df[["query", "q0", "docid", "rank", "score", "system"]].reset_index(drop=True)
        out.append(run)
    return out


def _pairs(pool: pa.Table) -> set[tuple[str, str]]:
    return set(zip(pool["query_id"].to_pylist(), pool["doc_id"].to_pylist(), strict=True))


def peer_pool(runs: dict[str, pa.Table], t_ours: float, ours: pa.Table) -> None:
    try:
        from trectools import TrecPoolMaker
    except ImportError:
        print("trectools not installed (pip install -e '.[bench]'): no peer comparison")
        return
    tt_runs = _trectools_runs(runs)
    t0 = time.perf_counter()
    theirs = TrecPoolMaker().make_pool(tt_runs, strategy="topX", topX=100).pool
    t_peer = time.perf_counter() - t0
    same = {(str(q), d) for q, docs in theirs.items() for d in docs} == _pairs(ours)
    print(f"  trectools TrecPoolMaker topX=100 on the same runs: {t_peer:.2f} s "
          f"= {t_peer / t_ours:.1f}x ours; same pool: {same}")


def robust03_anchor(shared: Path) -> None:
    """Depth-125 pools of the 17 Robust03 runs, ours and trectools', against the qrels."""
    base = shared / "data" / "trec2003-robust"
    paths = sorted((base / "runs").glob("input.*.gz"))
    if not paths:
        print(f"no Robust03 runs under {base}: anchor skipped")
        return
    qrels, runs = load_inputs(str(base / "qrels" / "robust03_qrels.txt.gz"), [str(p) for p in paths])
    judged = _pairs(qrels)
    topics = {str(q) for q in range(601, 651)}
    ours = {p for p in _pairs(depth_pool(runs, 125)) if p[0] in topics}
    print(f"Robust03 depth-125 pool, topics 601-650: ours {len(ours):,} pairs, "
          f"{len(ours - judged)} not in the official qrels")
    try:
        from trectools import TrecPoolMaker, TrecRun
    except ImportError:
        return
    pool = TrecPoolMaker().make_pool([TrecRun(str(p)) for p in paths], strategy="topX", topX=125).pool
    theirs = {(str(q), d) for q, docs in pool.items() for d in docs if str(q) in topics}
    print(f"  trectools (file order, ties as written): {len(theirs):,} pairs, "
          f"{len(theirs - judged)} not in the official qrels")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    args = parser.parse_args()
    runs, qrels = generate()
    rows = sum(t.num_rows for t in runs.values())
    t0 = time.perf_counter()
    pool = depth_pool(runs, 100)
    t_pool = time.perf_counter() - t0
    print(f"depth-100 pool of {N_RUNS} runs x {N_TOPICS} topics ({rows:,} run rows): "
          f"{pool.num_rows:,} documents in {t_pool:.3f} s (target < 1 s)")
    peer_pool(runs, t_pool, pool)

    small = {k: runs[k] for k in list(runs)[:17]}  # a Robust03-sized replay
    t0 = time.perf_counter()
    data = prepare(qrels, small, 100)
    t_prep = time.perf_counter() - t0
    print(f"replay preparation, 17 runs x {N_TOPICS} topics: {t_prep:.2f} s")
    for name in ("maxmean", "thompson", "hedge", "mmfuse"):
        t0 = time.perf_counter()
        rep = replay(data, parse_strategy(name), 100)
        t_rep = time.perf_counter() - t0
        t0 = time.perf_counter()
        row = score(data, rep, [100])[0]
        t_score = time.perf_counter() - t0
        print(f"{name:9s} replay, {N_TOPICS} topics x 100 judgments: {t_rep:.2f} s "
              f"(+{t_score:.2f} s scoring); found {row['found_share']:.3f}")
    robust03_anchor(args.shared)


if __name__ == "__main__":
    main()
