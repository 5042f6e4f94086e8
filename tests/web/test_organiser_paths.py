"""What an organiser does while a crowd judges costs the crowd only what it changed: assigning
round r through the served store (or the organiser's page) loads r again and nothing else,
adding an assessor loads nothing, and a change to a round's own pool or assignments is seen
at once. The progress organisers poll (GET /api/v1/rounds) is read set-wise on a cursor of
its own, beside the pages' store lock, and agrees with the per-round detail."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import httpx
from conftest import REPO_ROOT, build_campaign
from inprocess import app_on, client, csrf_of, logged_in, serving

from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import Judgment, append_judgments, record
from pooling.judging.rounds import create_round
from pooling.store import Store
from pooling.web import campaign as pages
from pooling.web.round_progress import organiser_rounds


def pooling(*args: str) -> subprocess.CompletedProcess:
    """A `pooling` command in a process of its own (it reaches the store through the server)."""
    done = subprocess.run([sys.executable, "-m", "pooling", *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    return done


def sql_through_server(store: Path, statement: str) -> None:
    """One statement on the served store, from another process (as any organiser tool)."""
    code = "import sys\nfrom pooling.store import Store\nwith Store(sys.argv[1]) as s:\n" \
           "    assert s.remote\n    s.con.execute(sys.argv[2])\n"
    done = subprocess.run([sys.executable, "-c", code, str(store), statement], capture_output=True,
                          text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr


def browser(url: str, token: str) -> httpx.Client:
    c = httpx.Client(base_url=url, follow_redirects=False, timeout=30)
    assert c.get("/login", params={"token": token}).status_code == 303
    return c


def campaign_with_a_spare_round(tmp_path):
    campaign = build_campaign(tmp_path)
    with Store(campaign.path) as s:
        create_round(s, "r2", "depth", strategy_params={"depth": 2})  # pooled, not assigned
    return campaign


def test_assigning_a_round_through_the_served_store_loads_that_round_alone(tmp_path):
    campaign = campaign_with_a_spare_round(tmp_path)
    with app_on(campaign.path) as app, serving(app, campaign.path) as url:
        live = app.live
        ann, bob = browser(url, campaign.tokens["ann"]), browser(url, campaign.tokens["bob"])
        assert ann.get("/rounds/r1/topics/1").status_code == 200
        assert bob.get("/rounds/r1/topics/2").status_code == 200
        assert "/rounds/r2/" not in ann.get("/").text
        loads, histories = dict(live.round_loads), dict(live.history_loads)

        pooling("assign", str(campaign.path), "--round", "r2", "--assessors", "ann")
        home = ann.get("/").text
        assert 'href="/rounds/r2/topics/1"' in home  # the new work is there at once
        assert ann.get("/rounds/r2/topics/1").status_code == 200
        assert ann.get("/rounds/r1/topics/1").status_code == 200
        assert bob.get("/rounds/r1/topics/2").status_code == 200
        assert live.round_loads["r1"] == loads["r1"]  # r1's pool and assignments: kept
        assert live.round_loads["r2"] >= 1
        assert live.history_loads["r1"] == histories["r1"]  # nobody's history of r1 either


def test_adding_an_assessor_through_the_served_store_loads_nothing_the_pages_hold(tmp_path):
    campaign = campaign_with_a_spare_round(tmp_path)
    with app_on(campaign.path) as app, serving(app, campaign.path) as url:
        live = app.live
        ann = browser(url, campaign.tokens["ann"])
        assert ann.get("/rounds/r1/topics/1").status_code == 200
        assert ann.get("/").status_code == 200
        loads, histories = dict(live.round_loads), dict(live.history_loads)
        added = pooling("assessors", "add", str(campaign.path), "Cy Young").stdout
        token = added.rsplit(": ", 1)[1].strip()
        assert ann.get("/rounds/r1/topics/1").status_code == 200 and ann.get("/").status_code == 200
        assert dict(live.round_loads) == loads and dict(live.history_loads) == histories
        cy = browser(url, token)  # the new person can log in at once
        assert "Nothing is assigned to you yet" in cy.get("/").text


def test_a_change_to_a_rounds_own_pool_or_assignments_is_seen_at_once(tmp_path):
    campaign = campaign_with_a_spare_round(tmp_path)
    with app_on(campaign.path) as app, serving(app, campaign.path) as url:
        ann, bob = browser(url, campaign.tokens["ann"]), browser(url, campaign.tokens["bob"])
        assert ann.get("/rounds/r1/topics/1/docs/d1").status_code == 200
        assert bob.get("/rounds/r1/topics/2").status_code == 200
        sql_through_server(campaign.path, "DELETE FROM assignments WHERE round_id = 'r1' "
                                          "AND assessor_id = 'bob'")
        assert bob.get("/rounds/r1/topics/2").status_code == 404
        assert "Nothing is assigned to you yet" in bob.get("/").text
        sql_through_server(campaign.path, "DELETE FROM pool_entries WHERE round_id = 'r1' "
                                          "AND query_id = '1' AND doc_id = 'd1'")
        assert ann.get("/rounds/r1/topics/1/docs/d1").status_code == 404
        sql_through_server(campaign.path, "UPDATE topics SET title = 'solar roofs' WHERE query_id = '1'")
        assert "solar roofs" in ann.get("/rounds/r1/topics/1").text


def test_assigning_on_the_organisers_page_loads_that_round_alone(tmp_path):
    campaign = campaign_with_a_spare_round(tmp_path)
    with app_on(campaign.path) as app:
        live = app.live
        ann, org = logged_in(app, campaign.tokens["ann"]), logged_in(app, campaign.tokens["org"])
        assert ann.get("/rounds/r1/topics/1").status_code == 200
        loads = dict(live.round_loads)
        done = org.post("/organiser/assign", data={"csrf": csrf_of(app, org), "round": "r2",
                                                    "assessors": "ann"})
        assert done.status_code == 303
        assert 'href="/rounds/r2/topics/1"' in ann.get("/").text
        assert ann.get("/rounds/r1/topics/1").status_code == 200
        assert live.round_loads["r1"] == loads["r1"]


def _judged_store(tmp_path) -> Path:
    """r1 (ann topic 1, bob topic 2) and r2 (overlap), with corrections, undos, an undo with
    nothing to take back, and an automatic judge's judgments (counted: the pairs are judged)."""
    campaign = campaign_with_a_spare_round(tmp_path)
    with Store(campaign.path) as s:
        assign(s, "r2", ["ann", "bob"], overlap=0.5, seed=3)
        s.con.execute("INSERT INTO assessors (assessor_id, name, role, token_sha256, created_at, kind) "
                      "VALUES ('bot', 'bot', 'assessor', '', now(), 'model')")
        n = iter(range(1000))

        def j(r, a, q, d, grade, kind="judge"):
            return Judgment(r, a, q, d, grade, kind=kind, submission_id=f"s{next(n):015d}")

        record(s, [j("r1", "ann", "1", "d1", 2), j("r1", "ann", "1", "d2", 1),
                   j("r1", "ann", "1", "d2", None, "retract"), j("r1", "ann", "1", "d3", 0),
                   j("r1", "ann", "1", "d3", 1), j("r1", "bob", "2", "e1", 0),
                   j("r2", "ann", "1", "d1", 1)])
        # an undo with nothing to take back, then a judgment: judged (the undo did nothing)
        append_judgments(s, [j("r1", "ann", "1", "d4", None, "retract"), j("r1", "ann", "1", "d4", 1)])
        append_judgments(s, [j("r1", "bot", "1", "d5", 1), j("r1", "bot", "2", "e2", 1)])
    return campaign.path


