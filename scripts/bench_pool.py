"""Benchmark: a depth-100 pool of 100 generated runs x 50 topics, and a 50-topic bandit replay.

Runs are generated with a fixed seed: per topic, 1000 documents per run drawn from a
20,000-document collection with Zipf-like popularity (so runs overlap as real ones do).
Targets: the pool in under a second; the replay (MaxMean and mmfuse, budget 100 per topic)
in a few seconds. Usage: .venv/bin/python scripts/bench_pool.py
"""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa

from pooling.simulate import depth_pool, parse_strategy, prepare, replay, score

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


def main() -> None:
    runs, qrels = generate()
    rows = sum(t.num_rows for t in runs.values())
    t0 = time.perf_counter()
    pool = depth_pool(runs, 100)
    t_pool = time.perf_counter() - t0
    print(f"depth-100 pool of {N_RUNS} runs x {N_TOPICS} topics ({rows:,} run rows): "
          f"{pool.num_rows:,} documents in {t_pool:.3f} s (target < 1 s)")

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


if __name__ == "__main__":
    main()
