"""Forms that refuse say why on the form: a wrong token shows the login form again with the
error (also behind a reverse proxy's prefix, where the form's cookie must come back), and a
round without a name is not pooled."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import build_campaign, start_server
from inprocess import app_on, csrf_of, logged_in

from pooling.store import Store

NOT_VALID = "That token is not valid. Use the link or token you were given."
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def page():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.fail(f"the browser tests need {CHROMIUM}: apt-get install chromium")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield browser.new_context().new_page()
        browser.close()


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["", "/judging"])
def test_a_wrong_token_shows_the_login_form_again_with_the_error(tmp_path, page, prefix):
    campaign = build_campaign(tmp_path)
    extra = ("--root-path", prefix) if prefix else ()
    server = start_server(campaign.path, extra_args=extra, probe=f"{prefix.strip('/')}/login".lstrip("/"))
    try:
        login = server.url.rstrip("/") + prefix + "/login"
        page.goto(login)
        page.locator("#token").fill("not-a-token-of-anyone")
        with page.expect_navigation():
            page.get_by_role("button", name="Log in").click()
        assert page.locator('[role="alert"]').inner_text() == NOT_VALID
        assert page.locator("#token").is_visible()  # the form, to try again
        page.locator("#token").fill(campaign.tokens["ann"])
        with page.expect_navigation():
            page.get_by_role("button", name="Log in").click()
        assert page.url == server.url.rstrip("/") + prefix + "/"
        assert page.get_by_role("heading", name="Your topics").is_visible()
    finally:
        server.stop()


def test_a_round_without_a_name_is_refused_with_a_message_on_the_form(tmp_path):
    campaign = build_campaign(tmp_path)
    with app_on(campaign.path) as app:
        org = logged_in(app, campaign.tokens["org"])
        for name in ("", "   "):
            answer = org.post("/organiser/rounds", data={"csrf": csrf_of(app, org), "name": name,
                                                         "strategy": "depth", "depth": "2"})
            assert answer.status_code == 303 and answer.headers["location"] == "/organiser"
            shown = org.get("/organiser").text
            assert re.search(r'class="flash error"[^>]*>A new round needs a name', shown), shown
        assert org.post("/organiser/rounds", data={"csrf": csrf_of(app, org), "name": "r2",
                                                   "strategy": "depth", "depth": "2"}).status_code == 303
    with Store(campaign.path, read_only=True) as s:
        assert s.con.execute("SELECT round_id FROM rounds ORDER BY 1").fetchall() == [("r1",), ("r2",)]
