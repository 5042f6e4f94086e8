"""The judging page and the JSON API refuse the same fault with the same status and words, in
a static round (answered from the server's memory) and in an adaptive one (from the store):
both ask the one judging core (`pooling.judging`)."""

from __future__ import annotations

import pytest
from conftest import build_campaign
from inprocess import app_on, client, csrf_of, logged_in

from pooling.judging.assessors import assign
from pooling.judging.rounds import create_round
from pooling.store import Store

SID = "same-fault-0000000001"

# fault -> (route, body): every one refused by the judging core
FAULTS = {
    "grade off the scale": ("judgments", {"doc_id": "d1", "grade": 9, "submission_id": SID}),
    "grade true": ("judgments", {"doc_id": "d1", "grade": True, "submission_id": SID}),
    "grade text": ("judgments", {"doc_id": "d1", "grade": "1", "submission_id": SID}),
    "seconds": ("judgments", {"doc_id": "d1", "grade": 1, "submission_id": SID, "seconds": -1}),
    "note too long": ("judgments", {"doc_id": "d1", "grade": 1, "submission_id": SID,
                                    "note": "x" * 2001}),
    "short id": ("judgments", {"doc_id": "d1", "grade": 1, "submission_id": "short"}),
    "doc_id not text": ("judgments", {"doc_id": 1, "grade": 1, "submission_id": SID}),
    "undo id": ("undo", {"submission_id": 5}),
    "nothing to undo": ("undo", {"submission_id": SID}),
}


@pytest.fixture
def app_and_clients(tmp_path):
    campaign = build_campaign(tmp_path)
    with Store(campaign.path) as s:
        create_round(s, "live", "mtf", topics=["1"])
        assign(s, "live", ["ann"])
    with app_on(campaign.path) as app:
        yield app, logged_in(app, campaign.tokens["ann"]), client(app), campaign.tokens["ann"]


@pytest.mark.parametrize("round_id", ["r1", "live"])
def test_the_page_and_the_api_refuse_each_fault_with_the_same_status_and_words(app_and_clients,
                                                                                 round_id):
    app, page, api, token = app_and_clients
    csrf = csrf_of(app, page)
    bearer = {"authorization": f"Bearer {token}"}
    # an adaptive round queues a document as it serves it
    doc = api.get(f"/api/v1/rounds/{round_id}/topics/1/next", headers=bearer).json()["doc_id"]
    for fault, (route, body) in FAULTS.items():
        body = dict(body, doc_id=doc) if body.get("doc_id") == "d1" else body
        url = f"/rounds/{round_id}/topics/1/{route}"
        on_page = page.post(url, json=body, headers={"x-csrf-token": csrf})
        on_api = api.post("/api/v1" + url, json=body, headers=bearer)
        expected = 409 if fault == "nothing to undo" else 422
        assert (fault, on_page.status_code, on_api.status_code) == (fault, expected, expected)
        assert on_page.json()["error"] == on_api.json()["error"], fault


def test_a_changed_resend_and_another_persons_topic_answer_alike_too(app_and_clients):
    app, page, api, token = app_and_clients
    csrf = csrf_of(app, page)
    bearer = {"authorization": f"Bearer {token}"}
    first = {"doc_id": "d1", "grade": 1, "submission_id": SID}
    assert page.post("/rounds/r1/topics/1/judgments", json=first,
                     headers={"x-csrf-token": csrf}).status_code == 200
    changed = dict(first, grade=2)
    on_page = page.post("/rounds/r1/topics/1/judgments", json=changed, headers={"x-csrf-token": csrf})
    on_api = api.post("/api/v1/rounds/r1/topics/1/judgments", json=changed, headers=bearer)
    assert on_page.status_code == on_api.status_code == 409
    assert on_page.json() == on_api.json()
    bobs = {"doc_id": "e1", "grade": 1, "submission_id": "bobs-topic-000000001"}
    assert page.post("/rounds/r1/topics/2/judgments", json=bobs,
                     headers={"x-csrf-token": csrf}).status_code == 404
    assert api.post("/api/v1/rounds/r1/topics/2/judgments", json=bobs, headers=bearer).status_code == 404


