"""Names holding `/`, `?`, `#`, `%` and spaces work in every page, link and download.

Round names, topic ids, doc ids, qrels versions and assessor ids come from campaigns and
organisers as they are; the pages percent-encode each one in a link and the routes decode it.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import httpx
import pytest

from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import history
from pooling.judging.rounds import create_round
from pooling.store import Store
from pooling.web.openapi import API_ROOT

pytestmark = pytest.mark.slow

ROUND = "a/b c?#%"
TOPIC = "7/2"
DOCS = ["x/1", "x?2", "x#3", "x%4", ".."]  # `..` is resolved away by browsers unless encoded
QRELS = "q/1 ?#%"
ASSESSOR = "ann/1 ?#"


def _hostile_campaign(tmp_path) -> tuple:
    path = tmp_path / "hostile.duckdb"
    run = tmp_path / "a.run"
    run.write_text("".join(f"{TOPIC} Q0 {d} {i + 1} {9 - i} A\n" for i, d in enumerate(DOCS))
                   + "1 Q0 plain 1 9 A\n")
    topics = tmp_path / "topics.jsonl"
    topics.write_text(json.dumps({"query_id": TOPIC, "title": "slashed topic"}) + "\n"
                      + json.dumps({"query_id": "1", "title": "plain topic"}) + "\n")
    with Store.create(path) as s:
        s.import_runs([run])
        s.import_topics(topics)
        create_round(s, ROUND, "depth", strategy_params={"depth": 10})
        ann = add_assessor(s, "Ann", assessor_id=ASSESSOR)
        org = add_assessor(s, "Org", role="organiser")
        assign(s, ROUND, [ASSESSOR])
    return path, ann.token, org.token


def _press(page, key: str) -> None:
    page.wait_for_timeout(150)
    with page.expect_navigation():
        page.keyboard.press(key)


def test_hostile_round_topic_doc_and_qrels_names_click_through_in_a_browser(tmp_path, launch,
                                                                            browser):
    path, ann_token, org_token = _hostile_campaign(tmp_path)
    server = launch(path)
    failures: list[str] = []

    assessor = browser.new_context().new_page()
    assessor.set_default_timeout(10_000)
    assessor.on("response", lambda r: r.status >= 400 and failures.append(f"{r.status} {r.url}"))
    assessor.goto(server.url + "login?token=" + ann_token)
    row = assessor.locator("tr", has_text="slashed topic")
    assert ROUND in assessor.locator("h2").first.inner_text()
    row.get_by_role("link", name="Start").click()
    assert TOPIC in assessor.locator(".topic .eyebrow").inner_text()
    judged = []
    for key in ("1", "0", "2", "1", "0"):
        judged.append(assessor.locator("#judge").get_attribute("data-doc-id"))
        _press(assessor, key)
    assert sorted(judged) == sorted(DOCS)
    assert "done" in assessor.locator("h1").inner_text()
    assessor.get_by_role("link", name="Review your judgments").click()
    first = assessor.locator("#judge").get_attribute("data-doc-id")
    assert first == judged[0] and "judged 1" in assessor.locator(".document .eyebrow").text_content()
    _press(assessor, "n")
    assert assessor.locator("#judge").get_attribute("data-doc-id") == judged[1]
    _press(assessor, "u")  # undo the last judgment: back on the document judged last
    assert assessor.locator("#judge").get_attribute("data-doc-id") == judged[-1]

    organiser = browser.new_context().new_page()
    organiser.set_default_timeout(10_000)
    organiser.on("response", lambda r: r.status >= 400 and failures.append(f"{r.status} {r.url}"))
    organiser.goto(server.url + "login?token=" + org_token)
    organiser.get_by_role("link", name=ROUND, exact=True).click()
    assert organiser.locator("h1").inner_text().startswith(f"Round {ROUND}")
    organiser.get_by_role("link", name="Campaign").click()
    form = organiser.locator("form", has_text="Derive a new version")
    form.locator("select[name=rule]").select_option("latest")
    form.locator("select[name=round]").select_option(ROUND)
    form.locator("input[name=name]").fill(QRELS)
    with organiser.expect_navigation():
        form.get_by_role("button").click()
    with organiser.expect_download() as download:
        organiser.get_by_role("link", name=QRELS, exact=True).click()
    saved = tmp_path / "download.qrels"
    download.value.save_as(saved)
    assert "/" not in download.value.suggested_filename
    lines = [line.split() for line in saved.read_text().splitlines() if not line.startswith("#")]
    assert sorted(d for q, _, d, _ in lines if q == TOPIC) == sorted(judged[:-1])  # one undone

    with httpx.Client(base_url=server.url.rstrip("/") + API_ROOT,
                      headers={"Authorization": f"Bearer {ann_token}"}, timeout=10) as api:
        topic = f"/rounds/{quote(ROUND, safe='')}/topics/{quote(TOPIC, safe='')}"
        assert api.get(f"{topic}/docs/{quote(DOCS[3], safe='')}").json()["doc_id"] == DOCS[3]
        assert api.get(f"{topic}/docs/~..").json()["doc_id"] == ".."
        assert api.get(f"/rounds/{quote(ROUND, safe='')}/progress").status_code == 200
    server.stop()
    assert failures == []
    with Store(path, read_only=True) as s:
        rows = history(s).to_pylist()
    assert [(r["round_id"], r["query_id"], r["assessor_id"]) for r in rows][0] == (ROUND, TOPIC, ASSESSOR)
    assert [r["doc_id"] for r in rows if r["kind"] == "judge"] == judged
