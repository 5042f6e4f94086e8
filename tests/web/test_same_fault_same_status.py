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
