#!/usr/bin/env python
"""Load and crash check for `pooling serve` (not a timed test; prints figures).

0. Crowd: 200 simulated assessors, each thinking 2-10 s between judgments, for 120 s.
1. Load: N simulated assessors on loopback judge their assigned documents the way the page
   does (GET the topic's next document, POST the grade with the submission id the page
   carried), some submissions deliberately retried (sequential re-sends and concurrent
   double clicks). Prints throughput and p50/p95/p99 latencies, then stops the server and
   checks the store: every acknowledged submission stored, none twice.
2. Crash: the same on a second round, SIGKILLing the server mid-load and restarting it; the
   clients keep retrying with the same submission ids. Every submission that got a 2xx must
   be in the store exactly once.
3. Organiser paths: the crowd judges again; after a quiet third, the organiser asks
   GET /api/v1/rounds (as an organiser and as an assessor) every second, and adds assessors
   and assigns rounds through the served store, both as CLI commands (`pooling assessors add`,
   `pooling assign`: a fresh interpreter each) and from one warm client process (the served
   store's own cost). Prints p50/p95 of each beside the judging POST p95 of the quiet third
   and of the rest.

During the crowd and load phases the organiser works at the CLI through the server: a
`pooling leaderboard` and a `pooling import runs` of a 1,000-topic x 1,000-document run.
The script ends with a table of the figures against the bounds a crowd needs.

    .venv/bin/python scripts/load_serve.py [--judgments 10000] [--assessors 20] [--crowd 200]
    .venv/bin/python scripts/load_serve.py --phases organiser [--organiser-seconds 90]
    .venv/bin/python scripts/load_serve.py --phases crowdround [--crowd-workers 2000]

nuggets (alone, on a store of its own): 200 assessors of an assignment round (one topic each,
20 answers of 8 sentences graded on 10 nuggets) thinking 2-10 s, posting a grade per nugget
of each answer from the assignment page. Prints POST p50/p95 and the server's own time, and
checks every acknowledged submission is stored once, a judgment per nugget.

    .venv/bin/python scripts/load_serve.py --phases nuggets [--nugget-assessors 200]

crowdround (alone, on a store of its own): 2,000 workers of a crowd round (K=3 answers per
pair, gold mixed in at 0.1) thinking 2-10 s between judgments (about 330 judgments/s
offered), each choosing topics in an order of their own and answering what the round hands
them (2% "can't judge"). Prints POST p50/p95 (all, and once every worker has arrived), and
checks the store: every acknowledged judgment stored once, no pair over K distinct answers.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import json as _json
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import httpx
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pooling.judging.assessors import add_assessor, assign  # noqa: E402
from pooling.judging.rounds import create_round  # noqa: E402
from pooling.store import Store  # noqa: E402
from pooling.web.timing import server_ms  # noqa: E402

DOC_ID = re.compile(r'data-doc-id="([^"]+)"')
SUBMISSION_ID = re.compile(r'data-submission-id="([^"]+)"')
HANDOUT = re.compile(r'data-handout="([^"]+)"')  # a crowd page's proof of its handout
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


# -- the campaign ------------------------------------------------------------------------------


@dataclass
class Campaign:
    path: Path
    tokens: dict[str, str]
    topics: dict[str, dict[str, list[str]]]  # round -> assessor -> topics
    organiser_token: str = ""
    spare_rounds: list[str] = field(default_factory=list)  # pooled, not assigned yet


def build(workdir: Path, n_assessors: int, load_docs: int, crash_docs: int, crowd: int = 0,
          crowd_docs: int = 60, spare_rounds: int = 0) -> Campaign:
    """Runs A and R01..R10 and a qrels version; round `load` (2 topics per assessor of
    `load_docs` documents each), round `crash` (1 topic per assessor of `crash_docs`) and round
    `crowd` (1 topic per crowd assessor); `spare_rounds` rounds of 5 load topics each, pooled
    but not assigned (for the organiser to assign); an organiser; every document has a title
    and text."""
    path = workdir / "load.duckdb"
    rounds = {"load": (2 * n_assessors, load_docs, "L"), "crash": (n_assessors, crash_docs, "C"),
              "crowd": (crowd, crowd_docs, "W")}
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
    crowd_people = [f"c{i:03d}" for i in range(crowd)]
    rng = random.Random(7)
    qrels = "".join(f"{q} 0 {d} {int(rng.random() < 0.3)}\n"
                    for q, d in zip(rows["query_id"], rows["doc_id"], strict=True))
    (workdir / "truth.qrels").write_text(qrels)
    with Store.create(path) as s:
        s.import_run(pa.table(rows), "A")
        for r in range(1, 11):  # systems for the leaderboard: A's ranking, shuffled a little
            scores = [v + rng.uniform(0, 40) for v in rows["score"]]
            s.import_run(pa.table({**rows, "score": scores}), f"R{r:02d}")
        s.import_qrels(workdir / "truth.qrels", name="truth")
        s.import_topics(workdir / "topics.jsonl")
        s.import_documents(workdir / "docs.jsonl")
        tokens = {p: add_assessor(s, p).token for p in people + crowd_people}
        organiser_token = add_assessor(s, "org", role="organiser").token
        topics: dict[str, dict[str, list[str]]] = {}
        for name, (n_topics, depth, prefix) in rounds.items():
            if n_topics == 0:
                continue
            who = crowd_people if name == "crowd" else people
            qs = [f"{prefix}{t:03d}" for t in range(n_topics)]
            create_round(s, name, "depth", strategy_params={"depth": depth}, topics=qs)
            assign(s, name, who)
            # assign() gives topics round-robin over the assessors in query_id order
            topics[name] = {p: [q for i, q in enumerate(sorted(qs)) if i % len(who) == k]
                            for k, p in enumerate(who)}
        spare = [f"spare{k:02d}" for k in range(spare_rounds)]
        load_topics = [f"L{t:03d}" for t in range(2 * n_assessors)]
        for k, name in enumerate(spare):
            chosen = [load_topics[(5 * k + i) % len(load_topics)] for i in range(5)]
            create_round(s, name, "depth", strategy_params={"depth": 20}, topics=chosen)
    return Campaign(path, tokens, topics, organiser_token, spare)


def big_run(workdir: Path, n_topics: int = 1000, depth: int = 1000) -> Path:
    """A late submission: n_topics x depth lines in TREC format (written once)."""
    path = workdir / f"late-{n_topics}x{depth}.run"
    if not path.exists():
        with open(path, "w") as fh:
            for t in range(n_topics):
                q = f"B{t:04d}"
                fh.write("".join(f"{q} Q0 {q}-d{r:04d} {r + 1} {depth - r} late\n" for r in range(depth)))
    return path


def build_crowd_round(workdir: Path, workers: int, n_topics: int, docs_per_topic: int,
                      redundancy: int, gold_per_topic: int, gold_rate: float) -> Campaign:
    """A store of its own for a crowd round: one run over `n_topics` topics of
    `docs_per_topic` documents, a qrels version "gold" of `gold_per_topic` other documents
    per topic, `workers` person assessors and a crowd round "crowdk" asking `redundancy`
    answers per pair with gold mixed in at `gold_rate` (every worker may judge every topic)."""
    path = workdir / "crowdround.duckdb"
    rows: dict[str, list] = {"query_id": [], "doc_id": [], "rank": [], "score": []}
    docs, gold = [], []
    for t in range(n_topics):
        q = f"K{t:03d}"
        for r in range(docs_per_topic):
            rows["query_id"].append(q)
            rows["doc_id"].append(f"{q}-doc{r:04d}")
            rows["rank"].append(r + 1)
            rows["score"].append(float(docs_per_topic - r))
        for g in range(gold_per_topic):
            gold.append(f"{q} 0 {q}-gold{g:03d} {g % 3}\n")
        docs += [{"doc_id": d, "title": f"Report on topic {q}",
                  "text": f"Wind and solar energy report {d}. " * 20}
                 for d in [f"{q}-doc{r:04d}" for r in range(docs_per_topic)]
                 + [f"{q}-gold{g:03d}" for g in range(gold_per_topic)]]
    (workdir / "crowd-docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (workdir / "crowd-topics.jsonl").write_text("".join(
        json.dumps({"query_id": q, "title": f"energy topic {q}", "description": "Energy reports."})
        + "\n" for q in sorted(set(rows["query_id"]))))
    (workdir / "gold.qrels").write_text("".join(gold))
    people = [f"k{i:04d}" for i in range(workers)]
    with Store.create(path) as s:
        s.import_run(pa.table(rows), "A")
        s.import_topics(workdir / "crowd-topics.jsonl")
        s.import_documents(workdir / "crowd-docs.jsonl")
        s.import_qrels(workdir / "gold.qrels", name="gold")
        create_round(s, "crowdk", "depth", strategy_params={"depth": docs_per_topic},
                     redundancy=redundancy, gold="gold", gold_rate=gold_rate)
        tokens = {p: add_assessor(s, p).token for p in people}
        organiser_token = add_assessor(s, "org", role="organiser").token
    topics = sorted(set(rows["query_id"]))
    return Campaign(path, tokens, {"crowdk": {p: topics for p in people}}, organiser_token)


# -- the server --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(store: Path, port: int, cpus: str = "") -> subprocess.Popen:
    """The server, its output appended to `<store>.serve.log` (a pipe nobody reads would fill
    up and stall the server); cpus: the cores it is pinned to (`taskset -c`), "" none."""
    log = store.with_name(store.name + ".serve.log")
    pin = ["taskset", "-c", cpus] if cpus else []
    with open(log, "a") as fh:
        proc = subprocess.Popen([*pin, sys.executable, "-m", "pooling", "serve", str(store), "--port", str(port)],
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
    post_server: list[float] = field(default_factory=list)  # the server's own time (Server-Timing)
    post_at: list[float] = field(default_factory=list)  # when each POST was answered (monotonic)
    page_latency: list[float] = field(default_factory=list)
    page_server: list[float] = field(default_factory=list)
    acked: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # sid -> (who, q, d)
    retries: int = 0
    double_clicks: int = 0
    duplicates_answered: int = 0
    errors_retried: int = 0

    def page(self, t0: float, reply: Reply) -> None:
        """A page view sent at perf_counter `t0` was answered with `reply`."""
        self.page_latency.append(time.perf_counter() - t0)
        if reply.server_seconds is not None:
            self.page_server.append(reply.server_seconds)

    def post(self, t0: float, reply: Reply) -> None:
        """A submission sent at `t0` was answered with `reply`."""
        self.post_latency.append(time.perf_counter() - t0)
        if reply.server_seconds is not None:
            self.post_server.append(reply.server_seconds)


class Reply:
    """What the simulated assessors read of a response."""

    def __init__(self, status_code: int, body: bytes, server_seconds: float | None = None):
        self.status_code, self.content, self.server_seconds = status_code, body, server_seconds

    @property
    def text(self) -> str:
        return self.content.decode()

    def json(self):
        return json.loads(self.content)

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise RuntimeError(f"HTTP {self.status_code}: {self.text[:200]}")


class Browser:
    """A small keep-alive HTTP/1.1 client with a cookie jar, as cheap as a load generator on
    the server's own two cores must be (a full client library costs several times the CPU)."""

    def __init__(self, base: str, timeout: float = 30):
        parts = urlsplit(base)
        self.host, self.port, self.timeout = parts.hostname, parts.port, timeout
        self.cookies: dict[str, str] = {}
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc) -> None:
        for _, writer in self._idle:
            writer.close()

    async def request(self, method: str, url: str, params=None, json=None, headers=None) -> Reply:
        if params:
            url += "?" + urlencode(params)
        body = b"" if json is None else _json.dumps(json).encode()
        lines = [f"{method} {url} HTTP/1.1", f"Host: {self.host}:{self.port}",
                 f"Content-Length: {len(body)}"]
        if json is not None:
            lines.append("Content-Type: application/json")
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        data = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        conn = self._idle.pop() if self._idle else None  # two at once (a double click): two
        try:
            if conn is not None:
                try:  # a kept-alive connection the server has since closed: as a browser does,
                    reply, keep = await asyncio.wait_for(self._exchange(conn, data), self.timeout)
                except (ConnectionError, asyncio.IncompleteReadError):  # send again on a new one
                    conn[1].close()
                    conn = None
            if conn is None:
                conn = await asyncio.open_connection(self.host, self.port)
                conn[1].get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                reply, keep = await asyncio.wait_for(self._exchange(conn, data), self.timeout)
        except BaseException:
            if conn is not None:
                conn[1].close()
            raise
        if keep:
            self._idle.append(conn)
        else:
            conn[1].close()
        return reply

    async def _exchange(self, conn, data: bytes) -> tuple[Reply, bool]:
        reader, writer = conn
        writer.write(data)
        head = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split()[1])
        length, chunked, close, server = 0, False, False, None
        for line in header_lines:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding" and "chunked" in value:
                chunked = True
            elif name == "connection" and value.lower() == "close":
                close = True
            elif name == "server-timing":
                ms = server_ms(value)
                server = None if ms is None else ms / 1000
            elif name == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
        if chunked:
            parts = []
            while True:
                size = int((await reader.readline()).strip() or b"0", 16)
                if size == 0:
                    await reader.readline()
                    break
                parts.append(await reader.readexactly(size))
                await reader.readline()
            body = b"".join(parts)
        else:
            body = await reader.readexactly(length)
        return Reply(status, body, server), not close


