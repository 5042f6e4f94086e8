"""`kill -9` of the judging server while assessors judge: after a restart, every judgment
that was acknowledged is in the store exactly once, and nothing unacknowledged sneaks in
twice (clients resend with the same submission id until they get an answer)."""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import httpx
import pyarrow as pa
import pytest
from conftest import free_port, start_server

from pooling.judging.assessors import add_assessor, assign
from pooling.judging.rounds import create_round
from pooling.store import Store

pytestmark = pytest.mark.slow
PEOPLE, DOCS = 6, 40


def build(tmp_path):
    path = tmp_path / "crowd.duckdb"
    topics = [f"T{i}" for i in range(PEOPLE)]
    rows = {"query_id": [], "doc_id": [], "rank": [], "score": []}
    for q in topics:
        for r in range(DOCS):
            rows["query_id"].append(q)
            rows["doc_id"].append(f"{q}-d{r:02d}")
            rows["rank"].append(r + 1)
            rows["score"].append(float(DOCS - r))
    with Store.create(path) as s:
        s.import_run(pa.table(rows), "A")
        tokens = {f"p{i}": add_assessor(s, f"p{i}").token for i in range(PEOPLE)}
        create_round(s, "r", "depth", strategy_params={"depth": DOCS}, topics=topics)
        assign(s, "r", sorted(tokens))
    return path, tokens


def test_every_acknowledged_judgment_survives_a_kill_9_exactly_once(tmp_path):
    path, tokens = build(tmp_path)
    port = free_port()
    server = {"now": start_server(path, port)}
    acked: dict[str, str] = {}
    lock = threading.Lock()
    stop = time.monotonic() + 600  # a bound for a hung server, not a speed requirement

    def send(client: httpx.Client, method: str, url: str, **kw) -> httpx.Response:
        while time.monotonic() < stop:
            try:
                answer = client.request(method, url, **kw)
                if answer.status_code < 500:
                    return answer
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise TimeoutError(url)

    def assessor(who: str, token: str) -> None:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10, follow_redirects=False)
        send(client, "GET", "/login", params={"token": token})
        csrf = re.search(r'name="csrf" value="([^"]+)"', send(client, "GET", "/").text).group(1)
        topic = re.search(r'href="(/rounds/r/topics/[^"]+)"', send(client, "GET", "/").text).group(1)
        for _ in range(DOCS):
            page = send(client, "GET", topic)
            found = re.search(r'data-doc-id="([^"]+)"', page.text)
            if found is None:
                return
            sid = re.search(r'data-submission-id="([^"]+)"', page.text).group(1)
            answer = send(client, "POST", topic + "/judgments", headers={"X-CSRF-Token": csrf},
                          json={"doc_id": found.group(1), "grade": 1, "submission_id": sid})
            assert answer.status_code == 200, answer.text
            with lock:
                acked[sid] = found.group(1)

    threads = [threading.Thread(target=assessor, args=item) for item in tokens.items()]
    for t in threads:
        t.start()
    while len(acked) < PEOPLE * DOCS // 3:
        assert any(t.is_alive() for t in threads), "every assessor stopped before a third was judged"
        time.sleep(0.01)
    os.kill(server["now"].process.pid, signal.SIGKILL)
    server["now"].process.wait()
    killed_at = len(acked)
    server["now"] = start_server(path, port)
    for t in threads:
        t.join(stop - time.monotonic())
    server["now"].stop()
    assert killed_at < len(acked) == PEOPLE * DOCS  # judging went on after the restart
    with Store(path, read_only=True) as s:
        stored = s.con.execute("SELECT submission_id, doc_id FROM judgments").fetchall()
    by_sid: dict[str, list[str]] = {}
    for sid, doc in stored:
        by_sid.setdefault(sid, []).append(doc)
    assert all(len(docs) == 1 for docs in by_sid.values())  # nothing twice
    assert {sid: docs[0] for sid, docs in by_sid.items()} == acked  # every acknowledged, only those