def test_the_organisers_progress_agrees_with_each_rounds_detail(tmp_path):
    path = _judged_store(tmp_path)
    with Store(path) as s:
        fast = {r.round_id: {t.query_id: (t.assigned, t.judged, t.done) for t in r.topics}
                for r in organiser_rounds(s)}
        detail = {}
        for rid in ("r1", "r2"):
            d = pages.round_detail(s, rid)
            detail[rid] = {t["query_id"]: (t["queued"], t["judged"], t["judged"] >= t["queued"])
                           for t in d.topics}
        assert organiser_rounds(s, "r2")[0].topics == next(
            r for r in organiser_rounds(s) if r.round_id == "r2").topics
    assert fast == detail
    assert fast["r1"]["1"][1] == 4  # d1, d3, d4 and the automatic judge's d5; d2 undone


def test_the_organisers_rounds_are_read_beside_the_pages_store_lock(tmp_path):
    path = _judged_store(tmp_path)
    bearer = {"authorization": f"Bearer {organiser_token(path)}"}
    with app_on(path) as app:
        org = client(app)
        assert org.get("/api/v1/rounds", headers=bearer).status_code == 200  # readers made
        gate = app.live.gate
        answers = []
        with gate._lock:  # the pages' store work holds the lock (a long miss, say)
            asking = threading.Thread(target=lambda: answers.append(
                org.get("/api/v1/rounds", headers=bearer)))
            asking.start()
            asking.join(timeout=60)
            answered_while_held = not asking.is_alive()
        asking.join()
    assert answered_while_held and answers[0].status_code == 200
    assert [r["round_id"] for r in answers[0].json()["rounds"]] == ["r1", "r2"]


def organiser_token(path: Path) -> str:
    """The token of a new organiser (a person's, as a script asking the API holds)."""
    with Store(path) as s:
        return add_assessor(s, "Olga", role="organiser").token