async def _request(client: Browser, method: str, url: str, tally: Tally, **kw) -> Reply:
    """Send until the server answers (a killed server is retried until it is back); a server
    error is retried a few times, then stops the run."""
    delay = 0.05
    server_errors = 0
    while True:
        try:
            response = await client.request(method, url, **kw)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError, IndexError):
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
    async with Browser(base) as client:
        await _request(client, "GET", "/login", tally, params={"token": token})
        csrf = CSRF.search((await _request(client, "GET", "/", tally)).text).group(1)
        headers = {"X-CSRF-Token": csrf}
        done = 0
        for q in topics:
            url = f"/rounds/{round_id}/topics/{q}"
            while done < quota:
                t0 = time.perf_counter()
                page = await _request(client, "GET", url, tally)
                tally.page(t0, page)
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
                tally.post(t0, answers[0])
                if rng.random() < retry_rate:  # the page re-sends (e.g. after a timeout)
                    tally.retries += 1
                    answers.append(await send())
                for a in answers:
                    a.raise_for_status()
                    tally.duplicates_answered += a.json()["duplicate"]
                tally.acked[sid] = (who, q, doc_id)
                done += 1


async def thinker(base: str, token: str, topics: list[str], deadline: float | Callable[[], float],
                  think: tuple[float, float], tally: Tally, rng: random.Random) -> None:
    """A crowd assessor: reads the next document, thinks 2-10 s, judges, until the deadline
    (a time, or a function giving the time as it moves)."""
    until = deadline if callable(deadline) else (lambda: deadline)
    async with Browser(base) as client:
        await asyncio.sleep(rng.uniform(0, think[1]))  # they do not all arrive at once
        await _request(client, "GET", "/login", tally, params={"token": token})
        csrf = CSRF.search((await _request(client, "GET", "/", tally)).text).group(1)
        url = f"/rounds/crowd/topics/{topics[0]}"
        while time.monotonic() < until():
            t0 = time.perf_counter()
            page = await _request(client, "GET", url, tally)
            tally.page(t0, page)
            match = DOC_ID.search(page.text)
            if match is None:
                return
            await asyncio.sleep(rng.uniform(*think))
            sid = SUBMISSION_ID.search(page.text).group(1)
            body = {"doc_id": match.group(1), "grade": rng.choice((0, 1, 2)), "submission_id": sid}
            t0 = time.perf_counter()
            answer = await _request(client, "POST", url + "/judgments", tally, json=body,
                                    headers={"X-CSRF-Token": csrf})
            tally.post(t0, answer)
            tally.post_at.append(time.monotonic())
            answer.raise_for_status()
            tally.acked[sid] = ("crowd", topics[0], match.group(1))


