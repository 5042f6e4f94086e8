#!/usr/bin/env python
"""Agreement at crowd scale: the sparse report against the dense, all-pairs one it replaced,
the organiser's round page and `pooling release` on a 2,000-worker crowd round.

The store (kept at --store for the next run) has the shape `scripts/load_serve.py --phases
crowdround --crowd-workers 2000` builds (20 topics × 600 documents, 40 gold documents per
topic, 2,000 workers, K=3, gold mixed in at 0.1), with every pair answered by K workers
directly through the library (`append_judgments`) instead of two minutes of simulated load:
36,000 answers, 3,600 more on gold, 2% "can't judge". Then prints one table:

- `agreement_report` on the round's answers by the first 50, 200, 400 and 2,000 workers,
  new (sparse) and old (`tests/agreement/dense_reference.py`, all pairs; up to --old-max);
- the round page's first view after the server starts (`pooling serve` pinned to one core
  with `taskset -c CORE`, logged in as the organiser), and a second view: wall seconds and
  the server's CPU seconds (what the view takes when the core is its own);
- `pooling release STORE DIR` as a process of its own (targets: page < 1 s, release < 60 s).

Usage: .venv/bin/python scripts/bench_agreement.py [--store out/crowd2000.duckdb] [--core 1]
       [--sizes 50,200,400,2000] [--old-max 400] [--skip-reports]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "tests" / "agreement"))
ROUND = "crowdk"


def build_store(path: Path, workers: int, k: int, gold_rate: float, seed: int = 2000) -> None:
    """The crowd round of load_serve.py's crowdround phase, every pair answered by `k`
    workers (module docstring)."""
    from load_serve import build_crowd_round

    from pooling.judging.judgments import append_judgments
    from pooling.store import Store

    work = Path(tempfile.mkdtemp(prefix="bench-agreement-"))
    campaign = build_crowd_round(work, workers, 20, 600, k, 40, gold_rate)
    rng = np.random.default_rng(seed)
    people = sorted(campaign.tokens)
    skill = rng.uniform(0.4, 0.95, len(people))  # each worker's chance of the true grade
    with Store(campaign.path) as s:
        pairs = s.sql("pool", "SELECT query_id, doc_id FROM pool_entries WHERE round_id = ? "
                      "ORDER BY query_id, doc_id", [ROUND]).fetchall()
        gold = s.sql("gold", "SELECT query_id, doc_id, relevance FROM qrels WHERE version"
                     " = 'gold'").fetchall()
        judgments = []
        for q, d in pairs:
            truth = int(rng.integers(0, 3))
            for w in rng.choice(len(people), size=k, replace=False):
                judgments.append(_answer(rng, people[w], q, d, truth, skill[w]))
        n_gold = int(len(judgments) * gold_rate)
        answered: set[tuple[int, int]] = set()
        while len(answered) < n_gold:
            answered.add((int(rng.integers(len(people))), int(rng.integers(len(gold)))))
        for w, g in sorted(answered):
            q, d, truth = gold[g]
            judgments.append(_answer(rng, people[w], q, d, truth, skill[w]))
        append_judgments(s, judgments)
    shutil.move(campaign.path, path)
    shutil.rmtree(work, ignore_errors=True)


def _answer(rng, who: str, q: str, d: str, truth: int, skill: float):
    from pooling.judging.history import Judgment

    if rng.random() < 0.02:
        return Judgment(ROUND, who, q, d, None, kind="unjudgeable", seconds=5.0)
    grade = truth if rng.random() < skill else int(rng.integers(0, 3))
    return Judgment(ROUND, who, q, d, grade, seconds=float(rng.uniform(2, 10)))


def organiser_token(path: Path) -> str:
    """A fresh token for the store's organiser (tokens are stored hashed)."""
    from pooling.judging.assessors import issue_token
    from pooling.store import Store

    with Store(path) as s:
        return issue_token(s, "org").token


