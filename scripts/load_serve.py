#!/usr/bin/env python
"""Load and crash check for `pooling serve` (not a timed test; prints figures).

1. Load: N simulated assessors on loopback judge their assigned documents the way the page
   does (GET the topic's next document, POST the grade with the submission id the page
   carried), some submissions deliberately retried (sequential re-sends and concurrent
   double clicks). Prints throughput and p50/p95/p99 latencies, then stops the server and
   checks the store: every acknowledged submission stored, none twice.
2. Crash: the same on a second round, SIGKILLing the server mid-load and restarting it; the
   clients keep retrying with the same submission ids. Every submission that got a 2xx must
   be in the store exactly once.

    .venv/bin/python scripts/load_serve.py [--judgments 10000] [--assessors 20]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pooling.assessors import add_assessor, assign  # noqa: E402
from pooling.rounds import create_round  # noqa: E402
from pooling.store import Store  # noqa: E402

DOC_ID = re.compile(r'data-doc-id="([^"]+)"')
SUBMISSION_ID = re.compile(r'data-submission-id="([^"]+)"')
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


# -- the campaign ------------------------------------------------------------------------------


@dataclass
class Campaign:
    path: Path
    tokens: dict[str, str]
    topics: dict[str, dict[str, list[str]]]  # round -> assessor -> topics


def build(workdir: Path, n_assessors: int, load_docs: int, crash_docs: int) -> Campaign:
    """One run; round `load` (2 topics per assessor of `load_docs` documents each) and round
    `crash` (1 topic per assessor of `crash_docs`); every document has a title and text."""
    path = workdir / "load.duckdb"
    rounds = {"load": (2 * n_assessors, load_docs, "L"), "crash": (n_assessors, crash_docs, "C")}
    rows: dict[str, list] = {"query_id": [], "doc_id": [], "rank": [], "score": []}
    docs = []
    for n_topics, depth, prefix in rounds.values():
        for t in range(n_topics):
            q = f"{prefix}{t:03d}"
            for r in range(depth):
                d = f"{q}-doc{r:04d}"
                rows["query_id"].append(q)
                rows["doc_id"].append(d)
                rows["rank"].append(r + 1)
                rows["score"].append(float(depth - r))
                docs.append({"doc_id": d, "title": f"Report {r} on topic {q}",
                             "text": f"Wind and solar energy report {r} for {q}. " * 20})
    (workdir / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (workdir / "topics.jsonl").write_text("".join(
        json.dumps({"query_id": q, "title": f"energy topic {q}", "description": "Energy reports.",
                    "narrative": "Relevant documents report energy figures."}) + "\n"
        for q in sorted(set(rows["query_id"]))))
    people = [f"a{i:02d}" for i in range(n_assessors)]
    with Store.create(path) as s:
        s.import_run(pa.table(rows), "A")
        s.import_topics(workdir / "topics.jsonl")
        s.import_documents(workdir / "docs.jsonl")
        tokens = {p: add_assessor(s, p).token for p in people}
        topics: dict[str, dict[str, list[str]]] = {}
        for name, (n_topics, depth, prefix) in rounds.items():
            qs = [f"{prefix}{t:03d}" for t in range(n_topics)]
            create_round(s, name, "depth", strategy_params={"depth": depth}, topics=qs)
            assign(s, name, people)
            # assign() gives topics round-robin over the assessors in query_id order
            topics[name] = {p: [q for i, q in enumerate(sorted(qs)) if i % n_assessors == k]
                            for k, p in enumerate(people)}
    return Campaign(path, tokens, topics)


# -- the server --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(store: Path, port: int) -> subprocess.Popen:
    """The server, its output appended to `<store>.serve.log` (a pipe nobody reads would fill
    up and stall the server)."""
    log = store.with_name(store.name + ".serve.log")
    with open(log, "a") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "pooling", "serve", str(store), "--port", str(port)],
                                cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/login", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.05)
    raise SystemExit("server did not start")


# -- simulated assessors -----------------------------------------------------------------------


@dataclass
class Tally:
    post_latency: list[float] = field(default_factory=list)
    page_latency: list[float] = field(default_factory=list)
    acked: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # sid -> (who, q, d)
    retries: int = 0
    double_clicks: int = 0
    duplicates_answered: int = 0
    errors_retried: int = 0


async def _request(client: httpx.AsyncClient, method: str, url: str, tally: Tally, **kw) -> httpx.Response:
    """Send until the server answers (a killed server is retried until it is back); a server
    error is retried a few times, then stops the run."""
    delay = 0.05
    server_errors = 0
    while True:
        try:
            response = await client.request(method, url, **kw)
        except httpx.TransportError:
            tally.errors_retried += 1
        else:
            if response.status_code < 500:
                return response
            server_errors += 1
            tally.errors_retried += 1
            if server_errors > 5:
                response.raise_for_status()
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)


async def assessor(base: str, who: str, token: str, round_id: str, topics: list[str], quota: int,
                   tally: Tally, rng: random.Random, retry_rate: float, double_rate: float) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        await _request(client, "GET", "/login", tally, params={"token": token})
        csrf = CSRF.search((await _request(client, "GET", "/", tally)).text).group(1)
        headers = {"X-CSRF-Token": csrf}
        done = 0
        for q in topics:
            url = f"/rounds/{round_id}/topics/{q}"
            while done < quota:
                t0 = time.perf_counter()
                page = await _request(client, "GET", url, tally)
                tally.page_latency.append(time.perf_counter() - t0)
                match = DOC_ID.search(page.text)
                if match is None:  # the topic is done
                    break
                doc_id, sid = match.group(1), SUBMISSION_ID.search(page.text).group(1)
                body = {"doc_id": doc_id, "grade": rng.choice((0, 0, 1, 2)), "submission_id": sid,
                        "seconds": round(rng.uniform(2, 40), 1)}
                send = functools.partial(_request, client, "POST", url + "/judgments", tally,
                                         json=body, headers=headers)
                t0 = time.perf_counter()
                if rng.random() < double_rate:  # a double click: two identical POSTs at once
                    tally.double_clicks += 1
                    answers = await asyncio.gather(send(), send())
                else:
                    answers = [await send()]
                tally.post_latency.append(time.perf_counter() - t0)
                if rng.random() < retry_rate:  # the page re-sends (e.g. after a timeout)
                    tally.retries += 1
                    answers.append(await send())
                for a in answers:
                    a.raise_for_status()
                    tally.duplicates_answered += a.json()["duplicate"]
                tally.acked[sid] = (who, q, doc_id)
                done += 1


async def run_load(base: str, campaign: Campaign, round_id: str, total: int, tally: Tally,
                   seed: int, retry_rate: float, double_rate: float) -> float:
    people = sorted(campaign.tokens)
    quota, extra = divmod(total, len(people))
    rng = random.Random(seed)
    t0 = time.perf_counter()
    await asyncio.gather(*(
        assessor(base, p, campaign.tokens[p], round_id, campaign.topics[round_id][p],
                 quota + (1 if i < extra else 0), tally, random.Random(rng.random()),
                 retry_rate, double_rate)
        for i, p in enumerate(people)))
    return time.perf_counter() - t0


# -- checks ------------------------------------------------------------------------------------


def check_store(path: Path, round_id: str, tally: Tally) -> tuple[int, int, int]:
    """(acknowledged but missing, stored twice, stored without acknowledgement)."""
    with Store(path, read_only=True) as s:
        rows = s.con.execute(
            "SELECT submission_id, assessor_id, query_id, doc_id FROM judgments "
            "WHERE round_id = ? AND kind = 'judge'", [round_id]).fetchall()
    by_sid = Counter(r[0] for r in rows)
    by_item = Counter(r[1:] for r in rows)
    missing = sum(1 for sid in tally.acked if by_sid[sid] == 0)
    twice = sum(n - 1 for n in by_sid.values() if n > 1) + sum(n - 1 for n in by_item.values() if n > 1)
    unacked = sum(1 for sid in by_sid if sid not in tally.acked)
    return missing, twice, unacked


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] * 1000


def report(title: str, tally: Tally, elapsed: float) -> None:
    n = len(tally.acked)
    print(f"{title}: {n:,} judgments acknowledged in {elapsed:.1f} s = {n / elapsed:,.0f} judgments/s "
          f"({len(tally.post_latency) + len(tally.page_latency):,} page views and submissions)")
    print(f"  submit (POST) latency ms: p50 {pct(tally.post_latency, 50):.1f}  p95 "
          f"{pct(tally.post_latency, 95):.1f}  p99 {pct(tally.post_latency, 99):.1f}  max "
          f"{max(tally.post_latency) * 1000:.1f}  mean {statistics.fmean(tally.post_latency) * 1000:.1f}")
    print(f"  next-document page (GET) latency ms: p50 {pct(tally.page_latency, 50):.1f}  p95 "
          f"{pct(tally.page_latency, 95):.1f}  p99 {pct(tally.page_latency, 99):.1f}")
    print(f"  deliberate re-sends {tally.retries}, double clicks {tally.double_clicks}; answered "
          f"'duplicate' {tally.duplicates_answered}; transport errors/5xx retried {tally.errors_retried}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judgments", type=int, default=10_000)
    ap.add_argument("--assessors", type=int, default=20)
    ap.add_argument("--crash-judgments", type=int, default=2_000)
    ap.add_argument("--kill-at", type=float, default=0.4,
                    help="SIGKILL once this share of the crash phase's judgments is acknowledged")
    ap.add_argument("--retry-rate", type=float, default=0.05)
    ap.add_argument("--double-rate", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip-load", action="store_true", help="run only the crash phase")
    args = ap.parse_args()

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="pooling-load-"))
    workdir.mkdir(parents=True, exist_ok=True)
    per_assessor = -(-args.judgments // args.assessors)
    t0 = time.perf_counter()
    campaign = build(workdir, args.assessors, load_docs=per_assessor // 2 + 10,
                     crash_docs=-(-args.crash_judgments // args.assessors) + 5)
    print(f"store {campaign.path}: {args.assessors} assessors, built in {time.perf_counter() - t0:.1f} s")
    port = free_port()
    base = f"http://127.0.0.1:{port}"

    # 1. load
    missing1 = twice = unacked = 0
    if not args.skip_load:
        server = start_server(campaign.path, port)
        tally = Tally()
        elapsed = asyncio.run(run_load(base, campaign, "load", args.judgments, tally, args.seed,
                                       args.retry_rate, args.double_rate))
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        report(f"load ({args.assessors} concurrent assessors, loopback)", tally, elapsed)
        missing1, twice, unacked = check_store(campaign.path, "load", tally)
        print(f"  store: {missing1} acknowledged judgments missing (lost), {twice} stored twice, "
              f"{unacked} stored without an acknowledgement")

    # 2. SIGKILL mid-load, restart, clients retry with the same submission ids
    server = start_server(campaign.path, port)
    crash = Tally()
    kill = {}

    async def killer() -> None:
        while len(crash.acked) < args.kill_at * args.crash_judgments:
            await asyncio.sleep(0.01)
        kill["acked_before"] = len(crash.acked)
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        await asyncio.sleep(0.5)
        t = time.perf_counter()
        kill["server"] = await asyncio.to_thread(start_server, campaign.path, port)
        kill["restart_s"] = time.perf_counter() - t

    async def crash_phase() -> float:
        load = asyncio.create_task(run_load(base, campaign, "crash", args.crash_judgments, crash,
                                            args.seed + 1, args.retry_rate, args.double_rate))
        await killer()
        return await load

    elapsed = asyncio.run(crash_phase())
    restarted = kill["server"]
    restarted.send_signal(signal.SIGTERM)
    restarted.wait(timeout=30)
    print(f"crash: SIGKILLed the server mid-load, after {kill['acked_before']:,} acknowledged "
          f"judgments; restarted it in {kill['restart_s']:.1f} s; clients retried "
          f"{crash.errors_retried} failed requests with the same submission ids, and "
          f"{crash.duplicates_answered - crash.retries - crash.double_clicks} of those had been "
          f"committed before the kill (answered 'duplicate', stored once)")
    report("crash phase", crash, elapsed)
    missing, twice2, unacked2 = check_store(campaign.path, "crash", crash)
    print(f"  store: {missing} acknowledged judgments missing (lost), {twice2} stored twice, "
          f"{unacked2} stored without an acknowledgement")
    ok = missing1 == missing == twice == unacked == twice2 == unacked2 == 0
    print("OK: every acknowledged judgment is in the store exactly once" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
