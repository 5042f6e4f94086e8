"""Text the store cannot hold (a lone surrogate, sent as the JSON escape "\\udfff") is refused
for its sender alone: a 422 from the judging page and the JSON API alike, before it reaches a
commit shared with everyone else's judgments; a shared commit that fails anyway is retried
submission by submission; served-store SQL holding it is a 4xx the client names."""

from __future__ import annotations

import json
import re
import threading
from concurrent.futures import Future

import httpx
import pytest
from conftest import build_campaign
from inprocess import app_on, client, csrf_of, logged_in

from pooling.errors import PoolingError, StoreError
from pooling.judging.judgments import Judgment, append_judgments, record
from pooling.store import Store
from pooling.store.remote import token_file
from pooling.web.gate import StoreGate
from pooling.web.judgment_writer import WriteFailed
from pooling.web.live import LiveCampaign

LONE = "\udfff"  # what json.loads makes of the escape "\udfff": half of a UTF-16 pair


def _raw_json(body: dict) -> bytes:
    """The body as JSON with the surrogate as its escape (json.dumps' ASCII default)."""
    return json.dumps(body).encode()


def _page_post(c, url: str, csrf: str, body: dict):
    return c.post(url, content=_raw_json(body),
                  headers={"content-type": "application/json", "x-csrf-token": csrf})


def _api_post(c, url: str, token: str, body: dict):
    return c.post("/api/v1" + url, content=_raw_json(body),
                  headers={"content-type": "application/json", "authorization": f"Bearer {token}"})


def _csrf(c: httpx.Client) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', c.get("/").text).group(1)


def test_a_lone_surrogate_note_is_a_422_for_its_sender_alone_while_others_judge(campaign, server):
    ann = httpx.Client(base_url=server.url, follow_redirects=False, timeout=30)
    assert ann.get("/login", params={"token": campaign.tokens["ann"]}).status_code == 303
    bob = httpx.Client(base_url=server.url, follow_redirects=False, timeout=30)
    assert bob.get("/login", params={"token": campaign.tokens["bob"]}).status_code == 303
    ann_csrf, bob_csrf = _csrf(ann), _csrf(bob)
    bad: list[httpx.Response] = []
    good: dict[str, httpx.Response] = {}
    rounds = 30

    def send_bad() -> None:  # ann, through the page and the API in turn
        api = httpx.Client(base_url=server.url, timeout=30)
        for i in range(rounds):
            body = {"doc_id": "d1", "grade": 1, "submission_id": f"bad-note-{i:010d}",
                    "note": f"looks fine {LONE} but is not"}
            bad.append(_page_post(ann, "/rounds/r1/topics/1/judgments", ann_csrf, body) if i % 2
                       else _api_post(api, "/rounds/r1/topics/1/judgments", campaign.tokens["ann"], body))

    def send_good(via: str) -> None:  # bob, judging and correcting topic 2 meanwhile
        api = httpx.Client(base_url=server.url, timeout=30)
        for i in range(rounds):
            sid = f"good-{via}-{i:010d}"
            body = {"doc_id": ("e1", "e2", "e3", "e4")[i % 4], "grade": i % 3, "submission_id": sid,
                    "note": "a fine note ✓"}
            good[sid] = (_page_post(bob, "/rounds/r1/topics/2/judgments", bob_csrf, body) if via == "page"
                         else _api_post(api, "/rounds/r1/topics/2/judgments", campaign.tokens["bob"], body))

    threads = [threading.Thread(target=send_bad), threading.Thread(target=send_good, args=("page",)),
               threading.Thread(target=send_good, args=("api",))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in bad] == [422] * rounds
    assert all("note holds a lone surrogate (U+DFFF at character 12)" in r.json()["error"] for r in bad)
    assert {sid: r.status_code for sid, r in good.items()} == dict.fromkeys(good, 200)
    server.stop()
    with Store(campaign.path, read_only=True) as s:
        stored = {r[0] for r in s.con.execute("SELECT submission_id FROM judgments").fetchall()}
    assert stored == set(good)


def test_the_page_and_the_api_answer_unstorable_text_in_any_field_with_the_same_422(tmp_path):
    campaign = build_campaign(tmp_path)
    with app_on(campaign.path) as app:
        ann = logged_in(app, campaign.tokens["ann"])
        api = client(app)
        answers = {}
        for field, value in (("note", LONE), ("doc_id", "d1" + LONE), ("note", "\ud800 high half")):
            body = {"doc_id": "d1", "grade": 1, "submission_id": f"field-{len(answers):012d}",
                    field: value}
            answers[f"page {field} {len(answers)}"] = _page_post(
                ann, "/rounds/r1/topics/1/judgments", csrf_of(app, ann), body)
            answers[f"api {field} {len(answers)}"] = _api_post(
                api, "/rounds/r1/topics/1/judgments", campaign.tokens["ann"], body)
        assert {k: a.status_code for k, a in answers.items()} == dict.fromkeys(answers, 422)
        assert all("lone surrogate" in a.json()["error"] for a in answers.values())
        # the same fault, any other way: a grade off the scale is a 422 on both too
        off = {"doc_id": "d1", "grade": 9, "submission_id": "off-scale-00000001"}
        assert _page_post(ann, "/rounds/r1/topics/1/judgments", csrf_of(app, ann), off).status_code == 422
        assert _api_post(api, "/rounds/r1/topics/1/judgments", campaign.tokens["ann"], off).status_code == 422
        # and a note that is text, NUL and all, is stored as sent
        fine = {"doc_id": "d1", "grade": 1, "submission_id": "fine-note-00000001", "note": "a\x00b 😀"}
        assert _page_post(ann, "/rounds/r1/topics/1/judgments", csrf_of(app, ann), fine).status_code == 200
    with Store(campaign.path, read_only=True) as s:
        assert s.con.execute("SELECT submission_id, note FROM judgments").fetchall() == [
            ("fine-note-00000001", "a\x00b 😀")]


