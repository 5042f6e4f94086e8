#!/usr/bin/env python
"""Benchmark `pooling eval` against pytrec_eval, side by side in one process.

Generates (fixed seed) qrels for 7,000 topics (~30 judged each, grades 0-3) with a
7,000 x 1,000 run full of score ties, and a 50-run x 500-topic case; times pytrec_eval
(parse with Python, evaluate, as its users do) and pooling (file -> per-topic values and
means), checks they agree per topic, and prints time ratios and pooling's peak RSS
(measured in a fresh subprocess); then the big run once more, imported into a store
(untimed) and scored by `pooling evaluate`. Targets: pooling <= 1/7 of pytrec_eval's time
on both cases, peak RSS <= 600 MB on the 7M-line run, the stored run faster than its file.

    .venv/bin/python scripts/bench_eval.py [--workdir DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

MEASURES = ["map", "bpref", "ndcg", "ndcg_cut.10", "recall.1000", "P.10", "recip_rank"]
PYTREC_MEASURES = {"map", "bpref", "ndcg", "ndcg_cut.10", "recall.1000", "P.10", "recip_rank"}
COMPARED = ["map", "bpref", "ndcg", "ndcg_cut_10", "recall_1000", "P_10", "recip_rank"]
SEED = 20240611
BIG = "7000 topics x 1000 docs, 1 run"


# ----------------------------------------------------------------------------- data


def _write(table: pa.Table, path: Path) -> None:
    pcsv.write_csv(
        table, path, pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    )


def make_run(rng: np.random.Generator, topics: np.ndarray, depth: int, collection: int, tag: str,
             path: Path) -> np.ndarray:
    """A run in score order with ~70% tied scores (2 decimals); ties in random doc order."""
    n_topics = len(topics)
    docs = np.empty((n_topics, depth), np.int64)
    for i in range(n_topics):  # distinct docs per topic
        docs[i] = rng.choice(collection, size=depth, replace=False)
    scores = np.round(np.sort(rng.random((n_topics, depth)), axis=1)[:, ::-1] * 3, 2)
    doc_ids = pc.binary_join_element_wise("doc", pc.cast(pa.array(docs.ravel()), pa.string()), "")
    table = pa.table(
        {
            "q": pa.array(np.repeat(topics, depth)),
            "i": pa.array(["Q0"] * (n_topics * depth)),
            "d": doc_ids,
            "r": pa.array(np.tile(np.arange(1, depth + 1), n_topics)),
            "s": pa.array(scores.ravel()),
            "t": pa.array([tag] * (n_topics * depth)),
        }
    )
    _write(table, path)
    return docs


def make_qrels(rng: np.random.Generator, topics: np.ndarray, retrieved: np.ndarray,
               collection: int, path: Path) -> None:
    """~30 judgments per topic: 20 from the run's top 200, 10 anywhere; grades 0-3."""
    rows_q, rows_d = [], []
    for i, qid in enumerate(topics):
        top = retrieved[i, : min(200, retrieved.shape[1])]
        picked = np.unique(np.concatenate([rng.choice(top, 20, replace=False),
                                           rng.choice(collection, 10)]))
        rows_q.append(np.full(len(picked), qid))
        rows_d.append(picked)
    q = np.concatenate(rows_q)
    d = np.concatenate(rows_d)
    grades = rng.choice(4, size=len(q), p=[0.5, 0.25, 0.15, 0.1])
    table = pa.table(
        {
            "q": pa.array(q),
            "i": pa.array(["0"] * len(q)),
            "d": pc.binary_join_element_wise("doc", pc.cast(pa.array(d), pa.string()), ""),
            "g": pa.array(grades),
        }
    )
    _write(table, path)


def generate(workdir: Path) -> dict[str, tuple[Path, list[Path]]]:
    rng = np.random.default_rng(SEED)
    cases = {}
    big = workdir / "big"
    big.mkdir(exist_ok=True)
    if not (big / "qrels.txt").exists():
        topics = np.array([str(100000 + i) for i in range(7000)])
        docs = make_run(rng, topics, 1000, 5_000_000, "bigrun", big / "run.txt")
        make_qrels(rng, topics, docs, 5_000_000, big / "qrels.txt")
    cases[BIG] = (big / "qrels.txt", [big / "run.txt"])
    many = workdir / "many"
    many.mkdir(exist_ok=True)
    runs = [many / f"run{i:02d}.txt" for i in range(50)]
    if not (many / "qrels.txt").exists():
        topics = np.array([str(301 + i) for i in range(500)])
        first = None
        for i, path in enumerate(runs):
            docs = make_run(rng, topics, 1000, 500_000, f"run{i:02d}", path)
            first = docs if first is None else first
        make_qrels(rng, topics, first, 500_000, many / "qrels.txt")
    cases["500 topics x 1000 docs, 50 runs"] = (many / "qrels.txt", runs)
    return cases


# ------------------------------------------------------------------------ the timings