async def crowd_worker(base: str, token: str, topics: list[str], deadline: float,
                       think: tuple[float, float], tally: Tally, rng: random.Random,
                       api: bool = False) -> None:
    """A worker of a crowd round: from a topic of their own choosing, reads what the round
    hands them, thinks 2-10 s, answers (now and then "can't judge"), and moves to another
    topic when one has nothing more for them, until the deadline. api: through the JSON API
    with a bearer token (a crowd front end), else the judging pages (a browser)."""
    async with Browser(base) as client:
        await asyncio.sleep(rng.uniform(0, think[1]))  # they do not all arrive at once
        if api:
            headers = {"Authorization": f"Bearer {token}"}
        else:
            await _request(client, "GET", "/login", tally, params={"token": token})
            csrf = CSRF.search((await _request(client, "GET", "/", tally)).text).group(1)
            headers = {"X-CSRF-Token": csrf}
        order = list(topics)
        rng.shuffle(order)
        for q in order:
            url = f"/api/v1/rounds/crowdk/topics/{q}" if api else f"/rounds/crowdk/topics/{q}"
            while time.monotonic() < deadline:
                t0 = time.perf_counter()
                page = await _request(client, "GET", url + "/next" if api else url, tally,
                                      headers=headers if api else None)
                tally.page(t0, page)
                if api:
                    shown = page.json()
                    doc_id = None if shown["done"] else shown["doc_id"]
                    sid = None if shown["done"] else shown["submission_id"]
                    handout = None if shown["done"] else shown["handout"]
                else:
                    match = DOC_ID.search(page.text)
                    doc_id = match.group(1) if match else None
                    sid = SUBMISSION_ID.search(page.text).group(1) if match else None
                    handout = HANDOUT.search(page.text).group(1) if match else None
                if doc_id is None:
                    break  # nothing more for this worker here: another topic
                await asyncio.sleep(rng.uniform(*think))
                if time.monotonic() >= deadline:
                    return
                body: dict = {"doc_id": doc_id, "submission_id": sid, "handout": handout,
                              "seconds": round(rng.uniform(*think), 1)}
                if rng.random() < 0.02:
                    body["unjudgeable"] = True
                else:
                    body["grade"] = rng.choice((0, 1, 2))
                t0 = time.perf_counter()
                answer = await _request(client, "POST", url + "/judgments", tally, json=body,
                                        headers=headers)
                tally.post(t0, answer)
                tally.post_at.append(time.monotonic())
                answer.raise_for_status()
                tally.acked[sid] = (token, q, doc_id)
            else:
                return


