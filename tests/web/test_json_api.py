"""The assessors' JSON API of `pooling serve`: bearer tokens, the pages' access rules, OpenAPI."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from pooling.judging.judgments import history
from pooling.store import Store
from pooling.web import api_views
from pooling.web.api_views import plain
from pooling.web.highlight import highlight, query_terms
from pooling.web.openapi import API_ROOT, DOCUMENT
from pooling.web.sessions import SESSION_COOKIE

slow = pytest.mark.slow
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def _api(server, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=server.url.rstrip("/") + API_ROOT, headers=headers, timeout=10)


def _judge(client: httpx.Client, round_id: str, query_id: str, doc_id: str, grade: object = 1,
           sid: str = "s" * 32) -> httpx.Response:
    return client.post(f"/rounds/{round_id}/topics/{query_id}/judgments",
                       json={"doc_id": doc_id, "grade": grade, "submission_id": sid, "seconds": 2})


def _pool(path, round_id: str) -> dict[str, list[str]]:
    with Store(path, read_only=True) as s:
        rows = s.con.execute("SELECT query_id, doc_id FROM pool_entries WHERE round_id = ? "
                             "ORDER BY query_id, position", [round_id]).fetchall()
    pool: dict[str, list[str]] = {}
    for query_id, doc_id in rows:
        pool.setdefault(query_id, []).append(doc_id)
    return pool


def _stored_text(path, doc_id: str) -> tuple[str, str]:
    with Store(path, read_only=True) as s:
        return s.con.execute("SELECT title, text FROM documents WHERE doc_id = ?", [doc_id]).fetchone()


def _history(path) -> list[dict]:
    with Store(path, read_only=True) as s:
        return history(s).to_pylist()


# -- without a server ------------------------------------------------------------------------


def test_plain_text_is_recovered_exactly_from_highlighted_html():
    for text in ("Solar <script>alert(1)</script> <img src=x onerror=alert(1)> solar & co",
                 "a <mark>solar</mark> &amp; &lt; 'q' \"Q\"\n\n  panels"):
        html = highlight(text, query_terms("solar panels"))
        assert "<mark>" in str(html) and plain(html) == text


def test_openapi_document_is_structurally_sound():
    """The parts of OpenAPI 3.1 a client generator relies on (no validator is installed)."""
    assert DOCUMENT["openapi"].startswith("3.1.")
    assert DOCUMENT["info"]["title"] and DOCUMENT["info"]["version"]
    schemes = DOCUMENT["components"]["securitySchemes"]
    assert all(next(iter(req)) in schemes for req in DOCUMENT["security"])
    refs: list[str] = []
    for path, item in DOCUMENT["paths"].items():
        assert path.startswith("/") and set(item) <= METHODS, path
        template_params = set(re.findall(r"{(\w+)}", path))
        for method, op in item.items():
            where = f"{method.upper()} {path}"
            assert op["operationId"] and op["summary"], where
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == template_params, where
            assert all(p["required"] is True for p in op.get("parameters", [])), where
            assert op["responses"], where
            for status, answer in op["responses"].items():
                assert re.fullmatch(r"[1-5]\d\d", status) and answer["description"], where
            if op.get("security", DOCUMENT["security"]):
                assert "401" in op["responses"], f"{where} needs a token but documents no 401"
            refs += re.findall(r"'\$ref': '([^']+)'", str(op))
    refs += re.findall(r"'\$ref': '([^']+)'", str(DOCUMENT["components"]["schemas"]))
    schemas = DOCUMENT["components"]["schemas"]
    assert refs and all(r.startswith("#/components/schemas/") for r in refs)
    assert {r.rsplit("/", 1)[1] for r in refs} <= set(schemas)
    for name, schema in schemas.items():
        if schema.get("type") == "object":
            assert set(schema["required"]) <= set(schema["properties"]), name
    operation_ids = [op["operationId"] for item in DOCUMENT["paths"].values() for op in item.values()]
    assert len(operation_ids) == len(set(operation_ids))


def test_openapi_document_names_exactly_the_api_routes():
    documented = {(m.upper(), p) for p, item in DOCUMENT["paths"].items() for m in item}
    served = {(m, re.sub(r":\w+}", "}", r.path)) for r in api_views.ROUTES
              for m in r.methods if m != "HEAD"}
    assert documented == served


def test_the_serving_page_lists_every_api_route():
    page = (Path(__file__).resolve().parents[2] / "docs" / "serving.md").read_text(encoding="utf-8")
    listed = set(re.findall(rf"^\| `(GET|POST) {API_ROOT}(/[^`]*)`", page, re.M))
    documented = {(m.upper(), p) for p, item in DOCUMENT["paths"].items() for m in item}
    assert listed == documented - {("GET", "/openapi.json")}
    assert f"GET {API_ROOT}/openapi.json" in page


# -- against `pooling serve` -----------------------------------------------------------------


@slow
def test_an_assessor_judges_a_topic_to_the_end(campaign, server):
    ann = _api(server, campaign.tokens["ann"])
    pool = _pool(campaign.path, "r1")["1"]
    title, text = _stored_text(campaign.path, "d1")  # markup and script tags in both
    sent: list[tuple[str, int]] = []
    while True:
        page = ann.get("/rounds/r1/topics/1/next")
        assert page.status_code == 200, page.text
        doc = page.json()
        if doc["done"]:
            break
        assert doc["position"] == len(sent) + 1 and doc["total"] == len(pool)
        assert doc["topic"]["title"] == "solar panels" and doc["topic"]["narrative"]
        assert [g["grade"] for g in doc["grades"]] == [0, 1, 2]
        if doc["doc_id"] == "d1":  # the text as stored, and escaped where it is HTML
            assert (doc["title"], doc["text"]) == (title, text) and "<script>" in text
            assert "<script>" not in doc["text_html"] and "&lt;script&gt;" in doc["text_html"]
        grade = len(sent) % 3
        answer = _judge(ann, "r1", "1", doc["doc_id"], grade, doc["submission_id"])
        assert answer.json() == {"stored": True, "duplicate": False, "doc_id": doc["doc_id"]}
        sent.append((doc["doc_id"], grade))
    assert doc == {"done": True, "round_id": "r1", "topic": doc["topic"], "judged": len(pool),
                   "total": len(pool), "first_doc": pool[0]}
    assert [d for d, _ in sent] == pool

    rounds = ann.get("/rounds").json()["rounds"]
    assert [(r["round_id"], [(t["query_id"], t["assigned"], t["judged"], t["done"])
                             for t in r["topics"]]) for r in rounds] == [("r1", [("1", 6, 6, True)])]
    assert ann.get("/rounds/r1/progress").json() == rounds[0]
    server.stop()
    rows = _history(campaign.path)
    assert [(r["assessor_id"], r["query_id"], r["doc_id"], r["grade"], r["kind"], r["seconds"])
            for r in rows] == [("ann", "1", d, g, "judge", 2.0) for d, g in sent]


@slow
def test_a_retried_judgment_is_stored_once_and_undo_retracts(campaign, server):
    ann = _api(server, campaign.tokens["ann"])
    first = _judge(ann, "r1", "1", "d2", 2, "retry-0123456789abcdef")
    again = _judge(ann, "r1", "1", "d2", 2, "retry-0123456789abcdef")
    assert first.json()["stored"] is True
    assert again.status_code == 200 and again.json() == {"stored": False, "duplicate": True,
                                                         "doc_id": "d2"}
    undo = {"submission_id": "undo-0123456789abcdef"}
    one = ann.post("/rounds/r1/topics/1/undo", json=undo)
    two = ann.post("/rounds/r1/topics/1/undo", json=undo)
    assert one.json() == {"undone": "d2", "duplicate": False}
    assert two.json() == {"undone": "d2", "duplicate": True}
    nothing = ann.post("/rounds/r1/topics/1/undo", json={"submission_id": "x" * 20})
    assert nothing.status_code == 409 and "no judgment" in nothing.json()["error"]
    assert ann.get("/rounds/r1/topics/1/next").json()["doc_id"] == "d1"  # the queue is back

    bad = {
        "grade": _judge(ann, "r1", "1", "d1", 7, "y" * 20),
        "true": _judge(ann, "r1", "1", "d1", True, "y" * 20),
        "sid": _judge(ann, "r1", "1", "d1", 1, "short"),
        "seconds": ann.post("/rounds/r1/topics/1/judgments", json={
            "doc_id": "d1", "grade": 1, "submission_id": "y" * 20, "seconds": -1}),
        "unknown": ann.post("/rounds/r1/topics/1/judgments", json={
            "doc_id": "d1", "grad": 1, "grade": 1, "submission_id": "y" * 20}),
        "missing": ann.post("/rounds/r1/topics/1/judgments", json={"doc_id": "d1", "grade": 1}),
        "doc_id": ann.post("/rounds/r1/topics/1/judgments", json={
            "doc_id": 1, "grade": 1, "submission_id": "y" * 20}),
        "not json": ann.post("/rounds/r1/topics/1/judgments", content=b"{grade: 1",
                             headers={"content-type": "application/json"}),
        "a list": ann.post("/rounds/r1/topics/1/judgments", json=[1]),
        "undo sid": ann.post("/rounds/r1/topics/1/undo", json={"submission_id": 5}),
        "key twice": ann.post("/rounds/r1/topics/1/judgments", content=(
            b'{"doc_id": "d1", "grade": 0, "grade": 2, "submission_id": "' + b"y" * 20 + b'"}'),
            headers={"content-type": "application/json"}),
        "unjudgeable 1": ann.post("/rounds/r1/topics/1/judgments", json={
            "doc_id": "d1", "unjudgeable": 1, "submission_id": "y" * 20}),
    }
    assert {k: r.status_code for k, r in bad.items()} == {k: 422 for k in bad}
    errors = {k: r.json()["error"] for k, r in bad.items()}
    assert "grade must be one of [0, 1, 2]" in errors["grade"] == errors["true"]
    assert "submission_id" in errors["sid"] and "submission_id" in errors["undo sid"]
    assert "seconds" in errors["seconds"] and "grad;" in errors["unknown"]
    assert "missing field(s) submission_id" in errors["missing"]
    assert "the key 'grade' is given twice" in errors["key twice"]
    assert "unjudgeable must be true or false, found '1'" in errors["unjudgeable 1"]
    server.stop()
    assert [(r["kind"], r["doc_id"], r["grade"], r["submission_id"])
            for r in _history(campaign.path)] == [
        ("judge", "d2", 2, "retry-0123456789abcdef"), ("retract", "d2", None, "undo-0123456789abcdef")]


@slow
def test_other_assessors_items_answer_exactly_like_missing_ones(campaign, server):
    """ann judges topic 1; topic 2 (e1..e4) is bob's. Every route taking an id answers bob's
    items and non-existent ones with the same status and body."""
    ann = _api(server, campaign.tokens["ann"])
    undo = lambda r, q: ann.post(f"/rounds/{r}/topics/{q}/undo",  # noqa: E731
                                 json={"submission_id": "u" * 32})
    cases = {
        "next": [ann.get("/rounds/r1/topics/2/next"), ann.get("/rounds/r1/topics/99/next"),
                 ann.get("/rounds/nope/topics/1/next")],
        "document": [ann.get("/rounds/r1/topics/2/docs/e1"), ann.get("/rounds/r1/topics/2/docs/zz"),
                     ann.get("/rounds/r1/topics/1/docs/e1"), ann.get("/rounds/r1/topics/99/docs/e1"),
                     ann.get("/rounds/nope/topics/2/docs/e1")],
        "judge": [_judge(ann, "r1", "2", "e1"), _judge(ann, "r1", "2", "zz"),
                  _judge(ann, "r1", "1", "e1"), _judge(ann, "nope", "2", "e1"),
                  _judge(ann, "r1", "2", "e1", grade=99)],
        "undo": [undo("r1", "2"), undo("r1", "99"), undo("nope", "1")],
        "progress": [ann.get("/rounds/nope/progress")],
        "no such route": [ann.get("/no/such/thing"), ann.get("/rounds/r1")],
    }
    answers = {(r.status_code, r.content) for responses in cases.values() for r in responses}
    assert len(answers) == 1, answers
    status, body = answers.pop()
    assert status == 404 and b"e1" not in body and b"nope" not in body
    assert httpx.Response(status, content=body).json() == {"error": "not found"}
    # ...while ann's own items are there, and bob's topic is not in her list
    assert ann.get("/rounds/r1/topics/1/docs/d1").status_code == 200
    assert [t["query_id"] for t in ann.get("/rounds").json()["rounds"][0]["topics"]] == ["1"]
    bob = _api(server, campaign.tokens["bob"])
    assert bob.get("/rounds/r1/topics/2/docs/e1").json()["doc_id"] == "e1"
    server.stop()
    assert _history(campaign.path) == []


@slow
def test_a_missing_or_unknown_token_is_refused_with_401(campaign, server):
    anonymous = _api(server, None)
    login = httpx.get(server.url + "login", params={"token": campaign.tokens["ann"]})
    cookie_only = httpx.Client(base_url=server.url.rstrip("/") + API_ROOT,
                               cookies={SESSION_COOKIE: login.cookies[SESSION_COOKIE]})
    answers = [
        anonymous.get("/rounds"),
        anonymous.get("/rounds/r1/topics/1/next"),
        _judge(anonymous, "r1", "1", "d1"),
        anonymous.get("/rounds", headers={"Authorization": "Bearer"}),
        anonymous.get("/rounds", headers={"Authorization": f"Basic {campaign.tokens['ann']}"}),
        _api(server, "not-a-token").get("/rounds"),
        _api(server, "not-a-token").post("/rounds/r1/topics/1/undo", json={"submission_id": "u" * 20}),
        cookie_only.get("/rounds"),  # a logged-in browser's cookie is no credential here
    ]
    assert [r.status_code for r in answers] == [401] * len(answers)
    assert all(r.headers["www-authenticate"].startswith("Bearer") for r in answers)
    assert "Authorization: Bearer" in answers[0].json()["error"]
    assert "not valid" in answers[5].json()["error"]
    assert _api(server, campaign.tokens["ann"]).get("/rounds").status_code == 200
    server.stop()
    assert _history(campaign.path) == []


@slow
def test_openapi_document_is_served_and_each_route_in_it_answers(campaign, server):
    served = httpx.get(server.url.rstrip("/") + API_ROOT + "/openapi.json")  # no token needed
    assert served.status_code == 200 and served.json() == DOCUMENT
    for header in ("content-security-policy", "x-content-type-options", "x-frame-options"):
        assert header in served.headers
    assert served.headers["cache-control"] == "no-store"
    ann = _api(server, campaign.tokens["ann"])
    ids = {"round_id": "r1", "query_id": "1", "doc_id": "d1"}
    bodies = {"judge": {"doc_id": "d1", "grade": 1, "submission_id": "j" * 32},
              "undo": {"submission_id": "u" * 32}}
    for path, item in DOCUMENT["paths"].items():
        for method, op in item.items():
            answer = ann.request(method, path.format(**ids), json=bodies.get(op["operationId"]))
            assert answer.status_code == 200, (method, path, answer.text)
            assert answer.headers["content-type"] == "application/json"
            assert str(answer.status_code) in op["responses"]


@slow
def test_an_organiser_token_sees_and_judges_every_pooled_document(campaign, server):
    pool = _pool(campaign.path, "r1")
    org = _api(server, campaign.tokens["org"])
    for query_id, docs in pool.items():
        seen = [org.get(f"/rounds/r1/topics/{query_id}/docs/{d}").json() for d in docs]
        assert [(s["doc_id"], s["position"], s["total"]) for s in seen] == [
            (d, i + 1, len(docs)) for i, d in enumerate(docs)]
    assert org.get("/rounds/r1/topics/1/docs/e1").status_code == 404  # not in topic 1's pool
    # as in the pages, an organiser opens documents by id: "next" is for assigned work
    assert org.get("/rounds/r1/topics/2/next").status_code == 404
    ann = _api(server, campaign.tokens["ann"])
    assert _judge(ann, "r1", "1", "d1", 2, "a" * 32).json()["stored"]
    assert _judge(org, "r1", "2", "e3", 1, "o" * 32).json()["stored"]  # one of bob's

    rounds = org.get("/rounds").json()["rounds"]
    assert [(t["query_id"], t["assigned"], t["judged"]) for t in rounds[0]["topics"]] == [
        (q, len(docs), 1) for q, docs in sorted(pool.items())]
    assert org.get("/rounds/r1/progress").json() == rounds[0]
    server.stop()
    assert [(r["assessor_id"], r["doc_id"]) for r in _history(campaign.path)] == [
        ("ann", "d1"), ("org", "e3")]


def test_a_subtopic_round_through_the_api_shows_subtopics_and_takes_their_grades(tmp_path):
    import json

    from conftest import build_campaign
    from inprocess import app_on, client

    from pooling.judging.assessors import assign
    from pooling.judging.rounds import create_round
    from pooling.store import Store

    campaign = build_campaign(tmp_path)
    with Store(campaign.path) as s:
        s.con.execute("UPDATE topics SET extra = ? WHERE query_id = '1'", [json.dumps(
            {"subtopics": [{"number": "1", "text": "prices"}, {"number": "2", "text": "savings"}]})])
        create_round(s, "div", "depth", strategy_params={"depth": 4}, topics=["1"],
                     subtopics=True)
        assign(s, "div", ["ann"])
    with app_on(campaign.path) as app:
        api = client(app)
        api.headers["authorization"] = f"Bearer {campaign.tokens['ann']}"
        doc = api.get("/api/v1/rounds/div/topics/1/next").json()
        assert doc["subtopics"] == [{"subtopic": "1", "text": "prices", "current_grade": None},
                                    {"subtopic": "2", "text": "savings", "current_grade": None}]
        body = {"doc_id": doc["doc_id"], "grades": {"1": 0, "2": 2},
                "submission_id": doc["submission_id"]}
        stored = api.post("/api/v1/rounds/div/topics/1/judgments", json=body)
        assert stored.json() == {"stored": True, "duplicate": False, "doc_id": doc["doc_id"]}
        seen = api.get(f"/api/v1/rounds/div/topics/1/docs/{doc['doc_id']}").json()
        assert [s["current_grade"] for s in seen["subtopics"]] == [0, 2]
        assert seen["current_grade"] == 2  # relevant to any subtopic
        assert "subtopics" not in api.get("/api/v1/rounds/r1/topics/1/next").json()
        neither = api.post("/api/v1/rounds/div/topics/1/judgments",
                           json={"doc_id": doc["doc_id"], "submission_id": "z" * 20})
        assert neither.status_code == 422 and "missing field(s) grade" in neither.json()["error"]
        undone = api.post("/api/v1/rounds/div/topics/1/undo", json={"submission_id": "u" * 20})
        assert undone.json() == {"undone": doc["doc_id"], "duplicate": False}
    with Store(campaign.path, read_only=True) as s:
        rows = s.con.execute("SELECT part, kind, grade FROM judgments WHERE round_id = 'div' "
                             "ORDER BY seq").fetchall()
    assert rows == [("1", "judge", 0), ("2", "judge", 2), ("1", "retract", None),
                    ("2", "retract", None)]


@slow
def test_every_response_says_the_servers_own_time_in_server_timing(campaign, server):
    from pooling.web.timing import server_ms

    answers = [
        httpx.get(server.url.rstrip("/") + API_ROOT + "/openapi.json"),
        _api(server, campaign.tokens["ann"]).get("/rounds"),
        _api(server, "not-a-token").get("/rounds"),  # refused answers too
        httpx.get(server.url.rstrip("/") + "/login"),
    ]
    for answer in answers:
        ms = server_ms(answer.headers["server-timing"])
        assert ms is not None and ms >= 0, answer.headers["server-timing"]
    assert server_ms("cache;desc=hit, app;dur=12.5") == 12.5
    assert server_ms("db;dur=3") is None and server_ms("app;dur=x") is None