def time_pytrec_eval(qrels_path: Path, run_paths: list[Path]):
    import pytrec_eval

    start = time.perf_counter()
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as fh:
        for line in fh:
            qid, _, doc, grade = line.split()
            qrels.setdefault(qid, {})[doc] = int(grade)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES)
    results = []
    for path in run_paths:
        run: dict[str, dict[str, float]] = {}
        with open(path) as fh:
            for line in fh:
                qid, _, doc, _, score, _ = line.split()
                run.setdefault(qid, {})[doc] = float(score)
        per_topic = evaluator.evaluate(run)
        means = {m: float(np.mean([v[m] for v in per_topic.values()])) for m in COMPARED}
        results.append((per_topic, means))
    return time.perf_counter() - start, results


def time_pooling(qrels_path: Path, run_paths: list[Path]):
    from pooling import evaluate

    start = time.perf_counter()
    result = evaluate(qrels_path, run_paths, MEASURES)
    return time.perf_counter() - start, result


def stored_store(workdir: Path, qrels_path: Path, run_path: Path) -> Path:
    """The case's qrels and run imported into a store once (the import is not timed)."""
    from pooling.store import Store

    path = workdir / "big.duckdb"
    if not path.exists():
        with Store.create(path) as store:
            store.import_qrels(qrels_path, name="bench")
            store.import_runs([run_path])
    return path


def time_stored(store_path: Path):
    """`pooling evaluate` on the stored run, its cached values dropped first."""
    from pooling.store import Store
    from pooling.store.evaluate import evaluate_store

    with Store(store_path) as store:
        store.con.execute("DELETE FROM eval_results")
        start = time.perf_counter()
        result = evaluate_store(store, qrels="bench", measures=MEASURES, missing_topics="error")
        return time.perf_counter() - start, result


def peak_rss_mb(qrels_path: Path, run_paths: list[Path]) -> float:
    """Peak RSS of a fresh interpreter running the same evaluation.

    Read from the child's own /proc VmHWM: rusage's ru_maxrss would include this big
    parent's RSS, which Linux carries across fork and exec.
    """
    code = (
        "import sys, re; from pooling import evaluate; "
        f"evaluate(sys.argv[1], sys.argv[2:], {MEASURES!r}); "
        "print(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(qrels_path), *map(str, run_paths)],
                         check=True, capture_output=True, text=True).stdout
    return int(out.split()[-1]) / 1024


def cli_seconds(qrels_path: Path, run_paths: list[Path]) -> float:
    """`pooling eval` as a command, interpreter start-up and printing included."""
    args = [sys.executable, "-m", "pooling", "eval", *sum((["-m", m] for m in MEASURES), [])]
    start = time.perf_counter()
    subprocess.run([*args, str(qrels_path), *map(str, run_paths)], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def disagreements(theirs, ours) -> int:
    bad = 0
    for (per_topic, _), run in zip(theirs, ours.runs, strict=True):
        for t, qid in enumerate(run.query_ids):
            for m in COMPARED:
                if f"{per_topic[qid][m]:.4f}" != f"{run.per_query[m][t]:.4f}":
                    bad += 1
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where to keep generated data (default: a temporary folder)")
    parser.add_argument("--repeat", type=int, default=1, help="timings to take (best is kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        print(f"generating data in {workdir} (seed {SEED}) ...", flush=True)
        cases = generate(workdir)
        header = (f"{'case':34} {'pytrec_eval s':>13} {'pooling s':>10} {'ratio':>7} "
                  f"{'CLI s':>7} {'peak RSS MB':>11} {'mismatches':>10}")
        rows = []
        for name, (qrels, runs) in cases.items():
            theirs_s, theirs = min((time_pytrec_eval(qrels, runs) for _ in range(args.repeat)),
                                   key=lambda r: r[0])
            if name == BIG:
                big_theirs = theirs_s
            ours_s, ours = min((time_pooling(qrels, runs) for _ in range(args.repeat)),
                               key=lambda r: r[0])
            rss = peak_rss_mb(qrels, runs)
            cli = cli_seconds(qrels, runs)
            bad = disagreements(theirs, ours)
            rows.append(f"{name:34} {theirs_s:13.2f} {ours_s:10.2f} {theirs_s / ours_s:6.1f}x "
                        f"{cli:7.2f} {rss:11.0f} {bad:10d}")
            print(rows[-1], flush=True)
        qrels, runs = cases[BIG]
        store_path = stored_store(workdir, qrels, runs[0])
        stored_s, _ = min((time_stored(store_path) for _ in range(args.repeat)),
                          key=lambda r: r[0])
        rows.append(f"{'same, stored run (pooling evaluate)':34} {big_theirs:13.2f} "
                    f"{stored_s:10.2f} {big_theirs / stored_s:6.1f}x {'':>7} {'':>11} {'':>10}")
        print(rows[-1], flush=True)
        print()
        print(header)
        print("\n".join(rows))
        print("targets: ratio >= 7.0x on both cases; peak RSS <= 600 MB on the 7M-line run; "
              "the stored run faster than its file")


if __name__ == "__main__":
    main()