def check_crowd_round(path: Path, tally: Tally, redundancy: int) -> tuple[int, int, int, int, int]:
    """(acknowledged but missing, stored twice, stored without acknowledgement, pairs with
    more than K distinct answers, pairs that reached K) of the crowd round."""
    with Store(path, read_only=True) as s:
        rows = s.con.execute(
            "SELECT submission_id, assessor_id, query_id, doc_id FROM judgments "
            "WHERE round_id = 'crowdk'").fetchall()
        gold = set(s.con.execute("SELECT query_id, doc_id FROM qrels WHERE version = 'gold'")
                   .fetchall())
    by_sid = Counter(r[0] for r in rows)
    missing = sum(1 for sid in tally.acked if by_sid[sid] == 0)
    twice = sum(n - 1 for n in by_sid.values() if n > 1) + sum(
        n - 1 for n in Counter(r[1:] for r in rows).values() if n > 1)
    unacked = sum(1 for sid in by_sid if sid not in tally.acked)
    people: dict[tuple[str, str], set[str]] = {}
    for _, a, q, d in rows:
        if (q, d) not in gold:
            people.setdefault((q, d), set()).add(a)
    over = sum(len(p) > redundancy for p in people.values())
    at_k = sum(len(p) >= redundancy for p in people.values())
    return missing, twice, unacked, over, at_k


NUGGETS_PER_TOPIC, ANSWERS_PER_TOPIC = 10, 20
PART = re.compile(r'data-subtopic="([^"]+)"')


def build_nugget_round(workdir: Path, assessors: int) -> Campaign:
    """An assignment round: a topic per assessor, each answered by 20 runs (8 sentences with
    citations) and graded on a frozen version of 10 nuggets; each topic assigned to one."""
    from pooling.nuggets.rounds import create_assignment_round
    from pooling.store.answers import import_answers
    from pooling.store.nugget_banks import import_nuggets

    path = workdir / "nuggets.duckdb"
    topics = [f"N{t:03d}" for t in range(assessors)]
    lines = []
    for q in topics:
        for r in range(ANSWERS_PER_TOPIC):
            refs = [f"{q}-seg{k}" for k in range(10)]
            answer = [{"text": f"Run {r} sentence {k} about energy topic {q}, with figures.",
                       "citations": [k, (k + 3) % 10]} for k in range(8)]
            lines.append(json.dumps({"run_id": f"run{r:02d}", "topic_id": q,
                                     "topic": f"energy topic {q}", "references": refs,
                                     "response_length": 90, "answer": answer}))
    (workdir / "answers.jsonl").write_text("\n".join(lines) + "\n")
    (workdir / "bank.jsonl").write_text("".join(json.dumps({"qid": q, "nuggets": [
        {"text": f"Fact {i} about energy topic {q}", "importance": "vital" if i < 4 else "okay"}
        for i in range(NUGGETS_PER_TOPIC)]}) + "\n" for q in topics))
    people = [f"n{i:03d}" for i in range(assessors)]
    with Store.create(path) as s:
        import_answers(s, [workdir / "answers.jsonl"], add_topics=True, references_as_run=False)
        version = import_nuggets(s, workdir / "bank.jsonl", "load").version
        create_assignment_round(s, "assign", version)
        tokens = {p: add_assessor(s, p).token for p in people}
        assign(s, "assign", people)
    return Campaign(path, tokens, {"assign": {p: [q] for p, q in zip(people, topics, strict=True)}})


async def nugget_assessor(base: str, token: str, topic: str, deadline: float,
                          think: tuple[float, float], tally: Tally, rng: random.Random) -> None:
    """An assessor of an assignment round on the page: reads the next answer, thinks, grades
    every nugget at once, until the deadline or the topic's end."""
    async with Browser(base) as client:
        await asyncio.sleep(rng.uniform(0, think[1]))
        await _request(client, "GET", "/login", tally, params={"token": token})
        csrf = CSRF.search((await _request(client, "GET", "/", tally)).text).group(1)
        url = f"/rounds/assign/topics/{topic}"
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            page = await _request(client, "GET", url, tally)
            tally.page(t0, page)
            match = DOC_ID.search(page.text)
            if match is None:
                return
            parts = PART.findall(page.text)
            await asyncio.sleep(rng.uniform(*think))
            sid = SUBMISSION_ID.search(page.text).group(1)
            body = {"doc_id": match.group(1), "submission_id": sid,
                    "grades": {n: rng.choice((0, 1, 2)) for n in parts}}
            t0 = time.perf_counter()
            answer = await _request(client, "POST", url + "/judgments", tally, json=body,
                                    headers={"X-CSRF-Token": csrf})
            tally.post(t0, answer)
            tally.post_at.append(time.monotonic())
            answer.raise_for_status()
            tally.acked[sid] = ("assign", topic, match.group(1))


def nugget_round_phase(workdir: Path, args) -> tuple[bool, str]:
    """The assignment page under a thinking crowd (module doc): (ok, its markdown table)."""
    think = tuple(float(x) for x in args.think.split(","))
    t0 = time.perf_counter()
    campaign = build_nugget_round(workdir, args.nugget_assessors)
    print(f"assignment round store {campaign.path}: {args.nugget_assessors} assessors, "
          f"{ANSWERS_PER_TOPIC} answers x {NUGGETS_PER_TOPIC} nuggets a topic, built in "
          f"{time.perf_counter() - t0:.1f} s")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(campaign.path, port, args.server_cpus)
    tally = Tally()
    rng = random.Random(args.seed + 9)
    topics = campaign.topics["assign"]

    async def everyone() -> float:
        start = time.perf_counter()
        deadline = time.monotonic() + args.nugget_seconds
        await asyncio.gather(*(nugget_assessor(base, campaign.tokens[p], topics[p][0], deadline,
                                               think, tally, random.Random(rng.random()))
                               for p in sorted(topics)))
        return time.perf_counter() - start

    elapsed = asyncio.run(everyone())
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)
    report(f"assignment round ({args.nugget_assessors} assessors thinking {args.think} s, "
           f"{NUGGETS_PER_TOPIC} nuggets an answer, the judging pages)", tally, elapsed)
    with Store(campaign.path, read_only=True) as s:
        rows = s.con.execute("SELECT submission_id, count(*) FROM judgments GROUP BY ALL").fetchall()
    stored = {}
    for sid, n in rows:
        base_id = sid.split("~")[0]
        stored[base_id] = stored.get(base_id, 0) + n
    missing = sum(1 for sid in tally.acked if stored.get(sid) != NUGGETS_PER_TOPIC)
    unacked = sum(1 for sid in stored if sid not in tally.acked)
    print(f"  store: {missing} acknowledged submissions without their {NUGGETS_PER_TOPIC} "
          f"judgments, {unacked} stored without an acknowledgement")
    p95 = pct(tally.post_latency, 95)
    table = "\n".join([
        "| assignment round | assessors | submissions | POST p50 ms | POST p95 ms | server's POST "
        "p50 / p95 ms | GET p95 ms | lost / unacknowledged | p95 < 50 ms |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| think {args.think} s, {args.nugget_seconds:.0f} s, pages | {args.nugget_assessors} | "
        f"{len(tally.acked):,} | {pct(tally.post_latency, 50):.1f} | {p95:.1f} | "
        f"{pct(tally.post_server, 50) if tally.post_server else float('nan'):.1f} / "
        f"{pct(tally.post_server, 95) if tally.post_server else float('nan'):.1f} | "
        f"{pct(tally.page_latency, 95):.1f} | {missing} / {unacked} | "
        f"{'yes' if p95 < 50 else 'NO'} |"])
    return missing == unacked == 0, table


