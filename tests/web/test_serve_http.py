"""`pooling serve` over HTTP: who may see what, CSRF, idempotent submissions, the store lock."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import httpx
import pytest

from pooling.judging.assessors import assign
from pooling.judging.judgments import history
from pooling.judging.rounds import create_round
from pooling.store import Store

pytestmark = pytest.mark.slow


def _client(server, token: str) -> httpx.Client:
    client = httpx.Client(base_url=server.url, follow_redirects=False, timeout=10)
    assert client.get("/login", params={"token": token}).status_code == 303
    return client


def _csrf(client: httpx.Client) -> str:
    page = client.get("/").text
    if 'name="csrf"' not in page:
        page = client.get("/organiser").text
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def _judge(client, csrf, round_id, query_id, doc_id, grade=1, sid="s" * 32):
    return client.post(f"/rounds/{round_id}/topics/{query_id}/judgments",
                       json={"doc_id": doc_id, "grade": grade, "submission_id": sid, "seconds": 2},
                       headers={"X-CSRF-Token": csrf})


def test_other_assessors_items_answer_exactly_like_missing_ones(campaign, server):
    """ann judges topic 1; topic 2 (e1..e4) is bob's. Every route taking an id must answer
    bob's items and non-existent ones with the same status and body."""
    ann = _client(server, campaign.tokens["ann"])
    csrf = _csrf(ann)
    undo = lambda r, q: ann.post(f"/rounds/{r}/topics/{q}/undo",  # noqa: E731
                                 json={"submission_id": "u" * 32}, headers={"X-CSRF-Token": csrf})
    cases = {
        "topic": [ann.get("/rounds/r1/topics/2"), ann.get("/rounds/r1/topics/99"),
                  ann.get("/rounds/nope/topics/1")],
        "document": [ann.get("/rounds/r1/topics/2/docs/e1"), ann.get("/rounds/r1/topics/2/docs/zz"),
                     ann.get("/rounds/r1/topics/1/docs/e1"), ann.get("/rounds/r1/topics/99/docs/e1"),
                     ann.get("/rounds/nope/topics/2/docs/e1")],
        "judge": [_judge(ann, csrf, "r1", "2", "e1"), _judge(ann, csrf, "r1", "2", "zz"),
                  _judge(ann, csrf, "r1", "1", "e1"), _judge(ann, csrf, "nope", "2", "e1"),
                  _judge(ann, csrf, "r1", "2", "e1", grade=99)],
        "undo": [undo("r1", "2"), undo("r1", "99"), undo("nope", "1")],
        "organiser": [ann.get("/organiser"), ann.get("/organiser/rounds/r1"),
                      ann.get("/organiser/rounds/nope"), ann.get("/organiser/qrels/nope"),
                      ann.get("/organiser/judgments.csv"), ann.get("/no/such/page")],
    }
    answers = {(r.status_code, r.content) for responses in cases.values() for r in responses}
    assert len(answers) == 1, answers
    status, body = answers.pop()
    assert status == 404 and b"e1" not in body and b"nope" not in body
    # ...while ann's own items are there
    assert ann.get("/rounds/r1/topics/1/docs/d1").status_code == 200
    org = _client(server, campaign.tokens["org"])
    assert org.get("/organiser/rounds/r1").status_code == 200
    assert (org.get("/organiser/rounds/nope").content, org.get("/rounds/r1/topics/9/docs/x").content) \
        == (body, body)


def test_posts_without_the_sessions_csrf_token_are_refused(campaign, server):
    ann = _client(server, campaign.tokens["ann"])
    bob = _client(server, campaign.tokens["bob"])
    no_token = ann.post("/rounds/r1/topics/1/judgments",
                        json={"doc_id": "d1", "grade": 1, "submission_id": "a" * 32})
    bobs_token = _judge(ann, _csrf(bob), "r1", "1", "d1", sid="b" * 32)
    form = ann.post("/logout", data={"csrf": "forged"})
    login = httpx.post(server.url + "login", data={"token": campaign.tokens["ann"], "csrf": "x"})
    assert [r.status_code for r in (no_token, bobs_token, form, login)] == [403, 403, 403, 403]
    assert _judge(ann, _csrf(ann), "r1", "1", "d1", sid="c" * 32).status_code == 200


def test_a_retried_submission_is_stored_once_and_undo_is_a_retract(campaign, server):
    ann = _client(server, campaign.tokens["ann"])
    csrf = _csrf(ann)
    first = _judge(ann, csrf, "r1", "1", "d1", grade=2, sid="retry-0123456789abcdef")
    again = _judge(ann, csrf, "r1", "1", "d1", grade=2, sid="retry-0123456789abcdef")
    assert first.json()["stored"] is True and again.json()["duplicate"] is True
    undo = {"submission_id": "undo-0123456789abcdef"}
    one = ann.post("/rounds/r1/topics/1/undo", json=undo, headers={"X-CSRF-Token": csrf})
    two = ann.post("/rounds/r1/topics/1/undo", json=undo, headers={"X-CSRF-Token": csrf})
    assert one.json()["undone"] == two.json()["undone"] == "d1" and two.json()["duplicate"]
    nothing = ann.post("/rounds/r1/topics/1/undo", json={"submission_id": "x" * 20},
                       headers={"X-CSRF-Token": csrf})
    assert nothing.status_code == 409
    bad = _judge(ann, csrf, "r1", "1", "d1", grade=7, sid="y" * 20)
    assert bad.status_code == 422 and "grade" in bad.json()["error"]  # as the JSON API answers
    server.stop()
    with Store(campaign.path, read_only=True) as s:
        rows = history(s).to_pylist()
    assert [(r["kind"], r["grade"], r["submission_id"]) for r in rows] == [
        ("judge", 2, "retry-0123456789abcdef"), ("retract", None, "undo-0123456789abcdef")]