def time_reports(path: Path, sizes: list[int], old_max: int) -> list[tuple[str, str, str]]:
    """(workers, new seconds, old seconds or "-") for each size."""
    from dense_reference import dense_report

    from pooling.agreement import agreement_report
    from pooling.judging.history import effective_judgments
    from pooling.store import Store

    with Store(path, read_only=True) as s:
        table = effective_judgments(s, ROUND).select(["query_id", "doc_id", "assessor_id",
                                                      "grade"])
        grades = [0, 1, 2]
    workers = sorted(set(table["assessor_id"].to_pylist()))
    rows = []
    for n in sizes:
        chosen = set(workers[:n])
        part = table.filter(np.array([a in chosen for a in table["assessor_id"].to_pylist()]))
        start = time.perf_counter()
        agreement_report(part, grades=grades)
        new = time.perf_counter() - start
        old = "-"
        if n <= old_max:
            start = time.perf_counter()
            dense_report(part, grades=grades)
            old = f"{time.perf_counter() - start:.2f}"
        rows.append((f"{n:,} workers ({part.num_rows:,} answers)", f"{new:.3f}", old))
    return rows


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_page(path: Path, core: int) -> list[tuple[float, float]]:
    """(wall seconds, the server's CPU seconds) of the round page's first view after the
    server starts and of a second one: on a shared machine the CPU time is what the view
    would take on a core of its own."""
    import httpx

    token = organiser_token(path)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(["taskset", "-c", str(core), sys.executable, "-m", "pooling",
                               "serve", str(path), "--port", str(port)], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=600) as client:
            deadline = time.monotonic() + 120
            while True:
                try:
                    client.get("/login")
                    break
                except httpx.HTTPError:
                    if time.monotonic() > deadline:
                        raise SystemExit("the server did not start") from None
                    time.sleep(0.1)
            client.get("/login", params={"token": token})
            times = []
            for _ in range(2):
                cpu, start = cpu_seconds(server.pid), time.perf_counter()
                reply = client.get(f"/organiser/rounds/{ROUND}")
                times.append((time.perf_counter() - start, cpu_seconds(server.pid) - cpu))
                reply.raise_for_status()
        return times
    finally:
        server.terminate()
        server.wait(60)


def time_release(path: Path) -> float:
    out = Path(tempfile.mkdtemp(prefix="bench-release-")) / "release"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pooling", "release", str(path), str(out)], cwd=REPO,
                   check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    shutil.rmtree(out.parent, ignore_errors=True)
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, default=REPO / "out" / "crowd2000.duckdb")
    ap.add_argument("--workers", type=int, default=2000)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--gold-rate", type=float, default=0.1)
    ap.add_argument("--sizes", default="50,200,400,2000")
    ap.add_argument("--old-max", type=int, default=400,
                    help="largest crowd the dense all-pairs report is timed on")
    ap.add_argument("--core", type=int, default=1, help="the core the server is pinned to")
    ap.add_argument("--skip-reports", action="store_true",
                    help="time the page and the release only")
    args = ap.parse_args()
    if not args.store.exists():
        args.store.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        build_store(args.store, args.workers, args.k, args.gold_rate)
        print(f"built {args.store} in {time.perf_counter() - start:.0f} s")
    sizes = [] if args.skip_reports else [int(n) for n in args.sizes.split(",")]
    rows = [(f"agreement_report, {label}", new, old) for label, new, old in
            time_reports(args.store, sizes, args.old_max)]
    (first, first_cpu), (again, again_cpu) = time_page(args.store, args.core)
    rows.append((f"round page, first view after start (server on core {args.core}): wall, "
                 "server CPU", f"{first:.2f}, {first_cpu:.2f}", "-"))
    rows.append(("round page, second view: wall, server CPU", f"{again:.2f}, {again_cpu:.2f}",
                 "-"))
    rows.append(("pooling release (process)", f"{time_release(args.store):.1f}", "-"))
    print("| what | seconds (sparse) | seconds (dense, all pairs) |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