def test_a_failed_group_commit_is_retried_alone_so_only_the_refused_judgment_fails(tmp_path):
    campaign = build_campaign(tmp_path)
    with Store(campaign.path) as store:
        live = LiveCampaign(StoreGate(store))
        try:
            # Past every check (as a check that misses something would let it): the store
            # refuses it when the group's statement binds it.
            refused = Judgment("r1", "ann", "1", "d2", 1, note=LONE, submission_id="refused-00000001")
            group = [(Judgment("r1", "ann", "1", "d1", 2, submission_id="first-000000001"), Future()),
                     (refused, Future()),
                     (Judgment("r1", "bob", "2", "e1", 0, submission_id="second-00000001"), Future()),
                     (Judgment("r1", "bob", "2", "e1", 0, submission_id="second-00000001"), Future())]
            live.writer._write(group)
            outcomes = [f.exception() or f.result() for _, f in group]
            assert outcomes[0].seq is not None and outcomes[2].seq is not None
            assert outcomes[3].seq is None  # the double click of the second: stored once
            assert isinstance(outcomes[1], WriteFailed) and "nothing was stored" in str(outcomes[1])
            assert live.judging_page("ann", "assessor", "r1", "1", "d1").current_grade == 2
        finally:
            live.close()
        rows = store.con.execute("SELECT submission_id FROM judgments ORDER BY seq").fetchall()
    assert rows == [("first-000000001",), ("second-00000001",)]


def test_every_writer_of_judgments_refuses_unstorable_text_before_storing_anything(campaign, server):
    judgments = [Judgment("r1", "ann", "1", "d1", 1, submission_id="ok-000000000001"),
                 Judgment("r1", "ann", "1", "d2", 1, rationale="why " + LONE,
                          submission_id="bad-00000000001")]
    with Store(campaign.path) as served:  # through the server: the client refuses before sending
        assert served.remote
        with pytest.raises(StoreError, match=r"judgment 2: rationale holds a lone surrogate"):
            append_judgments(served, judgments)
    server.stop()
    with Store(campaign.path) as local:
        for write in (append_judgments, record):
            with pytest.raises(StoreError, match=r"no judgment was stored:\njudgment 2: rationale "
                                                 r"holds a lone surrogate \(U\+DFFF at character 5\)"):
                write(local, judgments)
        assert local.one("n", "SELECT count(*) FROM judgments") == (0,)


def test_served_store_sql_holding_a_lone_surrogate_is_a_4xx_the_client_names(campaign, server):
    with Store(campaign.path) as served:
        assert served.remote
        for query, params in ((f"SELECT '{LONE}'", None), ("SELECT ?", [LONE]),
                              ("SELECT $x", {"x": ["fine", "not " + LONE]})):
            with pytest.raises(PoolingError, match="lone surrogate") as caught:
                served.con.execute(query, params)
            assert "internal server error" not in str(caught.value).lower()
        assert served.one("after", "SELECT 42") == (42,)  # the session goes on
        # on the wire: a 400 saying what is wrong
        token = token_file(campaign.path).read_text().strip()
        raw = httpx.Client(base_url=server.url, timeout=30,
                           headers={"authorization": f"Bearer {token}"})
        session = raw.post("/_store/sessions").json()["session"]
        answer = raw.post(f"/_store/sessions/{session}/execute",
                          content=_raw_json({"sql": f"SELECT '{LONE}'"}),
                          headers={"content-type": "application/json"})
        assert answer.status_code == 400
        assert "the SQL holds a lone surrogate (U+DFFF at character 9)" in answer.json()["error"]


def test_organiser_forms_refuse_unstorable_text_naming_the_field(tmp_path):
    campaign = build_campaign(tmp_path)
    with app_on(campaign.path) as app:
        org = logged_in(app, campaign.tokens["org"])
        answers = {
            url: _page_post(org, url, csrf_of(app, org), body) for url, body in (
                ("/organiser/people", {"name": "Cy " + LONE}),
                ("/organiser/rounds", {"name": "r" + LONE}),
                ("/organiser/assign", {"round": "r1", "assessors": ["ann", LONE]}),
            )}
        assert {u: a.status_code for u, a in answers.items()} == dict.fromkeys(answers, 400)
        assert "name holds a lone surrogate" in answers["/organiser/people"].json()["error"]
        assert "assessors[2] holds a lone surrogate" in answers["/organiser/assign"].json()["error"]
