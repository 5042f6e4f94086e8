#!/usr/bin/env python
"""Benchmark `pooling eval` against pytrec_eval, each a fresh process started from the shell.

Generates (fixed seed) qrels for 7,000 topics (~30 judged each, grades 0-3) with a
7,000 x 1,000 run full of score ties, and a 50-run x 500-topic case. Both tools are timed as
people run them, a new process each time, start-up included (medians of --repeat runs):
pytrec_eval reading the files with Python and evaluating, as its users do, and the
`pooling eval` command. Per-topic values are checked to agree, pooling's peak RSS is read
with GNU time, and both cases, imported into a store once (untimed), are scored by the
`pooling evaluate` command (cached values dropped before each run). What a command pays
besides reading a run's rows is shown from a file and from a store: a one-line run, and the
big case's qrels with a run of one line per topic. The in-process time of
`pooling.evaluate` is printed for reference. Targets: `pooling eval` >= 7x faster than
pytrec_eval on the big run and >= 8x on the 50 runs, peak RSS <= 600 MB on the big run, the
stored big run in <= 0.8x the time of its file.

--scaling instead prints time and peak RSS of `pooling eval` for 1, 10 and 100 runs (500
topics x 1,000) and for 1k, 10k and 100k topics (one run of 1,000 per topic).

    .venv/bin/python scripts/bench_eval.py [--workdir DIR] [--repeat 5] [--scaling]
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import statistics
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
MANY = "500 topics x 1000 docs, 50 runs"


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
    cases[MANY] = (many / "qrels.txt", runs)
    return cases


# ------------------------------------------------------------------------ the timings

PEER = f"""
import sys, pickle, pytrec_eval
qrels_path, dump, *run_paths = sys.argv[1:]
measures = {PYTREC_MEASURES!r}
qrels = {{}}
with open(qrels_path) as fh:
    for line in fh:
        qid, _, doc, grade = line.split()
        qrels.setdefault(qid, {{}})[doc] = int(grade)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
results = []
for path in run_paths:
    run = {{}}
    with open(path) as fh:
        for line in fh:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {{}})[doc] = float(score)
    per_topic = evaluator.evaluate(run)
    names = next(iter(per_topic.values())).keys()
    means = {{m: sum(v[m] for v in per_topic.values()) / len(per_topic) for m in names}}
    results.append((per_topic, means))
if dump != "-":
    with open(dump, "wb") as fh:
        pickle.dump(results, fh)
"""


def seconds(command: list[str], prepare=None) -> float:
    """Wall time of one fresh process (its output discarded)."""
    if prepare is not None:
        prepare()
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:3])} … failed:\n{done.stderr}")
    return took


def median_seconds(command: list[str], repeat: int, prepare=None) -> float:
    seconds(command, prepare)  # warm the page cache and the bytecode
    return statistics.median(seconds(command, prepare) for _ in range(repeat))


def peer_command(qrels: Path, runs: list[Path], dump: str = "-") -> list[str]:
    return [sys.executable, "-c", PEER, str(qrels), dump, *map(str, runs)]


def eval_command(qrels: Path, runs: list[Path]) -> list[str]:
    pooling = str(Path(sys.executable).with_name("pooling"))
    return [pooling, "eval", *sum((["-m", m] for m in MEASURES), []), str(qrels),
            *map(str, runs)]


def pytrec_results(qrels: Path, runs: list[Path], workdir: Path):
    """pytrec_eval's values (one untimed run, also the warm-up)."""
    dump = workdir / "pytrec.pickle"
    subprocess.run(peer_command(qrels, runs, str(dump)), check=True)
    with open(dump, "rb") as fh:
        results = pickle.load(fh)
    dump.unlink()
    return results


def time_pooling(qrels_path: Path, run_paths: list[Path]):
    from pooling import evaluate

    start = time.perf_counter()
    result = evaluate(qrels_path, run_paths, MEASURES)
    return time.perf_counter() - start, result


def stored_store(path: Path, qrels_path: Path, run_paths: list[Path]) -> Path:
    """A case's qrels and runs imported into a store once (the import is not timed)."""
    from pooling.store import Store

    if not path.exists():
        with Store.create(path) as store:
            store.import_qrels(qrels_path, name="bench")
            store.import_runs(run_paths)
    return path


def drop_cached(store_path: Path) -> None:
    """Forget the store's cached values, so `pooling evaluate` computes them."""
    import duckdb

    con = duckdb.connect(str(store_path))
    con.execute("DELETE FROM eval_results")
    con.execute("CHECKPOINT")
    con.close()


def first_judged(qrels: Path) -> list[str]:
    """One run line per topic of the qrels: its first judged document."""
    lines, seen = [], set()
    with open(qrels, encoding="utf-8") as fh:
        for line in fh:
            topic, _, doc, _ = line.split()
            if topic not in seen:
                seen.add(topic)
                lines.append(f"{topic} Q0 {doc} 1 1.0 floor")
    return lines