def test_organiser_adds_people_assigns_derives_and_downloads(campaign, server):
    org = _client(server, campaign.tokens["org"])
    csrf = _csrf(org)
    ann = _client(server, campaign.tokens["ann"])
    _judge(ann, _csrf(ann), "r1", "1", "d1", grade=2, sid="o" * 32)

    added = org.post("/organiser/people", data={"csrf": csrf, "name": "Cy Young"})
    token = re.search(r"<dt>Token</dt><dd><code>([^<]+)</code>", added.text).group(1)
    assert org.get("/organiser").text.count(token) == 0  # shown once, on that page only
    cy = _client(server, token)
    assert "Nothing is assigned to you yet" in cy.get("/").text

    pooled = org.post("/organiser/rounds", data={"csrf": csrf, "name": "r2", "strategy": "depth",
                                                 "depth": "2", "grades": "0,1"})
    assigned = org.post("/organiser/assign", data={"csrf": csrf, "round": "r2",
                                                   "assessors": ["ann", "cy-young"], "overlap": "1"})
    assert pooled.status_code == assigned.status_code == 303
    assert "Round r2" in cy.get("/").text
    derived = org.post("/organiser/qrels", data={"csrf": csrf, "rule": "latest", "name": "v1",
                                                 "round": "r1"})
    assert derived.status_code == 303
    overview = org.get("/organiser").text
    assert "qrels version v1: 1 judgments" in overview and "r2" in overview
    qrels = org.get("/organiser/qrels/v1")
    assert qrels.headers["content-disposition"] == 'attachment; filename="v1.qrels"'
    assert qrels.text.splitlines()[-1] == "1 0 d1 2"
    csv = org.get("/organiser/judgments.csv").text.splitlines()
    assert csv[0].startswith('"seq","submission_id"') and len(csv) == 2
    duplicate = org.post("/organiser/qrels", data={"csrf": csrf, "rule": "latest", "name": "v1"})
    assert "already exists" in org.get(duplicate.headers["location"]).text
    assert "Throughput" in overview and "ann" in org.get("/organiser/rounds/r1").text

    # r2 gave every document to both ann and cy (overlap 1): they disagree on two of three
    for who, client, grades in (("ann", ann, (1, 0, 1)), ("cy", cy, (1, 1, 0))):
        for doc, grade in zip(("d1", "d2", "d5"), grades, strict=True):
            answer = _judge(client, _csrf(client), "r2", "1", doc, grade=grade, sid=f"{who}-r2-{doc}" * 2)
            assert answer.status_code == 200, answer.text
    page = org.get("/organiser/rounds/r2").text
    assert "3 pair(s) judged by two or more assessors" in page
    assert "ann / cy-young" in page
    assert page.count(">adjudicate</a>") == 2
    assert "ann=0, cy-young=1" in page


def test_without_organiser_credentials_commands_name_the_server(campaign, server):
    marker = campaign.path.with_name(campaign.path.name + ".server.json")
    info = json.loads(marker.read_text())
    assert info == {"pid": server.process.pid, "url": server.url}
    token_file = campaign.path.with_name(campaign.path.name + ".organiser-token")
    assert token_file.stat().st_mode & 0o777 == 0o600
    hidden = token_file.with_name("hidden-token")
    token_file.rename(hidden)  # as another user: the file cannot be read
    try:
        for command in (["info", str(campaign.path)],
                        ["assessors", "add", str(campaign.path), "Dee"]):
            done = subprocess.run([sys.executable, "-m", "pooling", *command], capture_output=True,
                                  text=True, timeout=60, env=_without_token())
            assert done.returncode == 1, done
            assert f"pid {server.process.pid}" in done.stderr and server.url in done.stderr
            assert "organiser credentials" in done.stderr and "--token" in done.stderr
            assert "Traceback" not in done.stderr
    finally:
        hidden.rename(token_file)
    server.stop()
    assert server.process.returncode == 0 and not marker.exists() and not token_file.exists()
    done = subprocess.run([sys.executable, "-m", "pooling", "info", str(campaign.path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _without_token() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "POOLING_TOKEN"}


def test_serve_refuses_a_store_another_server_holds(campaign, server):
    done = subprocess.run([sys.executable, "-m", "pooling", "serve", str(campaign.path),
                           "--port", "0"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and server.url in done.stderr


def test_adaptive_rounds_choose_the_next_document_live(campaign, launch):
    with Store(campaign.path) as s:
        create_round(s, "live", "mtf", topics=["1"])
        assign(s, "live", ["ann"])
    server = launch(campaign.path)
    ann = _client(server, campaign.tokens["ann"])
    csrf = _csrf(ann)
    first = re.search(r'data-doc-id="([^"]+)"', ann.get("/rounds/live/topics/1").text).group(1)
    assert _judge(ann, csrf, "live", "1", first, grade=2, sid="live-first-0123456789").status_code == 200
    second = re.search(r'data-doc-id="([^"]+)"', ann.get("/rounds/live/topics/1").text).group(1)
    again = re.search(r'data-doc-id="([^"]+)"', ann.get("/rounds/live/topics/1").text).group(1)
    assert second != first and again == second  # a reload shows the same, served document
    unserved = sorted({"d1", "d2", "d3", "d4", "d5", "d6"} - {first, second})[0]
    assert _judge(ann, csrf, "live", "1", unserved, sid="live-early-0123456789").status_code == 404
    server.stop()
    with Store(campaign.path, read_only=True) as s:
        queued = s.con.execute("SELECT doc_id FROM pool_entries WHERE round_id = 'live' "
                               "ORDER BY position").fetchall()
    assert [q[0] for q in queued][:2] == [first, second]
