"""The organiser's Workers page of a round, over HTTP on a running `pooling serve`: each
worker's quality on gold with intervals, sortable; a POST (with the session's CSRF token)
flags, withdraws or clears workers and the decision is recorded; judgments stay."""

from __future__ import annotations

import re
import subprocess
import sys

import httpx
import pytest
from conftest import REPO_ROOT, build_campaign

from pooling.judging.history import Judgment
from pooling.judging.judgments import append_judgments
from pooling.store import Store

GOLD = {"d1": 2, "d2": 0, "d3": 1}
WRONG = {"d1": 0, "d2": 2, "d3": 0}  # wrong on every grade, and relevant or not


@pytest.fixture
def crowd(tmp_path):
    """The test campaign, with gold on three of topic 1's documents: ann matches it, bob
    inverts it and cannot judge d4."""
    campaign = build_campaign(tmp_path)
    (tmp_path / "gold.qrels").write_text("".join(f"1 0 {d} {g}\n" for d, g in GOLD.items()))
    with Store(campaign.path) as s:
        s.import_qrels(tmp_path / "gold.qrels", name="gold")
        items = [Judgment("r1", "ann", "1", d, g, seconds=4.0) for d, g in GOLD.items()]
        items += [Judgment("r1", "bob", "1", d, g, seconds=2.0) for d, g in WRONG.items()]
        items.append(Judgment("r1", "bob", "1", "d4", None, kind="unjudgeable", seconds=1.0))
        append_judgments(s, items)
    return campaign


def login(url: str, token: str) -> httpx.Client:
    c = httpx.Client(base_url=url, follow_redirects=False, timeout=30)
    assert c.get("/login", params={"token": token}).status_code == 303
    return c


