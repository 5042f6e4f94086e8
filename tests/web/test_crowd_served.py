"""A crowd round served: workers reach K answers per pair over HTTP, gold looks like any pair,
claims of workers who left run out, unjudgeable is an answer, and a withdrawn worker is
handed nothing while every judgment they made stays."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from inprocess import app_on, csrf_of, logged_in

from pooling.judging.assessors import add_assessor
from pooling.judging.history import effective_judgments, history
from pooling.judging.rounds import create_round
from pooling.store import Store
from pooling.web.openapi import API_ROOT

WORKERS = ("w1", "w2", "w3", "w4", "w5")
QUEUED = [f"d{i}" for i in range(1, 9)]
GOLD = ["g1", "g2", "g3"]


def crowd_store(tmp_path: Path, *, k: int = 3, rate: float = 0.25) -> tuple[Path, dict[str, str]]:
    """One topic, eight queued documents and three gold ones with text; a crowd round."""
    path = tmp_path / "crowd.duckdb"
    (tmp_path / "a.run").write_text("".join(f"1 Q0 {d} {i} {50 - i} A\n"
                                            for i, d in enumerate(QUEUED, start=1)))
    (tmp_path / "gold.qrels").write_text("".join(f"1 0 {g} 1\n" for g in GOLD))
    (tmp_path / "topics.jsonl").write_text(json.dumps(
        {"query_id": "1", "title": "solar panels", "description": "Costs of solar panels."}) + "\n")
    (tmp_path / "docs.jsonl").write_text("".join(
        json.dumps({"doc_id": d, "title": f"Report {d}", "text": f"Solar panels, report {d}."}) + "\n"
        for d in QUEUED + GOLD))
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run"])
        s.import_topics(tmp_path / "topics.jsonl")
        s.import_documents(tmp_path / "docs.jsonl")
        s.import_qrels(tmp_path / "gold.qrels", name="gold")
        create_round(s, "c", "depth", strategy_params={"depth": 8}, redundancy=k, gold="gold",
                     gold_rate=rate)
        tokens = {w: add_assessor(s, w).token for w in WORKERS}
        tokens["org"] = add_assessor(s, "org", role="organiser").token
    return path, tokens


def api(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url.rstrip("/") + API_ROOT, timeout=30,
                        headers={"Authorization": f"Bearer {token}"})


def work(client: httpx.Client, answer: dict | None = None) -> list[str]:
    """A worker judges what they are handed until the topic is done: the documents in order."""
    seen = []
    while True:
        page = client.get("/rounds/c/topics/1/next").json()
        if page["done"]:
            return seen
        seen.append(page["doc_id"])
        body = {"doc_id": page["doc_id"], "submission_id": page["submission_id"], "seconds": 3}
        body.update(answer or {"grade": 1})
        assert client.post("/rounds/c/topics/1/judgments", json=body).status_code == 200


@pytest.mark.slow
def test_workers_reach_k_answers_per_pair_over_http_and_nothing_is_lost(tmp_path, launch):
    path, tokens = crowd_store(tmp_path, k=3, rate=0.25)
    server = launch(path)
    seen = {}
    for w in WORKERS:
        with api(server.url, tokens[w]) as client:
            seen[w] = work(client)
            progress = client.get("/rounds").json()["rounds"]
            assert [r["round_id"] for r in progress] == ["c"]
    for w, docs in seen.items():
        assert len(docs) == len(set(docs)), f"{w} was handed a pair twice"
        for n in range(1, len(docs) + 1):
            assert abs(sum(d in GOLD for d in docs[:n]) - 0.25 * n) <= 1
    regular = [d for docs in seen.values() for d in docs if d not in GOLD]
    assert sorted(set(regular)) == QUEUED and len(regular) == 3 * len(QUEUED)
    assert seen["w4"] == [] or all(d in GOLD for d in seen["w4"])  # K reached: only gold is left
    with api(server.url, tokens["org"]) as org:
        rounds = org.get("/rounds").json()["rounds"]
    assert rounds[0]["judged"] == len(QUEUED)  # pairs at K, gold left out
    server.stop()
    with Store(path, read_only=True) as s:
        stored = [r for r in history(s).to_pylist() if r["kind"] == "judge"]
    assert len(stored) == sum(len(d) for d in seen.values())


def test_a_gold_pair_and_a_regular_pair_are_served_alike(tmp_path):
    path, tokens = crowd_store(tmp_path, k=2, rate=0.5)
    with app_on(path) as app:
        c = logged_in(app, tokens["w1"])
        pages, kinds = [], []
        for _ in range(4):
            page = c.get("/rounds/c/topics/1")
            assert page.status_code == 200
            doc = re.search(r'data-doc-id="([^"]+)"', page.text).group(1)
            kinds.append(doc in GOLD)
            pages.append(page.text.replace(doc, "DOC"))
            c.post("/rounds/c/topics/1/judgments", json={
                "doc_id": doc, "grade": 1, "submission_id": f"sub-{len(pages):02d}-0123456789abc"},
                headers={"X-CSRF-Token": csrf_of(app, c)})
        # The first page has nothing to go back to or undo; the later ones are compared.
        kinds, pages = kinds[1:], pages[1:]
        assert True in kinds and False in kinds
        gold_page = pages[kinds.index(True)]
        regular_page = pages[kinds.index(False)]

        def form(html: str) -> list[str]:  # every tag and attribute name, values of ids/keys
            return re.findall(r"<(\w+)|\s(data-[\w-]+|id|class)=", html)
        assert form(gold_page) == form(regular_page)
        assert "gold" not in gold_page.lower()


def test_a_claim_of_a_worker_who_left_runs_out_and_the_pair_is_handed_again(tmp_path):
    path, tokens = crowd_store(tmp_path, k=1, rate=0.01)
    with app_on(path) as app:
        live = app.live
        now = [1000.0]
        live.clock = lambda: now[0]
        first = logged_in(app, tokens["w1"]).get(f"{API_ROOT}/rounds/c/topics/1/next",
                                                 headers={"Authorization": f"Bearer {tokens['w1']}"})
        held = first.json()["doc_id"]
        c2 = logged_in(app, tokens["w2"])
        auth = {"Authorization": f"Bearer {tokens['w2']}"}
        assert c2.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth).json()["doc_id"] != held
        now[0] += live.claims.lease + 1  # w1 left without answering
        c3 = logged_in(app, tokens["w3"])
        auth3 = {"Authorization": f"Bearer {tokens['w3']}"}
        assert c3.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth3).json()["doc_id"] == held


def test_unjudgeable_is_stored_over_the_api_and_counts_toward_k(tmp_path, launch):
    path, tokens = crowd_store(tmp_path, k=1, rate=0.01)
    server = launch(path)
    with api(server.url, tokens["w1"]) as client:
        page = client.get("/rounds/c/topics/1/next").json()
        assert page["can_answer_unjudgeable"] is True
        sent = client.post("/rounds/c/topics/1/judgments", json={
            "doc_id": page["doc_id"], "unjudgeable": True, "submission_id": page["submission_id"]})
        assert sent.status_code == 200, sent.text
        again = client.get(f"/rounds/c/topics/1/docs/{page['doc_id']}").json()
        assert again["current_unjudgeable"] is True and again["current_grade"] is None
        both = client.post("/rounds/c/topics/1/judgments", json={
            "doc_id": page["doc_id"], "unjudgeable": True, "grade": 1,
            "submission_id": "b" * 32})
        assert both.status_code == 422 and "not both" in both.json()["error"]
    with api(server.url, tokens["w2"]) as other:
        assert page["doc_id"] not in work(other)
    server.stop()
    with Store(path, read_only=True) as s:
        kinds = {r["doc_id"]: r["kind"] for r in history(s).to_pylist()
                 if r["assessor_id"] == "w1"}
    assert kinds == {page["doc_id"]: "unjudgeable"}


def test_a_withdrawn_worker_is_handed_nothing_and_keeps_every_judgment(tmp_path):
    path, tokens = crowd_store(tmp_path, k=3, rate=0.01)
    with app_on(path) as app:
        c = logged_in(app, tokens["w1"])
        auth = {"Authorization": f"Bearer {tokens['w1']}"}
        made = []
        for _ in range(3):
            page = c.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth).json()
            made.append(page["doc_id"])
            assert c.post(f"{API_ROOT}/rounds/c/topics/1/judgments", headers=auth, json={
                "doc_id": page["doc_id"], "grade": 2,
                "submission_id": page["submission_id"]}).status_code == 200

        def decide(store, decision):
            store.con.execute("INSERT INTO worker_decisions (round_id, assessor_id, decision, "
                              "decided_at) VALUES ('c', 'w1', ?, now())", [decision])
        app.live.gate.run_sync(decide, "withdraw")
        app.live.refresh(frozenset({"worker_decisions"}))
        assert c.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth).status_code == 404
        late = c.post(f"{API_ROOT}/rounds/c/topics/1/judgments", headers=auth, json={
            "doc_id": "d8", "grade": 1, "submission_id": "late-0123456789abcdef"})
        assert late.status_code == 404
        rounds = c.get(f"{API_ROOT}/rounds", headers=auth).json()["rounds"]
        assert rounds[0]["withdrawn"] is True and rounds[0]["topics"] == []
        home = c.get("/")
        assert "withdrawn you from this round" in home.text
        kept = app.live.gate.run_sync(lambda s: effective_judgments(s, "c", assessor_id="w1"))
        assert sorted(kept["doc_id"].to_pylist()) == sorted(made)
        app.live.gate.run_sync(decide, "clear")
        app.live.refresh(frozenset({"worker_decisions"}))
        assert c.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth).status_code == 200


@pytest.mark.slow
def test_the_api_refuses_a_token_at_once_when_it_is_revoked_or_replaced(tmp_path, launch):
    import subprocess
    import sys

    path, tokens = crowd_store(tmp_path, k=3)
    server = launch(path)
    with api(server.url, tokens["w1"]) as w1, api(server.url, tokens["w2"]) as w2:
        assert w1.get("/rounds").status_code == 200  # known to the server's book of tokens
        assert w2.get("/rounds").status_code == 200
        for args in (["assessors", "revoke", str(path), "w1"],
                     ["assessors", "token", str(path), "w2"]):
            done = subprocess.run([sys.executable, "-m", "pooling", *args], capture_output=True,
                                  text=True, timeout=60)
            assert done.returncode == 0, done.stderr
        assert w1.get("/rounds").status_code == 401
        assert w2.get("/rounds").status_code == 401
    with api(server.url, tokens["w3"]) as w3:
        assert w3.get("/rounds").status_code == 200
    with httpx.Client(base_url=server.url.rstrip("/") + API_ROOT, timeout=30) as anonymous:
        assert anonymous.get("/rounds", headers={"Authorization": "Bearer nope"}).status_code == 401
