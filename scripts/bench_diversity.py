#!/usr/bin/env python
"""Benchmark the diversity measures: `pooling eval -m ndeval` against pyndeval, each a fresh
process started from the shell.

Generates (fixed seed) subtopic qrels for 200 topics with 6 subtopics each (400 judged
documents a topic, one line per document and subtopic, grades 0-2, about a third of the
documents relevant to some subtopic) and 50 runs x 200 topics x 1,000 documents full of
score ties. Both tools are timed as people run them, a new process each time, start-up
included (medians of --repeat runs): `pooling eval -m ndeval --format ndeval` on the 50 run
files, and a small script reading the same files with Python and giving each run to
pyndeval (one `RelevanceEvaluator` for all runs, ndeval's measures), as its users do.
Per-topic values are checked to agree to ndeval's printed precision. Target: `pooling eval`
at least 5x faster than pyndeval.

    .venv/bin/python scripts/bench_diversity.py [--workdir DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

SEED = 20261127
TOPICS, SUBTOPICS, JUDGED, COLLECTION, RUNS, DEPTH = 200, 6, 400, 3000, 50, 1000
HALF_UNIT = 5e-7  # ndeval prints %.6f

# What a pyndeval user writes: read the files, evaluate each run, print the values as JSON.
PYNDEVAL_SCRIPT = """\
import json, sys
import pyndeval

def read_qrels(path):
    with open(path) as fh:
        return [(q, s, d, int(r)) for q, s, d, r in (line.split() for line in fh)]

def read_run(path):
    with open(path) as fh:
        return [(f[0], f[2], float(f[4])) for f in (line.split() for line in fh)]

evaluator = pyndeval.RelevanceEvaluator(read_qrels(sys.argv[1]))
out = {}
for path in sys.argv[2:]:
    values = evaluator.evaluate(read_run(path))
    measures = pyndeval.DEFAULT_MEASURES
    values["amean"] = {m: sum(v[m] for v in values.values()) / len(values) for m in measures}
    out[path] = values
json.dump(out, sys.stdout)
"""


def _write(table: pa.Table, path: Path) -> None:
    pcsv.write_csv(
        table, path, pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    )


def make_data(work: Path) -> tuple[Path, list[Path]]:
    """The subtopic qrels and the run files (written once per work directory)."""
    qrels_path = work / "subtopics.qrels"
    runs = [work / f"run{r:02d}.txt" for r in range(RUNS)]
    if qrels_path.exists() and all(p.exists() for p in runs):
        return qrels_path, runs
    rng = np.random.default_rng(SEED)
    topics = np.arange(1, TOPICS + 1)
    # qrels: JUDGED docs per topic, each judged against every subtopic
    judged = np.stack([rng.choice(COLLECTION, JUDGED, replace=False) for _ in topics])
    q = np.repeat(topics, JUDGED * SUBTOPICS)
    s = np.tile(np.repeat(np.arange(1, SUBTOPICS + 1), JUDGED), TOPICS)
    d = np.concatenate([np.tile(judged[t], SUBTOPICS) for t in range(TOPICS)])
    grade = np.where(rng.random(len(q)) < 0.07, rng.choice([1, 1, 2], len(q)), 0)
    _write(pa.table({"q": q.astype(str), "s": s.astype(str),
                     "d": np.char.add(np.char.add(q.astype(str), "-"), d.astype(str)),
                     "r": grade}), qrels_path)
    # runs: DEPTH docs per topic out of COLLECTION, scores with one decimal (many ties)
    for path in runs:
        parts = {"q": [], "q0": [], "d": [], "rank": [], "score": [], "tag": []}
        for t in topics:
            docs = rng.choice(COLLECTION, DEPTH, replace=False)
            score = np.sort(np.round(rng.random(DEPTH) * 50) / 10)[::-1]  # heavy ties
            parts["q"].append(np.full(DEPTH, str(t)))
            parts["d"].append(np.char.add(f"{t}-", docs.astype(str)))
            parts["rank"].append(np.arange(1, DEPTH + 1))
            parts["score"].append(score)
        n = TOPICS * DEPTH
        table = pa.table({
            "q": np.concatenate(parts["q"]), "q0": np.full(n, "Q0"),
            "d": np.concatenate(parts["d"]), "rank": np.concatenate(parts["rank"]),
            "score": np.concatenate(parts["score"]), "tag": np.full(n, path.stem)})
        _write(table, path)
    return qrels_path, runs


def timed(command: list[str], repeat: int, cwd: Path) -> tuple[float, bytes]:
    """Median wall time of `repeat` fresh processes, and the last one's stdout."""
    times, out = [], b""
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
        out = done.stdout
    return statistics.median(times), out


def check_agreement(ours: bytes, theirs: bytes, runs: list[Path]) -> int:
    """Compare every value of both outputs; returns how many values were compared."""
    expected = json.loads(theirs)
    by_run = {Path(p).stem: values for p, values in expected.items()}
    compared = 0
    for row in csv.DictReader(io.StringIO(ours.decode())):
        if row["runid"] == "runid":  # the header of the next run's block
            continue
        values = by_run[row["runid"]][row["topic"]]
        for measure, value in values.items():
            if abs(float(row[measure]) - value) > HALF_UNIT + 1e-12:
                raise SystemExit(f"disagree: {row['runid']} {row['topic']} {measure} "
                                 f"{row[measure]} vs {value}")
            compared += 1
    return compared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-diversity-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        qrels, runs = make_data(work)
        (work / "pyndeval_eval.py").write_text(PYNDEVAL_SCRIPT)
        names = [p.name for p in runs]
        pooling = [sys.executable, "-m", "pooling", "eval", "-m", "ndeval", "--format", "ndeval",
                   qrels.name, *names]
        peer = [sys.executable, "pyndeval_eval.py", qrels.name, *names]
        ours_s, ours = timed(pooling, args.repeat, work)
        theirs_s, theirs = timed(peer, args.repeat, work)
        compared = check_agreement(ours, theirs, runs)
        print(f"{RUNS} runs x {TOPICS} topics x {DEPTH} docs, {SUBTOPICS} subtopics a topic "
              f"({compared:,} values agree to ndeval's printed precision); medians of "
              f"{args.repeat} fresh processes\n")
        print("| case | pyndeval | `pooling eval -m ndeval` | faster |")
        print("|---|---|---|---|")
        print(f"| {RUNS} runs x {TOPICS} topics x {DEPTH:,} docs | {theirs_s:.2f} s | "
              f"{ours_s:.2f} s | {theirs_s / ours_s:.1f}x |")
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