def evaluate_command(store_path: Path) -> list[str]:
    pooling = str(Path(sys.executable).with_name("pooling"))
    return [pooling, "evaluate", str(store_path), "--qrels", "bench",
            *sum((["-m", m] for m in MEASURES), [])]


def peak_rss_mb(command: list[str]) -> float:
    """Peak RSS of the command, read by GNU time (the child's own high-water mark)."""
    gnu_time = shutil.which("time") or "/usr/bin/time"
    if not os.path.exists(gnu_time):
        return float("nan")
    out = subprocess.run([gnu_time, "-f", "%M", *command], check=True, text=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).stderr
    return int(out.strip().splitlines()[-1]) / 1024


def disagreements(theirs, ours) -> int:
    bad = 0
    for (per_topic, _), run in zip(theirs, ours.runs, strict=True):
        for t, qid in enumerate(run.query_ids):
            for m in COMPARED:
                if f"{per_topic[qid][m]:.4f}" != f"{run.per_query[m][t]:.4f}":
                    bad += 1
    return bad


# ------------------------------------------------------------------------ scaling


def scaling_run(path: Path, topics: int, depth: int, seed: int, tag: str) -> None:
    """A run with distinct docs per topic (rank * a prime, shifted) and tied 2-decimal scores."""
    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // depth)
    with open(path, "wb") as fh:
        for first in range(0, topics, chunk):
            n = min(chunk, topics - first)
            rank = np.tile(np.arange(1, depth + 1), n)
            offset = np.repeat(rng.integers(0, 50_000_000, size=n), depth)
            docs = (offset + rank * 104_729) % 50_000_000
            scores = np.round(np.sort(rng.random((n, depth)), axis=1)[:, ::-1] * 3, 2).ravel()
            table = pa.table({
                "q": pa.array(np.repeat(np.arange(first, first + n) + 100_000, depth)),
                "i": pa.array(np.full(n * depth, "Q0")),
                "d": pc.binary_join_element_wise("doc", pc.cast(pa.array(docs), pa.string()), ""),
                "r": pa.array(rank), "s": pa.array(scores), "t": pa.array(np.full(n * depth, tag)),
            })
            pcsv.write_csv(table, fh, pcsv.WriteOptions(include_header=False, delimiter=" ",
                                                        quoting_style="none"))


def scaling_qrels(path: Path, topics: int, depth: int, seed: int) -> None:
    """30 judgments per topic: 20 of the first run's docs, 10 others; grades 0-3."""
    rng = np.random.default_rng(seed)
    rank = np.concatenate([rng.choice(depth, 20, replace=False) + 1 for _ in range(topics)])
    offset = np.repeat(np.random.default_rng(seed).integers(0, 50_000_000, size=topics), 20)
    docs = np.concatenate([(offset + rank * 104_729) % 50_000_000,
                           rng.integers(50_000_000, 60_000_000, size=topics * 10)])
    q = np.concatenate([np.repeat(np.arange(topics), 20), np.repeat(np.arange(topics), 10)])
    order = np.argsort(q, kind="stable")
    table = pa.table({
        "q": pa.array(q[order] + 100_000), "i": pa.array(np.full(len(q), "0")),
        "d": pc.binary_join_element_wise("doc", pc.cast(pa.array(docs[order]), pa.string()), ""),
        "g": pa.array(rng.choice(4, size=len(q), p=[0.5, 0.25, 0.15, 0.1])),
    })
    _write(table, path)


