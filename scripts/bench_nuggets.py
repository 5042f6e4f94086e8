#!/usr/bin/env python
"""Benchmark nugget recall: pooling's scoring against nuggetizer's metrics on the same records.

Generates (fixed seed) assignments for 300 topics x 50 runs x 30 nuggets (450,000 assigned
nuggets; importance and support drawn at random, a tenth of the topics without a vital
nugget) and times, medians of --repeat:

- in one process, scoring only: `pooling.evaluation.nuggets.score_assigned` over the Arrow
  tables, against nuggetizer's `calculate_nugget_scores` on every record and
  `calculate_global_metrics` on each run's records, as its `calculate_metrics.py` does;
- fresh processes from the shell: `pooling eval -R nuggets` on the 50 runs' assignment files
  (reading and checking every line included), against a script reading the same files and
  scoring them with nuggetizer.

Every run's four means are checked to agree to the printed precision first. Target: the
in-process scoring at least 20x faster than nuggetizer's.

    .venv/bin/python scripts/bench_nuggets.py [--workdir DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

SEED = 20261208
TOPICS, RUNS, NUGGETS = 300, 50, 30
MEASURES = ("strict_vital", "strict_all", "vital", "all")

NUGGETIZER_SCRIPT = """\
import json, sys
from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores

out = {}
for path in sys.argv[1:]:
    with open(path) as fh:
        records = [json.loads(line) for line in fh]
    for r in records:
        calculate_nugget_scores(r["qid"], r["nuggets"])
    out[path] = calculate_global_metrics(records)
json.dump(out, sys.stdout)
"""


def make_records(rng: random.Random) -> list[dict]:
    topics_without_vital = set(rng.sample(range(TOPICS), TOPICS // 10))
    importance = {(q, i): "okay" if q in topics_without_vital else rng.choice(("vital", "okay"))
                  for q in range(TOPICS) for i in range(NUGGETS)}
    records = []
    for r in range(RUNS):
        for q in range(TOPICS):
            records.append({
                "qid": f"2024-{q:05d}", "query": "q", "run_id": f"run{r:02d}",
                "answer_text": "", "response_length": 0,
                "nuggets": [{"text": f"nugget {i}", "importance": importance[(q, i)],
                             "assignment": rng.choice(("support", "partial_support", "not_support"))}
                            for i in range(NUGGETS)]})
    return records


def tables(records: list[dict]) -> tuple[pa.Table, pa.Table]:
    """The records as the canonical tables a reader makes of them at the boundary (labels
    as `vital` and support grades), built outside the timing as nuggetizer's dicts are."""
    from pooling.formats.nugget_files import SUPPORT_GRADES

    answers = pa.table({"run_id": [r["run_id"] for r in records],
                        "query_id": [r["qid"] for r in records]})
    nuggets = pa.table({
        "answer": pa.array([i for i, r in enumerate(records) for _ in r["nuggets"]], pa.int64()),
        "vital": [n["importance"] == "vital" for r in records for n in r["nuggets"]],
        "grade": pa.array([SUPPORT_GRADES[n["assignment"]] for r in records for n in r["nuggets"]],
                          pa.int8()),
    })
    return answers, nuggets


def _campaign_store(work: Path, records: list[dict], files: list[str]) -> Path:
    """A store holding the answers (as TSV responses), the nuggets (one version) and the
    assignment files imported as version `bench`, as an organiser's campaign would."""
    from pooling.nuggets.assignments import import_assignments
    from pooling.store import Store
    from pooling.store.answers import import_answers
    from pooling.store.nugget_banks import import_nuggets

    path = work / "campaign.duckdb"
    path.unlink(missing_ok=True)
    answers = work / "answers.tsv"
    answers.write_text("".join(f"{r['qid']}\t{r['run_id']}\tAn answer.\n" for r in records))
    bank = work / "nuggets.jsonl"
    firsts = {r["qid"]: r for r in records if r["run_id"] == "run00"}
    bank.write_text("".join(json.dumps({"qid": q, "query": "q", "nuggets": [
        {"text": n["text"], "importance": n["importance"]} for n in r["nuggets"]]}) + "\n"
        for q, r in firsts.items()))
    with Store.create(path) as s:
        import_answers(s, [answers], add_topics=True)
        version = import_nuggets(s, bank, "bench").version
        import_assignments(s, files, version, "bench")
    return path


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores

    from pooling.evaluation.nuggets import score_assigned

    records = make_records(random.Random(SEED))
    answers, nuggets = tables(records)
    by_run: dict[str, list[dict]] = {}
    for r in records:
        by_run.setdefault(r["run_id"], []).append(r)

    def theirs() -> dict[str, dict]:
        for r in records:
            calculate_nugget_scores(r["qid"], r["nuggets"])
        return {run: calculate_global_metrics(rs) for run, rs in by_run.items()}

    ours = score_assigned(answers, nuggets)
    expected = theirs()
    for run in ours.runs:
        for m in MEASURES:
            assert f"{run.summary[m]:.4f}" == f"{expected[run.run_id][m + '_score']:.4f}", (run.run_id, m)
    t_ours = median_time(lambda: score_assigned(answers, nuggets), args.repeat)
    t_theirs = median_time(theirs, args.repeat)

    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-nuggets-"))
    work.mkdir(parents=True, exist_ok=True)
    files = []
    for run, rs in by_run.items():
        path = work / f"{run}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rs))
        files.append(str(path))
    script = work / "nuggetizer_metrics.py"
    script.write_text(NUGGETIZER_SCRIPT)
    pooling = [str(Path(sys.executable).with_name("pooling")), "eval", "-R", "nuggets"]
    fresh_ours = median_time(lambda: subprocess.run([*pooling, *files], check=True,
                                                    stdout=subprocess.DEVNULL), args.repeat)
    fresh_theirs = median_time(lambda: subprocess.run([sys.executable, str(script), *files],
                                                      check=True, stdout=subprocess.DEVNULL),
                               args.repeat)
    store = _campaign_store(work, records, files)
    score = [str(Path(sys.executable).with_name("pooling")), "nuggets", "score", str(store),
             "--assignments", "bench"]
    from_store = median_time(lambda: subprocess.run(score, check=True, stdout=subprocess.DEVNULL),
                             args.repeat)
    rows = [("score 450,000 assigned nuggets (one process)", t_ours, t_theirs),
            ("read + score 50 files (fresh process)", fresh_ours, fresh_theirs),
            ("pooling nuggets score from the store (fresh)", from_store, fresh_theirs)]
    print(f"{TOPICS} topics x {RUNS} runs x {NUGGETS} nuggets, medians of {args.repeat}")
    print(f"{'':48s} {'pooling':>10s} {'nuggetizer':>11s} {'ratio':>7s}")
    for name, a, b in rows:
        print(f"{name:48s} {a * 1000:8.1f}ms {b * 1000:9.1f}ms {b / a:6.1f}x")
    if args.workdir is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