def crowd_round_phase(workdir: Path, args) -> tuple[bool, str]:
    """2,000 workers (by default) on a crowd round with K=3 and gold, through the real server
    over HTTP: POST latency, and that nothing is lost. Returns (ok, its markdown table)."""
    think = tuple(float(x) for x in args.think.split(","))
    offered = args.crowd_workers * 2 / (think[0] + think[1])
    # About as many pairs as the judgments offered can bring to K: the first reach K while
    # the crowd works, and no topic runs dry before the end.
    docs = max(50, int(offered * args.crowd_round_seconds / args.crowd_topics / args.crowd_k * 0.9))
    t0 = time.perf_counter()
    campaign = build_crowd_round(workdir, args.crowd_workers, args.crowd_topics, docs, args.crowd_k,
                                 gold_per_topic=40, gold_rate=args.crowd_gold_rate)
    print(f"crowd round store {campaign.path}: {args.crowd_workers:,} workers, "
          f"{args.crowd_topics} topics x {docs} documents + 40 gold, K={args.crowd_k}, gold rate "
          f"{args.crowd_gold_rate}, built in {time.perf_counter() - t0:.1f} s")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(campaign.path, port, args.server_cpus)
    tally = Tally()
    topics = campaign.topics["crowdk"]
    rng = random.Random(args.seed + 5)

    async def everyone() -> float:
        start = time.perf_counter()
        deadline = time.monotonic() + args.crowd_round_seconds
        await asyncio.gather(*(crowd_worker(base, campaign.tokens[p], topics[p], deadline, think,
                                            tally, random.Random(rng.random()), args.crowd_api)
                               for p in sorted(topics)))
        return time.perf_counter() - start

    began = time.monotonic()
    elapsed = asyncio.run(everyone())
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)
    via = "the JSON API" if args.crowd_api else "the judging pages"
    report(f"crowd round ({args.crowd_workers:,} workers thinking {args.think} s, K={args.crowd_k}, "
           f"gold {args.crowd_gold_rate}, through {via})", tally, elapsed)
    missing, twice, unacked, over, at_k = check_crowd_round(campaign.path, tally, args.crowd_k)
    print(f"  store: {missing} acknowledged judgments missing (lost), {twice} stored twice, "
          f"{unacked} stored without an acknowledgement; {at_k:,} pairs reached K, {over} have "
          "more than K answers")
    steady = [v for v, at in zip(tally.post_latency, tally.post_at, strict=True)
              if at >= began + think[1] + 5]  # after every worker has arrived
    rate = len(tally.acked) / elapsed
    p95 = pct(tally.post_latency, 95)
    ok = missing == twice == unacked == over == 0
    table = "\n".join([
        "| crowd round | workers | offered judgments/s | stored judgments/s | POST p50 ms | "
        "POST p95 ms | POST p95 ms, all arrived | server's POST p50 / p95 ms | GET p95 ms | "
        "lost / twice / over K | p95 < 50 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| K={args.crowd_k}, gold {args.crowd_gold_rate}, think {args.think} s, "
        f"{args.crowd_round_seconds:.0f} s, {'JSON API' if args.crowd_api else 'pages'} | "
        f"{args.crowd_workers:,} | {offered:,.0f} | {rate:,.0f} | "
        f"{pct(tally.post_latency, 50):.1f} | {p95:.1f} | "
        f"{pct(steady, 95) if steady else float('nan'):.1f} | "
        f"{pct(tally.post_server, 50) if tally.post_server else float('nan'):.1f} / "
        f"{pct(tally.post_server, 95) if tally.post_server else float('nan'):.1f} | "
        f"{pct(tally.page_latency, 95):.1f} | "
        f"{missing} / {twice} / {over} | {'yes' if p95 < 50 else 'NO'} |"])
    return ok, table


async def run_crowd(base: str, campaign: Campaign, seconds: float | Callable[[], float],
                    think: tuple[float, float], tally: Tally, seed: int) -> float:
    """The crowd judges for `seconds`, or until the time a function gives."""
    rng = random.Random(seed)
    people = sorted(campaign.topics["crowd"])
    t0 = time.perf_counter()
    deadline = seconds if callable(seconds) else time.monotonic() + seconds
    await asyncio.gather(*(thinker(base, campaign.tokens[p], campaign.topics["crowd"][p], deadline,
                                   think, tally, random.Random(rng.random())) for p in people))
    return time.perf_counter() - t0


@dataclass
class OrganiserWork:
    """CLI commands run through the server while assessors judge: (command, seconds, ok)."""

    done: list[tuple[str, float, bool, str]] = field(default_factory=list)


async def organiser(store: Path, late: Path, name: str, delay: float, work: OrganiserWork) -> None:
    """After `delay` seconds, a leaderboard and the import of a big late run, as subprocesses."""
    await asyncio.sleep(delay)
    for label, args in (("leaderboard", ["leaderboard", str(store), "--qrels", "truth", "-m", "map"]),
                        # --allow-copy: each phase imports the same late file under its own name
                        (f"import runs {late.stem.removeprefix('late-')}",
                         ["import", "runs", str(store), str(late), "--name", name, "--allow-copy"])):
        t0 = time.perf_counter()
        done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "pooling", *args],
                                       capture_output=True, text=True, cwd=ROOT)
        work.done.append((label, time.perf_counter() - t0, done.returncode == 0,
                          (done.stderr or "").strip()[-300:]))