def scaling(workdir: Path, repeat: int) -> None:
    """Time and peak RSS of `pooling eval` as the runs, then the topics, grow tenfold."""
    base = workdir / "scaling"
    base.mkdir(exist_ok=True)
    (base / "one.qrels").write_text("1 0 d1 1\n")
    (base / "one.run").write_text("1 Q0 d1 1 1.0 one\n")
    startup = median_seconds(eval_command(base / "one.qrels", [base / "one.run"]), repeat)
    print(f"start-up (a one-line run): {startup:.3f} s; 'per M lines' is the time beyond it")
    print(f"{'case':34} {'lines':>12} {'pooling eval s':>15} {'per M lines':>12} "
          f"{'peak RSS MB':>12}")
    cases = []
    for n_runs in (1, 10, 100):
        cases.append((f"{n_runs} run(s) x 500 topics", 500, n_runs))
    for topics in (1_000, 10_000, 100_000):
        cases.append((f"1 run x {topics:,} topics", topics, 1))
    for name, topics, n_runs in cases:
        folder = base / f"t{topics}"
        folder.mkdir(exist_ok=True)
        qrels = folder / "qrels.txt"
        if not qrels.exists():
            scaling_qrels(qrels, topics, 1000, seed=topics)
        runs = [folder / f"run{i:03d}.txt" for i in range(n_runs)]
        for i, run in enumerate(runs):
            if not run.exists():
                scaling_run(run, topics, 1000, seed=topics * 1000 + i, tag=f"r{i}")
        command = eval_command(qrels, runs)
        took = median_seconds(command, repeat)
        lines = topics * 1000 * n_runs
        print(f"{name:34} {lines:>12,} {took:>15.2f} {(took - startup) / lines * 1e6:>12.3f} "
              f"{peak_rss_mb(command):>12.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where to keep generated data (default: a temporary folder)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each (median kept)")
    parser.add_argument("--scaling", action="store_true",
                        help="time 1/10/100 runs and 1k/10k/100k topics instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        if args.scaling:
            scaling(workdir, args.repeat)
            return
        print(f"generating data in {workdir} (seed {SEED}) ...", flush=True)
        cases = generate(workdir)
        header = (f"{'case':36} {'pytrec_eval s':>13} {'pooling eval s':>14} {'ratio':>7} "
                  f"{'in-process s':>12} {'peak RSS MB':>11} {'mismatches':>10}")
        rows = []
        file_cli: dict[str, float] = {}
        for name, (qrels, runs) in cases.items():
            theirs = pytrec_results(qrels, runs, workdir)
            theirs_s = statistics.median(seconds(peer_command(qrels, runs))
                                         for _ in range(args.repeat))
            ours_cli = median_seconds(eval_command(qrels, runs), args.repeat)
            ours_s, ours = min((time_pooling(qrels, runs) for _ in range(2)), key=lambda r: r[0])
            bad = disagreements(theirs, ours)
            del ours, theirs
            rss = peak_rss_mb(eval_command(qrels, runs))
            file_cli[name] = ours_cli
            rows.append(f"{name:36} {theirs_s:13.2f} {ours_cli:14.2f} {theirs_s / ours_cli:6.1f}x "
                        f"{ours_s:12.2f} {rss:11.0f} {bad:10d}")
            print(rows[-1], flush=True)
        # The same runs read from a store by `pooling evaluate`, cached values dropped first.
        stored_rows = []
        ratios = {}
        for name, filename in ((BIG, "big.duckdb"), (MANY, "many.duckdb")):
            qrels, runs = cases[name]
            store_path = stored_store(workdir / filename, qrels, runs)
            command = evaluate_command(store_path)
            stored = median_seconds(command, args.repeat, prepare=lambda p=store_path: drop_cached(p))
            drop_cached(store_path)
            ratios[name] = stored / file_cli[name]
            stored_rows.append(f"{'stored: ' + name:36} {'':>13} {stored:14.2f} {'':>7} {'':>12} "
                               f"{peak_rss_mb(command):11.0f}")
        # What a stored evaluation pays besides reading the run's rows, beside the same from
        # files: a one-line run (start-up), and the big case's qrels with a run of one line per
        # topic (start-up, the qrels, 7,000 topics' values computed and cached).
        floors = []
        qrels = cases[BIG][0]
        for label, floor_qrels, lines in (
                ("a one-line run", None, ["1 Q0 d1 1 1.0 floor"]),
                ("the big qrels, one line per topic", qrels, first_judged(qrels))):
            folder = workdir / ("floor-one" if floor_qrels is None else "floor-topics")
            folder.mkdir(exist_ok=True)
            if floor_qrels is None:
                floor_qrels = folder / "qrels.txt"
                floor_qrels.write_text("1 0 d1 1\n")
            run = folder / "run.txt"
            run.write_text("".join(line + "\n" for line in lines))
            store_path = stored_store(folder / "floor.duckdb", floor_qrels, [run])
            from_file = median_seconds(eval_command(floor_qrels, [run]), args.repeat)
            from_store = median_seconds(evaluate_command(store_path), args.repeat,
                                        prepare=lambda p=store_path: drop_cached(p))
            floors.append((label, from_file, from_store))
        print()
        print(header)
        print("\n".join(rows + stored_rows))
        print()
        print(f"{'without the rows of a run':36} {'file s':>13} {'store s':>14}")
        for label, from_file, from_store in floors:
            print(f"{label:36} {from_file:13.2f} {from_store:14.2f}")
        print()
        for name, ratio in ratios.items():
            print(f"stored / file (pooling evaluate / pooling eval), {name}: {ratio:.2f}"
                  + ("  (target <= 0.80)" if name == BIG else ""))
        print(f"the target for the big run is {0.8 * file_cli[BIG]:.2f} s; from a store, its "
              f"qrels with one line per topic take {floors[-1][2]:.2f} s")
        print("targets: ratio >= 7.0x on the big run and >= 8.0x on the 50 runs; peak RSS <= 600 "
              "MB on the big run")


if __name__ == "__main__":
    main()
