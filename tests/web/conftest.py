"""A small judging campaign in a store, and `pooling serve` running on it as a real process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from pooling.judging.assessors import add_assessor, assign
from pooling.judging.rounds import create_round
from pooling.store import Store

REPO_ROOT = Path(__file__).resolve().parents[2]
XSS_TITLE = "<script>alert(1)</script> solar panels"
XSS_TEXT = ("Solar panels on roofs. <img src=x onerror=alert(1)> "
            "<script>alert(1)</script> Cheap solar energy & storage.")

RUNS = {
    "a.run": "1 Q0 d1 1 9 A\n1 Q0 d2 2 8 A\n1 Q0 d3 3 7 A\n1 Q0 d4 4 6 A\n"
             "2 Q0 e1 1 9 A\n2 Q0 e2 2 8 A\n2 Q0 e3 3 7 A\n",
    "b.run": "1 Q0 d2 1 9 B\n1 Q0 d5 2 8 B\n1 Q0 d1 3 7 B\n1 Q0 d6 4 6 B\n"
             "2 Q0 e3 1 9 B\n2 Q0 e4 2 8 B\n2 Q0 e1 3 7 B\n",
}
TOPICS = [
    {"query_id": "1", "title": "solar panels", "description": "Costs of solar panels at home.",
     "narrative": "Relevant documents give prices or savings of rooftop solar panels."},
    {"query_id": "2", "title": "wind turbines", "description": "Wind turbine noise.",
     "narrative": "Relevant documents report noise measurements near wind turbines."},
]
DOCS = [{"doc_id": d, "title": f"Solar report {d}", "text": f"Solar panels text of {d}. Panels are cheap."}
        for d in ("d2", "d3", "d4", "d5", "d6")]
DOCS.append({"doc_id": "d1", "title": XSS_TITLE, "text": XSS_TEXT})
DOCS += [{"doc_id": e, "title": f"Wind {e}", "text": f"Wind turbines and noise, document {e}."}
         for e in ("e1", "e2", "e3", "e4")]


@dataclass
class Campaign:
    """The store file and the secret tokens of its people."""

    path: Path
    tokens: dict[str, str]


def build_campaign(tmp_path: Path) -> Campaign:
    """Two runs, two topics with text, a depth-4 round; ann judges topic 1, bob topic 2."""
    path = tmp_path / "campaign.duckdb"
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "topics.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOPICS))
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    with Store.create(path) as s:
        s.import_runs([tmp_path / n for n in RUNS])
        s.import_topics(tmp_path / "topics.jsonl")
        s.import_documents(tmp_path / "docs.jsonl")
        create_round(s, "r1", "depth", strategy_params={"depth": 4})
        tokens = {p.assessor_id: p.token for p in (
            add_assessor(s, "ann"), add_assessor(s, "bob"), add_assessor(s, "org", role="organiser"))}
        assign(s, "r1", ["ann", "bob"])
    return Campaign(path, tokens)


@pytest.fixture
def campaign(tmp_path) -> Campaign:
    return build_campaign(tmp_path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A running `pooling serve`; `stop()` sends SIGTERM (a graceful shutdown) and waits."""

    process: subprocess.Popen
    url: str

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(store: Path, port: int | None = None, timeout: float = 30.0,
                 extra_args: tuple[str, ...] = (), probe: str = "login") -> Server:
    """`python -m pooling serve STORE --port PORT` as a subprocess, once it answers HTTP.

    Its output goes to `<store>.serve.log`: a pipe nobody reads could fill and stall it.
    """
    port = port or free_port()
    log = store.with_name(store.name + ".serve.log")
    with open(log, "a") as fh:
        process = subprocess.Popen(
            [sys.executable, "-m", "pooling", "serve", str(store), "--port", str(port), *extra_args],
            cwd=REPO_ROOT, stdout=fh, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}: {log.read_text()}")
        try:
            if httpx.get(url + probe, timeout=1.0).status_code == 200:
                return Server(process, url)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("the server did not start in time")


@pytest.fixture
def server(campaign):
    srv = start_server(campaign.path)
    yield srv
    srv.stop()


@pytest.fixture
def launch():
    """Start `pooling serve` on a store of the test's making; every server stops at teardown."""
    servers: list[Server] = []

    def start(store: Path) -> Server:
        servers.append(start_server(store))
        return servers[-1]

    yield start
    for srv in servers:
        srv.stop()
