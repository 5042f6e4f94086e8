"""An assignment round served: the JSON API hands a person an answer with its topic's
nuggets and takes a grade per nugget; the page shows the answer sentence by sentence with
its citations beside the nuggets, graded by keyboard in a real Chromium."""

from __future__ import annotations

import json
import shutil

import httpx
import pytest

from pooling.judging.assessors import add_assessor, assign
from pooling.nuggets.rounds import create_assignment_round
from pooling.store import Store
from pooling.store import nugget_banks as nb
from pooling.store.answers import import_answers

CHROMIUM = "/usr/bin/chromium"
API = "api/v1"


def nugget_campaign(tmp_path):
    """Two answer runs over topic 1 (with citations), three nuggets frozen, ann assigned."""
    lines = [json.dumps({"run_id": run, "topic_id": "1", "topic": "what do solar panels cost?",
                         "references": ["seg-a", "seg-b"], "response_length": 12,
                         "answer": [{"text": f"{run} says panels cost $3 a watt.", "citations": [1]},
                                    {"text": "Prices <b>fell</b> since 2010.", "citations": [0, 1]}]})
             for run in ("alpha", "beta")]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(lines) + "\n")
    path = tmp_path / "nuggets.duckdb"
    with Store.create(path) as s:
        import_answers(s, [answers], add_topics=True)
        for text, imp in (("Panels cost about $3 per watt", "vital"),
                          ("Prices fell since 2010", "okay"), ("Installation takes a day", "okay")):
            nb.add_nugget(s, "people", "1", text, imp, made_by="org")
        nb.freeze(s, "people")
        create_assignment_round(s, "assign", "people-v1")
        token = add_assessor(s, "ann").token
        assign(s, "assign", ["ann"])
    return path, token


def test_a_person_assigns_nuggets_through_the_json_api(tmp_path, launch):
    path, token = nugget_campaign(tmp_path)
    server = launch(path)
    with httpx.Client(base_url=server.url + API, headers={"Authorization": f"Bearer {token}"},
                      timeout=10) as api:
        shown = api.get("/rounds/assign/topics/1/next").json()
        assert (shown["unit"], shown["part"], shown["doc_id"]) == ("answer", "nugget", "alpha")
        assert [p["text"] for p in shown["parts"]] == [
            "Panels cost about $3 per watt", "Prices fell since 2010", "Installation takes a day"]
        assert shown["text"].splitlines() == ["1. alpha says panels cost $3 a watt. [2]",
                                              "2. Prices <b>fell</b> since 2010. [1] [2]"]
        assert "&lt;b&gt;" in shown["text_html"]  # the answer's markup is shown, never run
        body = {"doc_id": "alpha", "grades": {"1": 2, "2": 1, "3": 0},
                "submission_id": shown["submission_id"]}
        assert api.post("/rounds/assign/topics/1/judgments", json=body).json()["stored"] is True
        again = api.post("/rounds/assign/topics/1/judgments", json=body).json()
        assert again["duplicate"] is True
        partial = api.post("/rounds/assign/topics/1/judgments", json={
            "doc_id": "beta", "grades": {"1": 2}, "submission_id": "p" * 20})
        assert partial.status_code == 422 and "a grade for every nugget" in partial.json()["error"]
        off_scale = api.post("/rounds/assign/topics/1/judgments", json={
            "doc_id": "beta", "grades": {"1": 3, "2": 0, "3": 0}, "submission_id": "q" * 20})
        assert off_scale.status_code == 422
        nxt = api.get("/rounds/assign/topics/1/next").json()
        assert nxt["doc_id"] == "beta"
    server.stop()
    with Store(path, read_only=True) as s:
        rows = s.sql("j", "SELECT doc_id, part, grade FROM judgments WHERE kind = 'judge' "
                     "ORDER BY seq").fetchall()
    assert rows == [("alpha", "1", 2), ("alpha", "2", 1), ("alpha", "3", 0)]


@pytest.mark.slow
def test_an_assessor_assigns_each_nugget_by_keyboard_in_a_browser(tmp_path, launch):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.fail(f"the browser tests need {CHROMIUM}: apt-get install chromium")
    path, token = nugget_campaign(tmp_path)
    server = launch(path)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu",
                                          "--disable-background-networking"])
        page = browser.new_context().new_page()
        page.goto(server.url + "login?token=" + token)
        page.goto(server.url + "rounds/assign/topics/1")
        assert page.locator("article .eyebrow").text_content().startswith("Answer alpha")
        assert "2. Prices <b>fell</b> since 2010. [1] [2]" in page.locator(".doc-text").inner_text()
        assert page.locator("h2.doc-title").inner_text() == "Answer of run alpha (12 words)"
        rows = page.locator("li[data-subtopic]").all_inner_texts()
        assert [r.splitlines()[0] for r in rows] == ["1 Panels cost about $3 per watt",
                                                     "2 Prices fell since 2010",
                                                     "3 Installation takes a day"]
        assert "Grade the answer on each nugget" in page.content()
        for key in ("2", "1"):  # nugget 1 supported, nugget 2 partly; nugget 3 left
            page.keyboard.press(key)
        page.keyboard.press("Enter")
        status = page.locator("#status")
        status.wait_for(state="visible")
        assert "nugget 3 has no grade" in status.inner_text()
        page.keyboard.press("0")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.locator("#judge").get_attribute("data-doc-id") == "beta"
        browser.close()
    server.stop()
    with Store(path, read_only=True) as s:
        rows = s.sql("j", "SELECT doc_id, part, grade FROM judgments ORDER BY seq").fetchall()
    assert rows == [("alpha", "1", 2), ("alpha", "2", 1), ("alpha", "3", 0)]
