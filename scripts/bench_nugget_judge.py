#!/usr/bin/env python
"""Benchmark a model judge on an assignment round: requests in flight against one at a time,
and what a kill -9 costs.

Builds a store (fixed seed) of 100 topics x 10 answer runs, a nugget version of 10 nuggets a
topic, and an assignment round of its 10,000 (answer, nugget) pairs; starts a local
OpenAI-compatible chat server that answers every request after `--delay` seconds (50 ms);
then, each `pooling judge` a fresh process:

- one request at a time (`--concurrency 1`) on the first 1,000 pairs (`--limit`), giving the
  time per pair;
- `--concurrency 16` on all 10,000 pairs of a second judge, killed with SIGKILL once the
  server has answered 3,000 requests, then run again to the end.

Reported: seconds per 1,000 pairs each way and their ratio, and after the kill how many
requests the server received in all against the 10,000 pairs (the ones asked twice: those
answered but not yet stored when the process died).

    .venv/bin/python scripts/bench_nugget_judge.py [--workdir DIR] [--delay 0.05]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

TOPICS, RUNS, NUGGETS = 100, 10, 10
SERVER = textwrap.dedent("""\
    import json, sys, threading, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    DELAY = float(sys.argv[1])
    LOCK = threading.Lock()
    STATS = {"requests": 0}

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # a reply's header lines go out at once, as a real server's
        def log_message(self, *a):
            pass
        def do_GET(self):
            with LOCK:
                data = json.dumps(STATS).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            time.sleep(DELAY)
            with LOCK:
                STATS["requests"] += 1
                n = STATS["requests"]
            answer = "##final score: %d" % (n % 3)
            data = json.dumps({"choices": [{"message": {"content": answer}}],
                               "usage": {"prompt_tokens": 100, "completion_tokens": 5}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """)


def build(path: Path, work: Path) -> None:
    from pooling.nuggets.rounds import create_assignment_round
    from pooling.store import Store
    from pooling.store.answers import import_answers
    from pooling.store.nugget_banks import import_nuggets

    answers = work / "answers.tsv"
    answers.write_text("".join(f"{q}\trun{r}\tRun {r} answers topic {q}. It says more.\n"
                               for q in range(TOPICS) for r in range(RUNS)))
    bank = work / "nuggets.jsonl"
    bank.write_text("".join(json.dumps({"qid": str(q), "nuggets": [
        {"text": f"fact {i} of topic {q}", "importance": "vital" if i < 3 else "okay"}
        for i in range(NUGGETS)]}) + "\n" for q in range(TOPICS)))
    with Store.create(path) as s:
        import_answers(s, [answers], add_topics=True)
        version = import_nuggets(s, bank, "bench").version
        create_assignment_round(s, "assign", version, grades=3)


def requests(port: int) -> int:
    """How many chat requests the server has answered (read on a fresh connection)."""
    for attempt in range(5):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=30) as r:
                return json.loads(r.read())["requests"]
        except TimeoutError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--delay", type=float, default=0.05)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-judge-"))
    work.mkdir(parents=True, exist_ok=True)
    store = work / "judge.duckdb"
    store.unlink(missing_ok=True)
    build(store, work)
    (work / "server.py").write_text(SERVER)
    server = subprocess.Popen([sys.executable, str(work / "server.py"), str(args.delay)],
                              stdout=subprocess.PIPE, text=True)
    pooling = str(Path(sys.executable).with_name("pooling"))
    try:
        port = int(server.stdout.readline())
        url = f"base_url=http://127.0.0.1:{port}/v1"
        for name, model in (("one", "m1"), ("many", "m16")):  # two models: no answer shared
            subprocess.run([pooling, "judges", "add", str(store), name, "--backend", "openai",
                            "--param", url, "--param", f"model={model}", "--param",
                            "logprobs=false", "--param", "max_grade=2"], check=True,
                           stdout=subprocess.DEVNULL)
        start = time.perf_counter()
        subprocess.run([pooling, "judge", str(store), "--judge", "one", "--round", "assign",
                        "--concurrency", "1", "--limit", "1000"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        one = time.perf_counter() - start
        before = requests(port)
        start = time.perf_counter()
        job = subprocess.Popen([pooling, "judge", str(store), "--judge", "many", "--round",
                                "assign", "--concurrency", "16"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # (the server prints a broken pipe for each request in flight when the job is killed)
        while requests(port) - before < 3000 and job.poll() is None:
            time.sleep(0.05)
        os.kill(job.pid, signal.SIGKILL)
        job.wait()
        killed_at = requests(port) - before
        subprocess.run([pooling, "judge", str(store), "--judge", "many", "--round", "assign",
                        "--concurrency", "16"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        many = time.perf_counter() - start
        asked = requests(port) - before
    finally:
        server.kill()
        server.wait()
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        stored = s.one("n", "SELECT count(*) FROM judgments WHERE assessor_id = 'many'")[0]
    pairs = TOPICS * RUNS * NUGGETS
    per_one, per_many = one, many / (pairs / 1000)
    print(f"{pairs:,} (answer, nugget) pairs, a chat server answering in {args.delay * 1000:.0f} ms")
    print(f"{'':44s} {'s / 1,000 pairs':>16s}")
    print(f"{'one request at a time (1,000 pairs)':44s} {per_one:16.1f}")
    print(f"{'16 in flight, killed at 3,000, rerun':44s} {per_many:16.1f}")
    print(f"ratio: {per_one / per_many:.1f}x; stored {stored:,} of {pairs:,}; the server was asked "
          f"{asked:,} times ({asked - pairs:,} twice), {killed_at:,} before the kill")


if __name__ == "__main__":
    main()
