"""A crowd round in a real browser (Chromium via Playwright) against `pooling serve`: a gold
pair's page has the same form as a regular pair's, "can't judge" stores an unjudgeable
answer, and every answer brings back its page's proof of the handout."""

from __future__ import annotations

import pytest
from test_crowd_served import GOLD, crowd_store
from test_serve_browser import page  # noqa: F401  (a fixture)

from pooling.judging.judgments import history
from pooling.store import Store

pytestmark = pytest.mark.slow

# Every element of the judging page with its attributes' names (values masked where they name
# the document or the view's fresh ids), as the browser built it, scripts run.
FORM = """() => Array.from(document.querySelectorAll('body *')).map(e =>
  e.tagName + '[' + Array.from(e.attributes).map(a => a.name + (
    ['href', 'data-doc-id', 'data-submission-id', 'data-undo-id', 'data-csrf', 'data-handout',
     'value', 'max']
      .includes(a.name) ? '' : '=' + a.value)).join(',') + ']').join('\\n')"""


def _doc_id(page) -> str:  # noqa: F811
    return page.locator("#judge").get_attribute("data-doc-id")


def test_a_gold_page_is_built_as_a_regular_one_and_cant_judge_is_an_answer(tmp_path, launch,
                                                                            page):  # noqa: F811
    path, tokens = crowd_store(tmp_path, k=2, rate=0.5)
    server = launch(path)
    page.goto(server.url + "login?token=" + tokens["w1"])
    page.goto(server.url + "rounds/c/topics/1")
    forms: dict[bool, list[str]] = {True: [], False: []}
    answered = []
    for n in range(5):
        doc = _doc_id(page)
        if n:  # the first page has nothing to go back to
            forms[doc in GOLD].append(page.evaluate(FORM))
        answered.append(doc)
        key = "x" if n == 3 else "1"
        page.wait_for_timeout(100)
        handout = page.locator("#judge").get_attribute("data-handout")
        with page.expect_request(lambda r: r.method == "POST") as sent, page.expect_navigation():
            page.keyboard.press(key)
        assert handout and sent.value.post_data_json["handout"] == handout
    assert forms[True] and forms[False]
    assert forms[True][0] == forms[False][0]
    assert "gold" not in page.content().lower()
    assert page.locator("#unjudgeable").count() == 1
    server.stop()
    with Store(path, read_only=True) as s:
        rows = [r for r in history(s).to_pylist() if r["assessor_id"] == "w1"]
    assert [r["doc_id"] for r in rows] == answered
    assert [r["kind"] for r in rows] == ["judge", "judge", "judge", "unjudgeable", "judge"]
    assert rows[3]["grade"] is None