async def with_organiser(phase, store: Path, late: Path, name: str, delay: float, work: OrganiserWork):
    """Run a phase (a coroutine) with the organiser's CLI work beside it."""
    side = asyncio.create_task(organiser(store, late, name, delay, work))
    elapsed = await phase
    await side
    return elapsed


# -- organiser paths while the crowd judges -----------------------------------------------------


@dataclass
class Timings:
    """The seconds each organiser path took, by path; failures are counted apart."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    failures: Counter = field(default_factory=Counter)
    why: dict[str, str] = field(default_factory=dict)

    def add(self, path: str, seconds: float, ok: bool, why: str = "") -> None:
        self.seconds.setdefault(path, []).append(seconds)
        if not ok:
            self.failures[path] += 1
            self.why.setdefault(path, why.strip()[-300:])


ROUNDS_AS_ORGANISER = "GET /api/v1/rounds, as an organiser"
ROUNDS_AS_ASSESSOR = "GET /api/v1/rounds, as an assessor"
ADD_CLI = "pooling assessors add (CLI: a fresh interpreter each)"
ADD_WARM = "assessors add through the served store (warm client)"
ASSIGN_CLI = "pooling assign (CLI: a fresh interpreter each)"
ASSIGN_WARM = "assign through the served store (warm client)"


async def poll_rounds(base: str, token: str, label: str, stop: asyncio.Event, timings: Timings,
                      every: float = 1.0) -> None:
    """GET /api/v1/rounds with a bearer token every `every` seconds until `stop`."""
    async with Browser(base) as client:
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                reply = await client.request("GET", "/api/v1/rounds",
                                             headers={"Authorization": f"Bearer {token}"})
                ok, why = reply.status_code == 200, f"HTTP {reply.status_code}: {reply.text[:200]}"
            except (OSError, TimeoutError, asyncio.IncompleteReadError) as exc:
                ok, why = False, repr(exc)
            timings.add(label, time.perf_counter() - t0, ok, why)
            try:
                await asyncio.wait_for(stop.wait(), every)
            except TimeoutError:
                pass


async def cli(timings: Timings, label: str, args: list[str]) -> None:
    """One `pooling` command in a fresh interpreter, timed from start to exit."""
    t0 = time.perf_counter()
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "pooling", *args],
                                   capture_output=True, text=True, cwd=ROOT)
    timings.add(label, time.perf_counter() - t0, done.returncode == 0, done.stderr)


async def warm(timings: Timings, label: str, op: str, store: Path, items: list[str],
               pause: float) -> None:
    """`op` for each item from one warm client process (`organiser_worker`), each timed."""
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, str(Path(__file__).resolve()), "--organiser-worker", op,
                         str(store), ",".join(items), "--pause", str(pause)],
        capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        timings.add(label, 0.0, False, done.stderr)
        return
    for seconds, why in json.loads(done.stdout.strip().splitlines()[-1]):
        timings.add(label, seconds, not why, why)


def organiser_worker(op: str, store: Path, items: list[str], pause: float) -> None:
    """A warm client: each item through the served store (a session opened, one change
    committed, the session closed), timed without the interpreter's start; prints
    [[seconds, error], ...] as JSON. op "add": items are names; "assign": round:a+b."""
    out = []
    for item in items:
        t0 = time.perf_counter()
        why = ""
        try:
            with Store(store) as s:
                if op == "add":
                    add_assessor(s, item)
                else:
                    round_id, people = item.split(":")
                    assign(s, round_id, people.split("+"))
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            why = repr(exc)
        out.append([time.perf_counter() - t0, why])
        time.sleep(pause)
    print(json.dumps(out))


async def run_organiser_paths(base: str, campaign: Campaign, seconds: float,
                              think: tuple[float, float], crowd: Tally, timings: Timings,
                              seed: int, n_cli: int, n_warm: int) -> tuple[float, float, float, float]:
    """The crowd judges; after a quiet third the organiser polls the rounds as an organiser
    and as an assessor every second, and adds assessors and assigns spare rounds (CLI, then
    warm). The crowd goes on until the organiser is done. Returns the quiet window and the
    organiser's window (monotonic start, end of each)."""
    start = time.monotonic()
    quiet_from = start + think[1]  # the crowd arrives over its first think time
    quiet_to = max(start + seconds / 3, quiet_from + 10)
    end = {"at": float("inf")}
    crowd_task = asyncio.create_task(run_crowd(base, campaign, lambda: end["at"], think, crowd, seed))
    await asyncio.sleep(quiet_to - time.monotonic())
    stop = asyncio.Event()
    someone = sorted(campaign.topics["crowd"])[0]
    pollers = [asyncio.create_task(poll_rounds(base, campaign.organiser_token, ROUNDS_AS_ORGANISER,
                                               stop, timings)),
               asyncio.create_task(poll_rounds(base, campaign.tokens[someone], ROUNDS_AS_ASSESSOR,
                                               stop, timings))]
    store = campaign.path
    spare = list(campaign.spare_rounds)
    for i in range(n_cli):
        await cli(timings, ADD_CLI, ["assessors", "add", str(store), f"cli added {i}"])
    for round_id in spare[:n_cli]:
        await cli(timings, ASSIGN_CLI, ["assign", str(store), "--round", round_id, "--assessors", "a00,a01"])
    await warm(timings, ADD_WARM, "add", store, [f"warm added {i}" for i in range(n_warm)], 0.2)
    await warm(timings, ASSIGN_WARM, "assign", store, [f"{r}:a00+a01" for r in spare[n_cli:]], 0.5)
    organiser_to = time.monotonic()
    end["at"] = max(start + seconds, organiser_to)
    await crowd_task
    stop.set()
    await asyncio.gather(*pollers)
    return quiet_from, quiet_to, quiet_to, organiser_to


