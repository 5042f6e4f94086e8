"""A subtopic round judged in a real browser by keyboard only: the page shows the topic's
subtopics beside the document, takes a grade per subtopic and saves them together."""

from __future__ import annotations

import json
import shutil

import pytest

from pooling.judging.assessors import assign
from pooling.judging.rounds import create_round
from pooling.store import Store

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
SUBTOPICS = [{"number": "1", "type": "inf", "text": "Prices of rooftop panels."},
             {"number": "2", "type": "inf", "text": "Savings on the power bill."},
             {"number": "3", "type": "nav", "text": "An installer's home page."}]


def subtopic_round(path) -> None:
    """Topic 1 gains three subtopics; round div judges it on them, assigned to ann."""
    with Store(path) as s:
        s.con.execute("UPDATE topics SET extra = ? WHERE query_id = '1'",
                      [json.dumps({"subtopics": SUBTOPICS})])
        create_round(s, "div", "depth", strategy_params={"depth": 2}, topics=["1"],
                     subtopics=True)
        assign(s, "div", ["ann"])


def test_an_assessor_grades_each_subtopic_by_keyboard_and_the_grades_are_stored(campaign, launch):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.fail(f"the browser tests need {CHROMIUM}: apt-get install chromium")
    subtopic_round(campaign.path)
    server = launch(campaign.path)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu",
                                          "--disable-background-networking"])
        page = browser.new_context().new_page()
        page.goto(server.url + "login?token=" + campaign.tokens["ann"])
        page.goto(server.url + "rounds/div/topics/1")
        texts = page.locator("li[data-subtopic]").all_inner_texts()
        assert [t.splitlines()[0] for t in texts] == [
            "1 Prices of rooftop panels.", "2 Savings on the power bill.",
            "3 An installer's home page."]
        first = page.locator("#judge").get_attribute("data-doc-id")
        for key in ("2", "0", "ArrowUp", "1", "1"):  # subtopic 2 graded 0, then corrected to 1
            page.keyboard.press(key)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        second = page.locator("#judge").get_attribute("data-doc-id")
        assert second != first
        page.keyboard.press("0")
        page.keyboard.press("Enter")  # two subtopics have no grade: nothing is sent
        status = page.locator("#status")
        status.wait_for(state="visible")
        assert "subtopic 2 has no grade" in status.inner_text()
        for key in ("0", "2"):
            page.keyboard.press(key)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        with page.expect_navigation():
            page.keyboard.press("u")  # takes back the second document's grades, all three
        assert page.locator("#judge").get_attribute("data-doc-id") == second
        chosen = page.locator("li[data-subtopic]").evaluate_all(
            "rows => rows.map(r => r.dataset.chosen)")
        assert chosen == ["", "", ""]
        browser.close()
    server.stop()
    with Store(campaign.path, read_only=True) as s:
        rows = s.con.execute("SELECT doc_id, part, kind, grade FROM judgments "
                             "WHERE round_id = 'div' ORDER BY seq").fetchall()
    assert rows[:3] == [(first, "1", "judge", 2), (first, "2", "judge", 1), (first, "3", "judge", 1)]
    assert rows[3:6] == [(second, "1", "judge", 0), (second, "2", "judge", 0),
                         (second, "3", "judge", 2)]
    assert sorted(rows[6:]) == [(second, s, "retract", None) for s in ("1", "2", "3")]