def csrf(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def rows(page: str) -> list[str]:
    """The workers in the order the table shows them."""
    return re.findall(r'name="workers" value="([^"]+)"', page)


def test_the_workers_page_shows_quality_with_intervals_and_sorts(crowd, launch):
    org = login(launch(crowd.path).url, crowd.tokens["org"])
    page = org.get("/organiser/rounds/r1/workers")
    assert page.status_code == 200
    assert "names no gold version" in page.text  # the round has none: choose one
    page = org.get("/organiser/rounds/r1/workers", params={"gold": "gold"}).text
    assert rows(page) == ["ann", "bob"]
    assert "1.000 <span class=\"muted\">[0.44, 1.00]</span>" in page  # ann: 3 of 3, Wilson
    assert "0.000 <span class=\"muted\">[0.00, 0.56]</span>" in page  # bob: 0 of 3
    worst_first = org.get("/organiser/rounds/r1/workers",
                          params={"gold": "gold", "sort": "accuracy"}).text
    assert rows(worst_first) == ["bob", "ann"]
    best_first = org.get("/organiser/rounds/r1/workers",
                         params={"gold": "gold", "sort": "accuracy", "desc": "1"}).text
    assert rows(best_first) == ["ann", "bob"]
    assert org.get("/organiser/rounds/r1/workers", params={"sort": "x"}).status_code == 400
    assert org.get("/organiser/rounds/nope/workers").status_code == 404
    assert 'href="/organiser/rounds/r1/workers"' in org.get("/organiser/rounds/r1").text


def test_an_assessor_gets_no_workers_page(crowd, launch):
    ann = login(launch(crowd.path).url, crowd.tokens["ann"])
    assert ann.get("/organiser/rounds/r1/workers").status_code == 404


def test_decisions_posted_from_the_page_are_recorded_and_keep_every_judgment(crowd, launch):
    server = launch(crowd.path)
    org = login(server.url, crowd.tokens["org"])
    page = org.get("/organiser/rounds/r1/workers", params={"gold": "gold"}).text
    token = csrf(page)
    refused = org.post("/organiser/rounds/r1/workers", data={
        "decision": "flag", "workers": "bob", "reason": "x", "gold": "gold"})
    assert refused.status_code == 403  # no CSRF token

    by_bar = org.post("/organiser/rounds/r1/workers", data={
        "csrf": token, "decision": "withdraw", "measure": "binary", "bar": "0.6", "gold": "gold"})
    assert by_bar.status_code == 303
    page = org.get(by_bar.headers["location"]).text
    assert "withdraw: bob" in page and ">withdrawn<" in page
    named = org.post("/organiser/rounds/r1/workers", data={
        "csrf": token, "decision": "clear", "workers": "bob", "reason": "appealed",
        "gold": "gold"})
    assert "clear: bob" in org.get(named.headers["location"]).text
    no_reason = org.post("/organiser/rounds/r1/workers", data={
        "csrf": token, "decision": "flag", "workers": "ann", "gold": "gold"})
    assert "needs a reason" in org.get(no_reason.headers["location"]).text

    record = subprocess.run(  # through the server, as any organiser tool
        [sys.executable, "-m", "pooling", "crowd", "decisions", str(crowd.path), "--round", "r1",
         "-o", str(crowd.path.with_name("d.csv"))], capture_output=True, text=True, cwd=REPO_ROOT,
        timeout=120)
    assert record.returncode == 0, record.stderr
    lines = crowd.path.with_name("d.csv").read_text().splitlines()
    assert len(lines) == 3
    assert lines[1].startswith('"r1","bob","withdraw","binary below 0.6 on gold gold","binary",0,0.6,"org"')
    assert '"bob","clear","appealed"' in lines[2]
    history = org.get("/organiser/judgments.csv").text
    assert history.count('"bob"') == 4  # three grades and the unjudgeable answer, all kept


def test_the_derive_form_offers_the_aggregation_rules_and_derives_with_one(crowd, launch):
    server = launch(crowd.path)
    org = login(server.url, crowd.tokens["org"])
    ann = httpx.Client(base_url=server.url, timeout=30,
                       headers={"Authorization": f"Bearer {crowd.tokens['ann']}"})
    for doc, grade in (("d5", 1), ("d6", 0)):  # two pairs beside the gold ones
        stored = ann.post("/api/v1/rounds/r1/topics/1/judgments",
                          json={"doc_id": doc, "grade": grade, "submission_id": doc * 10})
        assert stored.status_code == 200, stored.text
    page = org.get("/organiser").text
    assert "<option>wawa</option>" in page and "<option>dawid-skene</option>" in page
    assert "<option>gold-weighted</option>" in page and '<select name="gold">' in page
    done = org.post("/organiser/qrels", data={"csrf": csrf(page), "rule": "dawid-skene",
                                              "name": "ds", "round": "r1"})
    assert done.status_code == 303
    assert "qrels version ds" in org.get(done.headers["location"]).text
    assert 'href="/organiser/qrels/ds"' in org.get("/organiser").text
    seeded = org.post("/organiser/qrels", data={"csrf": csrf(page), "rule": "gold-weighted",
                                                "name": "gw", "round": "r1", "gold": "gold"})
    assert "qrels version gw" in org.get(seeded.headers["location"]).text
    assert org.get("/organiser/qrels/gw").text == "1 0 d5 1\n1 0 d6 0\n"  # gold left out


def test_the_page_shows_each_new_answer_and_decision_at_once(crowd, tmp_path):
    from inprocess import app_on, client, csrf_of, logged_in

    with app_on(crowd.path) as app:
        org = logged_in(app, crowd.tokens["org"])
        url = "/organiser/rounds/r1/workers?gold=gold"
        first = org.get(url).text
        assert org.get(url + "&sort=accuracy").text.count('name="workers"') == 2  # kept report
        ann = client(app)
        ann.headers["authorization"] = f"Bearer {crowd.tokens['ann']}"
        stored = ann.post("/api/v1/rounds/r1/topics/1/judgments",
                          json={"doc_id": "d5", "grade": 1, "submission_id": "n" * 20})
        assert stored.status_code == 200, stored.text
        again = org.get(url).text
        answers = '<td>ann</td><td></td><td class="num">{}</td>'
        assert answers.format(3) in first and answers.format(4) in again
        org.post("/organiser/rounds/r1/workers", data={
            "csrf": csrf_of(app, org), "decision": "flag", "workers": "ann", "reason": "check",
            "gold": "gold"})
        assert ">flagged<" in org.get(url).text