def organiser_table(crowd_size: int, timings: Timings, crowd: Tally,
                    windows: tuple[float, float, float, float]) -> str:
    """Markdown: p50/p95 of each organiser path, and of the crowd's judging POSTs in the
    quiet third and while the organiser worked."""
    lines = [f"| while {crowd_size} assessors judge | n | p50 ms | p95 ms | failed |",
             "|---|---|---|---|---|"]
    for label in (ROUNDS_AS_ORGANISER, ROUNDS_AS_ASSESSOR, ADD_CLI, ADD_WARM, ASSIGN_CLI, ASSIGN_WARM):
        values = timings.seconds.get(label, [])
        if values:
            lines.append(f"| {label} | {len(values)} | {pct(values, 50):.1f} | {pct(values, 95):.1f} "
                         f"| {timings.failures[label]} |")
    quiet_from, quiet_to, busy_from, busy_to = windows
    for label, low, high in (("judging POST (the crowd), quiet", quiet_from, quiet_to),
                             ("judging POST (the crowd), while the organiser works", busy_from, busy_to)):
        values = [v for v, at in zip(crowd.post_latency, crowd.post_at, strict=True) if low <= at < high]
        if values:
            lines.append(f"| {label} | {len(values)} | {pct(values, 50):.1f} | {pct(values, 95):.1f} | - |")
    return "\n".join(lines)


async def run_load(base: str, campaign: Campaign, round_id: str, total: int, tally: Tally,
                   seed: int, retry_rate: float, double_rate: float) -> float:
    people = sorted(campaign.topics[round_id])
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


