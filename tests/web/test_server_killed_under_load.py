"""`kill -9` of the judging server while assessors judge: after a restart, every judgment
that was acknowledged is in the store exactly once, and nothing unacknowledged sneaks in
twice (clients resend with the same submission id until they get an answer); in a crowd
round, no pair has more than K answers in what is derived from it, and an answer to a pair
never handed to its sender is refused before and after the restart."""

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
from pooling.judging.history import effective_judgments
from pooling.judging.rounds import create_round
from pooling.judging.rules import derive_grades
from pooling.store import Store

pytestmark = pytest.mark.slow
PEOPLE, DOCS = 6, 40
BOUND = 600  # seconds: a bound for a hung server, not a speed requirement


def ranked(topics: list[str], docs: int) -> pa.Table:
    """One run ranking `docs` documents of each topic."""
    rows = {"query_id": [], "doc_id": [], "rank": [], "score": []}
    for q in topics:
        for r in range(docs):
            rows["query_id"].append(q)
            rows["doc_id"].append(f"{q}-d{r:02d}")
            rows["rank"].append(r + 1)
            rows["score"].append(float(docs - r))
    return pa.table(rows)


def build(tmp_path):
    path = tmp_path / "crowd.duckdb"
    topics = [f"T{i}" for i in range(PEOPLE)]
    with Store.create(path) as s:
        s.import_run(ranked(topics, DOCS), "A")
        tokens = {f"p{i}": add_assessor(s, f"p{i}").token for i in range(PEOPLE)}
        create_round(s, "r", "depth", strategy_params={"depth": DOCS}, topics=topics)
        assign(s, "r", sorted(tokens))
    return path, tokens


def sender(stop: float):
    """A client's request, sent again (same body, same submission id) until the server
    answers below 500: what an assessor's page or script does while the server restarts."""
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
    return send


def kill_9_under_load(path, port: int, threads: list[threading.Thread], done, at: int,
                      stop: float) -> int:
    """Start the clients, SIGKILL the server once `done()` reaches `at`, start it again, let
    the clients finish, stop the server; returns `done()` when it was killed."""
    server = start_server(path, port)
    for t in threads:
        t.start()
    while done() < at:
        assert any(t.is_alive() for t in threads), "every client stopped before the kill"
        time.sleep(0.01)
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()
    killed_at = done()
    server = start_server(path, port)
    for t in threads:
        t.join(stop - time.monotonic())
    server.stop()
    return killed_at


def test_every_acknowledged_judgment_survives_a_kill_9_exactly_once(tmp_path):
    path, tokens = build(tmp_path)
    port = free_port()
    acked: dict[str, str] = {}
    lock = threading.Lock()
    stop = time.monotonic() + BOUND
    send = sender(stop)

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
    killed_at = kill_9_under_load(path, port, threads, lambda: len(acked), PEOPLE * DOCS // 3, stop)
    assert killed_at < len(acked) == PEOPLE * DOCS  # judging went on after the restart
    with Store(path, read_only=True) as s:
        stored = s.con.execute("SELECT submission_id, doc_id FROM judgments").fetchall()
    by_sid: dict[str, list[str]] = {}
    for sid, doc in stored:
        by_sid.setdefault(sid, []).append(doc)
    assert all(len(docs) == 1 for docs in by_sid.values())  # nothing twice
    assert {sid: docs[0] for sid, docs in by_sid.items()} == acked  # every acknowledged, only those


def build_crowd(tmp_path, topics: int = 2, docs: int = 30, k: int = 2):
    """A crowd round of `topics` x `docs` pairs at K = `k`, no gold, and PEOPLE workers."""
    path = tmp_path / "crowd.duckdb"
    names = [f"T{i}" for i in range(topics)]
    with Store.create(path) as s:
        s.import_run(ranked(names, docs), "A")
        tokens = {f"w{i}": add_assessor(s, f"w{i}").token for i in range(PEOPLE)}
        create_round(s, "c", "depth", strategy_params={"depth": docs}, topics=names, redundancy=k)
    return path, tokens, names


def test_a_crowd_round_killed_under_load_keeps_every_answer_and_no_pair_past_k(tmp_path):
    """Workers answer what the API hands them, and each also posts a pair nobody handed
    them, while the server is killed with SIGKILL and started again: every acknowledged
    answer is stored once, every unhanded post was refused and is not stored, and no pair
    has more than K answers in what is derived from the round."""
    topics, docs, k = 2, 30, 2
    path, tokens, names = build_crowd(tmp_path, topics, docs, k)
    port = free_port()
    acked: dict[str, tuple[str, str, str]] = {}  # submission id -> (worker, topic, doc)
    refused: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + BOUND
    send = sender(stop)

    def worker(who: str, token: str) -> None:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1", timeout=10,
                              headers={"Authorization": f"Bearer {token}"})
        seen: set[tuple[str, str]] = set()
        for q in names:
            while True:
                page = send(client, "GET", f"/rounds/c/topics/{q}/next").json()
                if page["done"]:
                    break
                seen.add((q, page["doc_id"]))
                # a pair of the topic never handed to this worker: refused, whoever sends it
                other = next(f"{q}-d{r:02d}" for r in reversed(range(docs))
                             if (q, f"{q}-d{r:02d}") not in seen)
                bad = send(client, "POST", f"/rounds/c/topics/{q}/judgments", json={
                    "doc_id": other, "grade": 2, "submission_id": f"x{page['submission_id']}"})
                assert bad.status_code == 422, bad.text
                with lock:
                    refused.append(f"x{page['submission_id']}")
                sent = send(client, "POST", f"/rounds/c/topics/{q}/judgments", json={
                    "doc_id": page["doc_id"], "grade": 1, "submission_id": page["submission_id"],
                    "handout": page["handout"]})
                assert sent.status_code == 200, sent.text
                with lock:
                    acked[page["submission_id"]] = (who, q, page["doc_id"])

    threads = [threading.Thread(target=worker, args=item) for item in tokens.items()]
    killed_at = kill_9_under_load(path, port, threads, lambda: len(acked), topics * docs * k // 3,
                                  stop)
    assert killed_at < len(acked)  # judging went on after the restart
    with Store(path, read_only=True) as s:
        stored = s.con.execute("SELECT submission_id, assessor_id, query_id, doc_id "
                               "FROM judgments").fetchall()
        counted = effective_judgments(s, "c")
        grades = derive_grades(s, "majority", round_id="c")
    by_sid: dict[str, list[tuple[str, str, str]]] = {}
    for sid, *rest in stored:
        by_sid.setdefault(sid, []).append(tuple(rest))
    assert all(len(rows) == 1 for rows in by_sid.values())  # nothing twice
    assert {sid: rows[0] for sid, rows in by_sid.items()} == acked  # every acknowledged, only those
    assert refused and not set(refused) & set(by_sid)  # no unhanded post was stored
    per_pair: dict[tuple[str, str], int] = {}
    for q, d in zip(counted["query_id"].to_pylist(), counted["doc_id"].to_pylist(), strict=True):
        per_pair[(q, d)] = per_pair.get((q, d), 0) + 1
    assert per_pair == {(q, f"{q}-d{r:02d}"): k for q in names for r in range(docs)}
    assert grades.num_rows == topics * docs