# fault -> (round, route, body), for a subtopic round (topic 1 with subtopics 1, 2 and 3)
SUBTOPIC_FAULTS = {
    "one grade to a subtopic round": ("div", "judgments",
                                      {"doc_id": "d1", "grade": 1, "submission_id": SID}),
    "a subtopic left out": ("div", "judgments",
                            {"doc_id": "d1", "grades": {"1": 1, "2": 0}, "submission_id": SID}),
    "an unknown subtopic": ("div", "judgments", {"doc_id": "d1", "submission_id": SID,
                                                 "grades": {"1": 1, "2": 0, "3": 0, "9": 1}}),
    "a grade off the scale": ("div", "judgments", {"doc_id": "d1", "submission_id": SID,
                                                   "grades": {"1": 1, "2": 0, "3": 9}}),
    "a grade true": ("div", "judgments", {"doc_id": "d1", "submission_id": SID,
                                          "grades": {"1": 1, "2": True, "3": 0}}),
    "grades not an object": ("div", "judgments",
                             {"doc_id": "d1", "grades": [1, 0, 0], "submission_id": SID}),
    "grades to a plain round": ("r1", "judgments", {"doc_id": "d1", "submission_id": SID,
                                                    "grades": {"1": 1, "2": 0, "3": 0}}),
    "nothing to undo": ("div", "undo", {"submission_id": SID}),
}


@pytest.fixture
def subtopic_app(tmp_path):
    import json
    campaign = build_campaign(tmp_path)
    with Store(campaign.path) as s:
        s.con.execute("UPDATE topics SET extra = ? WHERE query_id = '1'", [json.dumps(
            {"subtopics": [{"number": n, "text": f"subtopic {n}"} for n in ("1", "2", "3")]})])
        create_round(s, "div", "depth", strategy_params={"depth": 4}, topics=["1"],
                     subtopics=True)
        assign(s, "div", ["ann"])
    with app_on(campaign.path) as app:
        yield app, logged_in(app, campaign.tokens["ann"]), client(app), campaign.tokens["ann"]


def test_subtopic_grades_are_refused_alike_on_the_page_and_the_api(subtopic_app):
    app, page, api, token = subtopic_app
    csrf = csrf_of(app, page)
    bearer = {"authorization": f"Bearer {token}"}
    for fault, (round_id, route, body) in SUBTOPIC_FAULTS.items():
        url = f"/rounds/{round_id}/topics/1/{route}"
        on_page = page.post(url, json=body, headers={"x-csrf-token": csrf})
        on_api = api.post("/api/v1" + url, json=body, headers=bearer)
        expected = 409 if fault == "nothing to undo" else 422
        assert (fault, on_page.status_code, on_api.status_code) == (fault, expected, expected)
        assert on_page.json()["error"] == on_api.json()["error"], fault
    first = {"doc_id": "d1", "grades": {"1": 2, "2": 0, "3": 1}, "submission_id": SID}
    assert page.post("/rounds/div/topics/1/judgments", json=first,
                     headers={"x-csrf-token": csrf}).status_code == 200
    again = api.post("/api/v1/rounds/div/topics/1/judgments", json=first, headers=bearer)
    assert again.json() == {"stored": False, "duplicate": True, "doc_id": "d1"}
    changed = dict(first, grades={"1": 2, "2": 1, "3": 1})
    on_page = page.post("/rounds/div/topics/1/judgments", json=changed,
                        headers={"x-csrf-token": csrf})
    on_api = api.post("/api/v1/rounds/div/topics/1/judgments", json=changed, headers=bearer)
    assert on_page.status_code == on_api.status_code == 409
    assert on_page.json() == on_api.json()