def cpu_list(spec: str) -> set[int]:
    """The cores of a taskset list: "0", "0,2", "1-3"."""
    cores: set[int] = set()
    for part in spec.split(","):
        low, _, high = part.partition("-")
        cores.update(range(int(low), int(high or low) + 1))
    return cores


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
    if tally.post_server and tally.page_server:
        print(f"  the server's own time (Server-Timing) ms: POST p50 {pct(tally.post_server, 50):.1f}  "
              f"p95 {pct(tally.post_server, 95):.1f}  p99 {pct(tally.post_server, 99):.1f}  mean "
              f"{statistics.fmean(tally.post_server) * 1000:.1f};  GET p50 "
              f"{pct(tally.page_server, 50):.1f}  p95 {pct(tally.page_server, 95):.1f}")
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
    ap.add_argument("--skip-load", action="store_true", help="leave out the load phase")
    ap.add_argument("--phases", default="crowd,load,crash,organiser",
                    help="the phases to run, comma-separated (crowd, load, crash, organiser)")
    ap.add_argument("--crowd", type=int, default=200, help="assessors in the crowd and organiser "
                    "phases (0: skip both)")
    ap.add_argument("--crowd-seconds", type=float, default=120.0)
    ap.add_argument("--think", default="2,10", help="seconds a crowd assessor thinks: min,max")
    ap.add_argument("--late-run", default="1000x1000", help="topics x documents of the late run "
                    "the organiser imports during the crowd and load phases ('0x0': none)")
    ap.add_argument("--organiser-seconds", type=float, default=90.0,
                    help="least length of the organiser phase (it lasts until the organiser is done)")
    ap.add_argument("--organiser-cli", type=int, default=10,
                    help="CLI `assessors add` and `assign` commands of the organiser phase, each")
    ap.add_argument("--organiser-warm", type=int, default=40,
                    help="adds from the warm client in the organiser phase (assigns: a quarter)")
    ap.add_argument("--crowd-workers", type=int, default=2000,
                    help="workers of the crowd-round phase (a K-answer round with gold)")
    ap.add_argument("--crowd-round-seconds", type=float, default=120.0)
    ap.add_argument("--crowd-topics", type=int, default=20)
    ap.add_argument("--crowd-k", type=int, default=3, help="answers per pair in the crowd round")
    ap.add_argument("--crowd-gold-rate", type=float, default=0.1)
    ap.add_argument("--nugget-assessors", type=int, default=200,
                    help="assessors of the nuggets phase (an assignment round)")
    ap.add_argument("--nugget-seconds", type=float, default=120.0)
    ap.add_argument("--crowd-api", action="store_true",
                    help="the crowd-round workers judge through the JSON API (a crowd front "
                         "end), not the judging pages")
    two = (os.cpu_count() or 1) >= 2
    ap.add_argument("--server-cpus", default="1" if two else "",
                    help="the cores the server is pinned to (taskset -c; '' : not pinned); "
                         "by default core 1 when there are two or more")
    ap.add_argument("--client-cpus", default="0" if two else "",
                    help="the cores the load generator is pinned to ('' : not pinned); by "
                         "default core 0, apart from the server's")
    ap.add_argument("--organiser-worker", nargs=3, metavar=("OP", "STORE", "ITEMS"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--pause", type=float, default=0.2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.organiser_worker:
        op, store, items = args.organiser_worker
        organiser_worker(op, Path(store), items.split(","), args.pause)
        return
    if args.client_cpus:
        os.sched_setaffinity(0, cpu_list(args.client_cpus))
    print(f"server pinned to cores {args.server_cpus or 'any'}, load generator to cores "
          f"{args.client_cpus or 'any'}; load average {os.getloadavg()[0]:.2f}")
    phases = {p.strip() for p in args.phases.split(",")} - ({"load"} if args.skip_load else set())
    if not args.crowd:
        phases -= {"crowd", "organiser"}

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="pooling-load-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if phases == {"nuggets"}:  # a store of its own: nothing else is built
        ok, table = nugget_round_phase(workdir, args)
        print("OK: every acknowledged submission is in the store once, a judgment per nugget"
              if ok else "FAILED")
        print(table)
        sys.exit(0 if ok else 1)
    if phases == {"crowdround"}:  # a store of its own: nothing else is built
        ok, table = crowd_round_phase(workdir, args)
        print("OK: every acknowledged judgment is in the store exactly once, no pair over K"
              if ok else "FAILED")
        print(table)
        sys.exit(0 if ok else 1)
    per_assessor = -(-args.judgments // args.assessors)
    t0 = time.perf_counter()
    think = tuple(float(x) for x in args.think.split(","))
    crowd_seconds = (args.crowd_seconds if "crowd" in phases else 0) + (
        2 * args.organiser_seconds if "organiser" in phases else 0)
    n_spare = args.organiser_cli + max(1, args.organiser_warm // 4) if "organiser" in phases else 0
    campaign = build(workdir, args.assessors, load_docs=per_assessor // 2 + 10,
                     crash_docs=-(-args.crash_judgments // args.assessors) + 5, crowd=args.crowd,
                     crowd_docs=int(crowd_seconds / think[0]) + 5, spare_rounds=n_spare)
    n_topics, depth = (int(x) for x in args.late_run.split("x"))
    late = big_run(workdir, n_topics, depth) if n_topics else None
    print(f"store {campaign.path}: {args.assessors} + {args.crowd} assessors, built in "
          f"{time.perf_counter() - t0:.1f} s")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    rows: list[tuple] = []  # the closing table

    def beside(phase, name: str, delay: float, work: OrganiserWork):
        if late is None:
            return phase
        return with_organiser(phase, campaign.path, late, name, delay, work)

    # 0. a crowd that thinks between judgments, with the organiser at the CLI
    missing0 = twice0 = unacked0 = 0
    crowd = Tally()
    if "crowd" in phases:
        server = start_server(campaign.path, port, args.server_cpus)
        crowd, work0 = Tally(), OrganiserWork()
        elapsed = asyncio.run(beside(run_crowd(base, campaign, args.crowd_seconds, think, crowd,
                                               args.seed + 2), "late-crowd", args.crowd_seconds / 3, work0))
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        report(f"crowd ({args.crowd} assessors thinking {args.think} s, {args.crowd_seconds:.0f} s)",
               crowd, elapsed)
        missing0, twice0, unacked0 = check_and_say(campaign.path, "crowd", crowd, work0)
        rows.append((f"{args.crowd} assessors, think {args.think} s", crowd, elapsed, 50, 150, None, work0))

    # 1. load
    missing1 = twice = unacked = 0
    if "load" in phases:
        server = start_server(campaign.path, port, args.server_cpus)
        tally, work1 = Tally(), OrganiserWork()
        elapsed = asyncio.run(beside(run_load(base, campaign, "load", args.judgments, tally, args.seed,
                                              args.retry_rate, args.double_rate), "late-load", 3.0, work1))
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        report(f"load ({args.assessors} concurrent assessors, loopback)", tally, elapsed)
        missing1, twice, unacked = check_and_say(campaign.path, "load", tally, work1)
        rows.append((f"{args.assessors} clients, no think time", tally, elapsed, 100, None, 300, work1))

    # 2. SIGKILL mid-load, restart, clients retry with the same submission ids
    missing = twice2 = unacked2 = 0
    if "crash" in phases:
        missing, twice2, unacked2 = crash_phase(campaign, base, port, args)

    # 3. the organiser's paths while the crowd judges
    missing3 = twice3 = unacked3 = 0
    organiser_figures = None
    if "organiser" in phases:
        server = start_server(campaign.path, port, args.server_cpus)
        crowd3, timings = Tally(), Timings()
        t = time.perf_counter()
        windows = asyncio.run(run_organiser_paths(
            base, campaign, args.organiser_seconds, think, crowd3, timings, args.seed + 3,
            args.organiser_cli, args.organiser_warm))
        elapsed = time.perf_counter() - t
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        report(f"organiser phase ({args.crowd} assessors thinking {args.think} s)", crowd3, elapsed)
        both = Tally(acked={**crowd.acked, **crowd3.acked})  # the crowd round holds both phases
        missing3, twice3, unacked3 = check_and_say(campaign.path, "crowd", both, OrganiserWork())
        for label, why in timings.why.items():
            print(f"  {label} failed {timings.failures[label]} time(s), e.g.: {why}")
        organiser_figures = organiser_table(args.crowd, timings, crowd3, windows)

    ok = (missing0 == twice0 == unacked0 == missing1 == missing == twice == unacked == twice2
          == unacked2 == missing3 == twice3 == unacked3 == 0)
    print("OK: every acknowledged judgment is in the store exactly once" if ok else "FAILED")
    if rows:
        print(bounds_table(rows))
    if organiser_figures:
        print(organiser_figures)
    sys.exit(0 if ok else 1)


def crash_phase(campaign: Campaign, base: str, port: int, args) -> tuple[int, int, int]:
    """SIGKILL the server mid-load and restart it; the clients retry with the same submission
    ids. Returns (acknowledged but missing, stored twice, stored without acknowledgement)."""
    server = start_server(campaign.path, port, args.server_cpus)
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
        kill["server"] = await asyncio.to_thread(start_server, campaign.path, port, args.server_cpus)
        kill["restart_s"] = time.perf_counter() - t

    async def phase() -> float:
        load = asyncio.create_task(run_load(base, campaign, "crash", args.crash_judgments, crash,
                                            args.seed + 1, args.retry_rate, args.double_rate))
        await killer()
        return await load

    elapsed = asyncio.run(phase())
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
    return missing, twice2, unacked2


def check_and_say(path: Path, round_id: str, tally: Tally, work: OrganiserWork) -> tuple[int, int, int]:
    """Check the store after a phase and print it, with the organiser's work meanwhile."""
    missing, twice, unacked = check_store(path, round_id, tally)
    print(f"  store: {missing} acknowledged judgments missing (lost), {twice} stored twice, "
          f"{unacked} stored without an acknowledgement")
    for label, secs, ok, why in work.done:
        print(f"  organiser, meanwhile: pooling {label} {'succeeded' if ok else 'FAILED'} in {secs:.1f} s"
              + ("" if ok else f": {why}"))
    return missing, twice, unacked


def bounds_table(rows: list[tuple]) -> str:
    """Markdown table: each phase's figures beside the bounds a crowd needs."""
    lines = ["| phase | judgments/s | POST p50 ms | POST p95 ms | POST p99 ms | GET p95 ms | "
             "organiser CLI meanwhile | within bounds |", "|---|---|---|---|---|---|---|---|"]
    for label, tally, elapsed, p95_max, p99_max, rate_min, work in rows:
        rate = len(tally.acked) / elapsed
        p95, p99 = pct(tally.post_latency, 95), pct(tally.post_latency, 99)
        ok = p95 < p95_max and (p99_max is None or p99 < p99_max) and (rate_min is None or rate >= rate_min)
        ok = ok and all(w[2] for w in work.done)
        cli = ", ".join(f"{w[0]} {'ok' if w[2] else 'FAILED'} {w[1]:.1f} s" for w in work.done) or "-"
        need = [f"p95 < {p95_max}"] + ([f"p99 < {p99_max}"] if p99_max else []) + (
            [f">= {rate_min}/s"] if rate_min else [])
        lines.append(f"| {label} | {rate:,.0f} | {pct(tally.post_latency, 50):.1f} | {p95:.1f} | "
                     f"{p99:.1f} | {pct(tally.page_latency, 95):.1f} | {cli} | "
                     f"{'yes' if ok else 'NO'} ({', '.join(need)}) |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
