"""The judging app in a real browser (Chromium via Playwright) against `pooling serve`."""

from __future__ import annotations

import pytest

from pooling.judging.judgments import effective_judgments, history
from pooling.store import Store

pytestmark = pytest.mark.slow


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs
    yield pg
    context.close()


def _doc_id(page) -> str:
    return page.locator("#judge").get_attribute("data-doc-id")


def _press(page, key: str) -> None:
    """Press a shortcut and wait for the page it leads to."""
    page.wait_for_timeout(300)  # so the time on the document is measurably above zero
    with page.expect_navigation():
        page.keyboard.press(key)


def test_assessor_judges_with_keys_undoes_and_resumes_where_they_left_off(campaign, server, page):
    page.goto(server.url + "login?token=" + campaign.tokens["ann"])
    assert page.url == server.url  # the token is gone from the address bar
    page.get_by_role("link", name="Start").click()
    judged = []
    for key in ("2", "1", "0"):
        judged.append((_doc_id(page), int(key)))
        _press(page, key)
    fourth = _doc_id(page)
    assert fourth not in {d for d, _ in judged}

    _press(page, "u")  # takes back the last judgment and shows that document again
    assert _doc_id(page) == judged[-1][0]
    assert "judged" not in page.locator(".document .eyebrow").text_content()

    page.goto(server.url)  # leave, come back: resume at the first document not judged
    assert "1 / 6" not in page.content() and "2 / 6" in page.content()
    page.get_by_role("link", name="Resume").click()
    assert _doc_id(page) == judged[-1][0]
    page.reload()
    assert _doc_id(page) == judged[-1][0]
    page.locator("#note").fill("close call")
    page.locator("#note").press("Escape")  # leave the note field so keys are shortcuts again
    _press(page, "1")
    assert _doc_id(page) == fourth

    _press(page, "p")  # previous: the document just judged, its grade shown
    assert _doc_id(page) == judged[-1][0]
    assert "judged 1" in page.locator(".document .eyebrow").text_content()
    _press(page, "n")
    assert _doc_id(page) == fourth
    _press(page, "s")  # skip: on to the next unjudged document, this one stays queued
    assert _doc_id(page) != fourth

    server.stop()
    with Store(campaign.path, read_only=True) as s:
        rows = history(s).to_pylist()
        current = effective_judgments(s, "r1").to_pylist()
    assert [(r["doc_id"], r["kind"], r["grade"]) for r in rows] == [
        (judged[0][0], "judge", 2), (judged[1][0], "judge", 1), (judged[2][0], "judge", 0),
        (judged[2][0], "retract", None), (judged[2][0], "judge", 1),
    ]
    assert all(r["assessor_id"] == "ann" and r["round_id"] == "r1" for r in rows)
    assert all(r["seconds"] > 0 for r in rows if r["kind"] == "judge")
    assert rows[-1]["note"] == "close call"
    assert {(r["doc_id"], r["grade"]) for r in current} == {
        (judged[0][0], 2), (judged[1][0], 1), (judged[2][0], 1)}
    assert not page.dialogs


def test_document_markup_is_shown_as_text_and_never_runs(campaign, server, page, tmp_path):
    responses = []
    page.on("response", lambda r: responses.append(r))
    page.goto(server.url + "login?token=" + campaign.tokens["ann"])
    page.goto(server.url + "rounds/r1/topics/1/docs/d1")
    text = page.locator(".doc-text").inner_text()
    assert "<script>alert(1)</script>" in text
    assert "<img src=x onerror=alert(1)>" in text
    assert "<script>alert(1)</script>" in page.locator(".doc-title").inner_text()
    assert page.locator(".document img, .document script").count() == 0
    assert page.locator(".doc-text mark").first.inner_text().lower() == "solar"
    page.wait_for_timeout(300)
    assert page.dialogs == []

    shot = tmp_path / "judging-page.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000

    pages = [r for r in responses if r.url.startswith(server.url) and "/static/" not in r.url]
    assert pages
    for r in pages:
        csp = r.headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp and "object-src 'none'" in csp, r.url
        assert r.headers.get("x-content-type-options") == "nosniff"
