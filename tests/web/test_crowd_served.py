"""A crowd round served: workers reach K answers per pair over HTTP, gold looks like any pair,
claims of workers who left run out, unjudgeable is an answer, and a withdrawn worker is
handed nothing while every judgment they made stays."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from inprocess import app_on, client, csrf_of, logged_in

from pooling.crowds.queue_policy import gold_key, gold_turn
from pooling.judging.assessors import add_assessor
from pooling.judging.history import effective_judgments, history, over_k_answers
from pooling.judging.judgments import Judgment, record
from pooling.judging.queue import next_document
from pooling.judging.rounds import create_round
from pooling.store import Store
from pooling.web.openapi import API_ROOT

WORKERS = ("w1", "w2", "w3", "w4", "w5")
QUEUED = [f"d{i}" for i in range(1, 9)]
GOLD = ["g1", "g2", "g3"]


def crowd_store(tmp_path: Path, *, k: int = 3, rate: float = 0.25,
                gold: list[str] = GOLD) -> tuple[Path, dict[str, str]]:
    """One topic, eight queued documents and three gold ones with text; a crowd round.
    gold: the gold documents instead (some of the queued ones: gold that overlaps the pool)."""
    path = tmp_path / "crowd.duckdb"
    (tmp_path / "a.run").write_text("".join(f"1 Q0 {d} {i} {50 - i} A\n"
                                            for i, d in enumerate(QUEUED, start=1)))
    (tmp_path / "gold.qrels").write_text("".join(f"1 0 {g} 1\n" for g in gold))
    (tmp_path / "topics.jsonl").write_text(json.dumps(
        {"query_id": "1", "title": "solar panels", "description": "Costs of solar panels."}) + "\n")
    (tmp_path / "docs.jsonl").write_text("".join(
        json.dumps({"doc_id": d, "title": f"Report {d}", "text": f"Solar panels, report {d}."}) + "\n"
        for d in QUEUED + GOLD))
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run"])
        s.import_topics(tmp_path / "topics.jsonl")
        s.import_documents(tmp_path / "docs.jsonl")
        s.import_qrels(tmp_path / "gold.qrels", name="gold")
        create_round(s, "c", "depth", strategy_params={"depth": 8}, redundancy=k, gold="gold",
                     gold_rate=rate)
        tokens = {w: add_assessor(s, w).token for w in WORKERS}
        tokens["org"] = add_assessor(s, "org", role="organiser").token
    return path, tokens


def api(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url.rstrip("/") + API_ROOT, timeout=30,
                        headers={"Authorization": f"Bearer {token}"})


def work(client: httpx.Client, answer: dict | None = None) -> list[str]:
    """A worker judges what they are handed until the topic is done: the documents in order."""
    seen = []
    while True:
        page = client.get("/rounds/c/topics/1/next").json()
        if page["done"]:
            return seen
        seen.append(page["doc_id"])
        body = {"doc_id": page["doc_id"], "submission_id": page["submission_id"], "seconds": 3}
        body.update(answer or {"grade": 1})
        assert client.post("/rounds/c/topics/1/judgments", json=body).status_code == 200


@pytest.mark.slow
def test_workers_reach_k_answers_per_pair_over_http_and_nothing_is_lost(tmp_path, launch):
    path, tokens = crowd_store(tmp_path, k=3, rate=0.25)
    server = launch(path)
    seen = {}
    for w in WORKERS:
        with api(server.url, tokens[w]) as client:
            seen[w] = work(client)
            progress = client.get("/rounds").json()["rounds"]
            assert [r["round_id"] for r in progress] == ["c"]
    for w, docs in seen.items():
        assert len(docs) == len(set(docs)), f"{w} was handed a pair twice"
        for n in range(1, len(docs) + 1):
            assert abs(sum(d in GOLD for d in docs[:n]) - 0.25 * n) <= 1
    regular = [d for docs in seen.values() for d in docs if d not in GOLD]
    assert sorted(set(regular)) == QUEUED and len(regular) == 3 * len(QUEUED)
    assert seen["w4"] == [] or all(d in GOLD for d in seen["w4"])  # K reached: only gold is left
    with api(server.url, tokens["org"]) as org:
        rounds = org.get("/rounds").json()["rounds"]
    assert rounds[0]["judged"] == len(QUEUED)  # pairs at K, gold left out
    server.stop()
    with Store(path, read_only=True) as s:
        stored = [r for r in history(s).to_pylist() if r["kind"] == "judge"]
    assert len(stored) == sum(len(d) for d in seen.values())


def test_a_gold_pair_and_a_regular_pair_are_served_alike(tmp_path):
    path, tokens = crowd_store(tmp_path, k=2, rate=0.5)
    with app_on(path) as app:
        c = logged_in(app, tokens["w1"])
        pages, kinds = [], []
        for _ in range(4):
            page = c.get("/rounds/c/topics/1")
            assert page.status_code == 200
            doc = re.search(r'data-doc-id="([^"]+)"', page.text).group(1)
            kinds.append(doc in GOLD)
            pages.append(page.text.replace(doc, "DOC"))
            c.post("/rounds/c/topics/1/judgments", json={
                "doc_id": doc, "grade": 1, "submission_id": f"sub-{len(pages):02d}-0123456789abc"},
                headers={"X-CSRF-Token": csrf_of(app, c)})
        # The first page has nothing to go back to or undo; the later ones are compared.
        kinds, pages = kinds[1:], pages[1:]
        assert True in kinds and False in kinds
        gold_page = pages[kinds.index(True)]
        regular_page = pages[kinds.index(False)]

        def form(html: str) -> list[str]:  # every tag and attribute name, values of ids/keys
            return re.findall(r"<(\w+)|\s(data-[\w-]+|id|class)=", html)
        assert form(gold_page) == form(regular_page)
        assert "gold" not in gold_page.lower()


def test_a_claim_of_a_worker_who_left_runs_out_and_the_pair_is_handed_again(tmp_path):
    path, tokens = crowd_store(tmp_path, k=1, rate=0.01)
    with app_on(path) as app:
        live = app.live
        now = [1000.0]
        live.clock = lambda: now[0]
        first = logged_in(app, tokens["w1"]).get(f"{API_ROOT}/rounds/c/topics/1/next",
                                                 headers={"Authorization": f"Bearer {tokens['w1']}"})
        held = first.json()["doc_id"]
        c2 = logged_in(app, tokens["w2"])
        auth = {"Authorization": f"Bearer {tokens['w2']}"}
        assert c2.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth).json()["doc_id"] != held
        now[0] += live.claims.lease + 1  # w1 left without answering
        c3 = logged_in(app, tokens["w3"])
        auth3 = {"Authorization": f"Bearer {tokens['w3']}"}
        assert c3.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth3).json()["doc_id"] == held


def test_unjudgeable_is_stored_over_the_api_and_counts_toward_k(tmp_path, launch):
    path, tokens = crowd_store(tmp_path, k=1, rate=0.01)
    server = launch(path)
    with api(server.url, tokens["w1"]) as client:
        page = client.get("/rounds/c/topics/1/next").json()
        assert page["can_answer_unjudgeable"] is True
        sent = client.post("/rounds/c/topics/1/judgments", json={
            "doc_id": page["doc_id"], "unjudgeable": True, "submission_id": page["submission_id"]})
        assert sent.status_code == 200, sent.text
        again = client.get(f"/rounds/c/topics/1/docs/{page['doc_id']}").json()
        assert again["current_unjudgeable"] is True and again["current_grade"] is None
        both = client.post("/rounds/c/topics/1/judgments", json={
            "doc_id": page["doc_id"], "unjudgeable": True, "grade": 1,
            "submission_id": "b" * 32})
        assert both.status_code == 422 and "not both" in both.json()["error"]
    with api(server.url, tokens["w2"]) as other:
        assert page["doc_id"] not in work(other)
    server.stop()
    with Store(path, read_only=True) as s:
        kinds = {r["doc_id"]: r["kind"] for r in history(s).to_pylist()
                 if r["assessor_id"] == "w1"}
    assert kinds == {page["doc_id"]: "unjudgeable"}


def test_a_withdrawn_worker_is_handed_nothing_and_keeps_every_judgment(tmp_path):
    path, tokens = crowd_store(tmp_path, k=3, rate=0.01)
    with app_on(path) as app:
        c = logged_in(app, tokens["w1"])
        auth = {"Authorization": f"Bearer {tokens['w1']}"}
        made = []
        for _ in range(3):
            page = c.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth).json()
            made.append(page["doc_id"])
            assert c.post(f"{API_ROOT}/rounds/c/topics/1/judgments", headers=auth, json={
                "doc_id": page["doc_id"], "grade": 2,
                "submission_id": page["submission_id"]}).status_code == 200

        def decide(store, decision):
            store.con.execute("INSERT INTO worker_decisions (round_id, assessor_id, decision, "
                              "decided_at) VALUES ('c', 'w1', ?, now())", [decision])
        app.live.gate.run_sync(decide, "withdraw")
        app.live.refresh(frozenset({"worker_decisions"}))
        assert c.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth).status_code == 404
        late = c.post(f"{API_ROOT}/rounds/c/topics/1/judgments", headers=auth, json={
            "doc_id": "d8", "grade": 1, "submission_id": "late-0123456789abcdef"})
        assert late.status_code == 404
        rounds = c.get(f"{API_ROOT}/rounds", headers=auth).json()["rounds"]
        assert rounds[0]["withdrawn"] is True and rounds[0]["topics"] == []
        home = c.get("/")
        assert "withdrawn you from this round" in home.text
        kept = app.live.gate.run_sync(lambda s: effective_judgments(s, "c", assessor_id="w1"))
        assert sorted(kept["doc_id"].to_pylist()) == sorted(made)
        app.live.gate.run_sync(decide, "clear")
        app.live.refresh(frozenset({"worker_decisions"}))
        assert c.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth).status_code == 200


@pytest.mark.slow
def test_the_api_refuses_a_token_at_once_when_it_is_revoked_or_replaced(tmp_path, launch):
    import subprocess
    import sys

    path, tokens = crowd_store(tmp_path, k=3)
    server = launch(path)
    with api(server.url, tokens["w1"]) as w1, api(server.url, tokens["w2"]) as w2:
        assert w1.get("/rounds").status_code == 200  # known to the server's book of tokens
        assert w2.get("/rounds").status_code == 200
        for args in (["assessors", "revoke", str(path), "w1"],
                     ["assessors", "token", str(path), "w2"]):
            done = subprocess.run([sys.executable, "-m", "pooling", *args], capture_output=True,
                                  text=True, timeout=60)
            assert done.returncode == 0, done.stderr
        assert w1.get("/rounds").status_code == 401
        assert w2.get("/rounds").status_code == 401
    with api(server.url, tokens["w3"]) as w3:
        assert w3.get("/rounds").status_code == 200
    with httpx.Client(base_url=server.url.rstrip("/") + API_ROOT, timeout=30) as anonymous:
        assert anonymous.get("/rounds", headers={"Authorization": "Bearer nope"}).status_code == 401


def served_next(c, token: str) -> str | None:
    """The document the API hands the worker next (claimed for them), or None when done."""
    page = c.get(f"{API_ROOT}/rounds/c/topics/1/next",
                 headers={"Authorization": f"Bearer {token}"}).json()
    return None if page["done"] else page["doc_id"]


def answer(c, token: str, doc_id: str, n: int) -> None:
    sent = c.post(f"{API_ROOT}/rounds/c/topics/1/judgments",
                  headers={"Authorization": f"Bearer {token}"},
                  json={"doc_id": doc_id, "grade": 1, "submission_id": f"sub-{n:04d}-0123456789ab"})
    assert sent.status_code == 200, sent.text


def test_served_and_store_paths_hand_the_same_documents_when_gold_overlaps_the_pool(tmp_path):
    # As `pooling pool --gold nist` does when NIST's pairs are among the pooled ones: half of
    # the queue is in the gold version, and a queued pair is never a gold question, so only
    # g1 is gold and every queued pair goes to the crowd.
    path, tokens = crowd_store(tmp_path, k=3, rate=0.1, gold=QUEUED[:4] + GOLD[:1])
    with app_on(path) as app:
        c = client(app)
        n = 0
        for w in ("w1", "w2", "w3", "w4"):
            handed = []
            while True:
                expected = app.live.gate.run_sync(next_document, "c", w, "1")
                served = served_next(c, tokens[w])
                assert served == expected, f"{w} after {handed}"
                if served is None:
                    break
                handed.append(served)
                n += 1
                answer(c, tokens[w], served, n)
            assert set(handed) <= set(QUEUED) | {"g1"}
            regular = sorted(d for d in handed if d != "g1")
            assert regular == (QUEUED if w != "w4" else []), w  # K = 3 reached after w3


class RacingLock:
    """The live state's lock, letting a second worker choose (`other`, run to its end) just
    after the first lets the lock go for the `at`-th time: every point where a thread
    switch could put the other worker's request between two steps of the first one's."""

    def __init__(self, lock, at: int, other):
        self.lock, self.at, self.other = lock, at, other
        self.depth = self.releases = 0

    def __enter__(self):
        self.lock.acquire()
        self.depth += 1
        return self

    def __exit__(self, *exc) -> None:
        self.depth -= 1
        self.lock.release()
        if self.depth == 0 and self.other is not None:
            self.releases += 1
            if self.releases == self.at:
                other, self.other = self.other, None
                other()


def race(tmp_path: Path, at: int) -> tuple[dict[str, str], dict[str, int]] | None:
    """w1 and w2 (one gold answer each) are handed a document at once of a round at K = 1,
    w2 stepping in at w1's `at`-th letting go of the lock: what each was handed and the live
    claims per document; None when w1 let it go fewer times."""
    tmp_path.mkdir()
    path, tokens = crowd_store(tmp_path, k=1, rate=0.01)
    with app_on(path) as app:
        live = app.live
        c = client(app)
        for n, w in enumerate(("w1", "w2")):
            answer(c, tokens[w], served_next(c, tokens[w]), n)
        chosen: dict[str, str] = {}

        def choose(worker: str) -> None:
            chosen[worker] = live.judging_page(worker, "assessor", "c", "1").doc_id

        lock = RacingLock(live._lock, at, lambda: choose("w2"))
        live._lock = lock
        choose("w1")
        live._lock = lock.lock
        if lock.other is not None:
            return None
        return chosen, {d: live.claims.count(("c", "1"), d) for d in QUEUED}


def test_two_workers_choosing_at_once_cannot_both_claim_a_pair_s_last_slot(tmp_path):
    at = 1
    while (raced := race(tmp_path / str(at), at)) is not None:
        chosen, claims = raced
        assert chosen["w1"] != chosen["w2"], f"both handed {chosen['w1']} (w2 at step {at})"
        assert max(claims.values()) == 1
        at += 1
    assert at > 2  # the second worker stepped in at one point or more


def test_an_organiser_s_answer_takes_no_worker_s_slot_of_k_on_the_server(tmp_path):
    path, tokens = crowd_store(tmp_path, k=2, rate=0.01)
    with Store(path) as s:  # read when the server loads the topic
        record(s, [Judgment("c", "org", "1", "d1", 2)])
    with app_on(path) as app:
        c = client(app)
        first = served_next(c, tokens["w1"])  # the topic is loaded: d1 (org's takes no slot) or gold
        assert first == "d1" or first in GOLD
        answer(c, tokens["org"], "d2", 0)  # taken in as it is stored
        answer(c, tokens["w1"], first, 1)
        # fewest answers, then queue order: the organiser's answers of d1 and d2 count for none
        assert served_next(c, tokens["w1"]) == ("d2" if first == "d1" else "d1")
        n = 2
        for w in ("w1", "w2"):
            handed = [first] if w == "w1" else []  # w1's first answer is theirs too
            while (doc := served_next(c, tokens[w])) is not None:
                handed.append(doc)
                n += 1
                answer(c, tokens[w], doc, n)
            assert sorted(d for d in handed if d not in GOLD) == QUEUED, w
        rounds = c.get(f"{API_ROOT}/rounds",
                       headers={"Authorization": f"Bearer {tokens['org']}"}).json()["rounds"]
        assert rounds[0]["judged"] == len(QUEUED)  # every pair at K, by the workers alone
        # only gold is left, and a finished round hands out nothing: gold neither
        assert served_next(c, tokens["w3"]) is None


def test_a_finished_round_hands_a_newcomer_nothing_and_shows_as_done(tmp_path):
    path, tokens = crowd_store(tmp_path, k=1, rate=0.5)
    with app_on(path) as app:
        c = client(app)
        n = 0
        while (doc := served_next(c, tokens["w1"])) is not None:
            n += 1
            answer(c, tokens["w1"], doc, n)
        # a worker added once every pair has its K answers, whose first pair would be gold
        late = next(w for w in (f"late{i}" for i in range(100))
                    if gold_turn(0, 0, 0.5, gold_key(w, GOLD)))
        newcomer = app.live.gate.run_sync(lambda s: add_assessor(s, late).token)
        app.live.refresh(frozenset({"assessors"}))
        home = logged_in(app, newcomer).get("/")
        assert ">done<" in home.text and "Start" not in home.text
        assert served_next(c, newcomer) is None
        page = logged_in(app, newcomer).get("/rounds/c/topics/1")
        assert page.status_code == 200 and "data-doc-id" not in page.text
        rounds = c.get(f"{API_ROOT}/rounds", headers={"Authorization": f"Bearer {newcomer}"})
        assert all(t["done"] for t in rounds.json()["rounds"][0]["topics"])


def test_an_answer_to_a_pair_never_handed_out_is_refused_on_every_route(tmp_path):
    path, tokens = crowd_store(tmp_path, k=3, rate=0.01)
    with app_on(path) as app:
        c = client(app)
        for n, w in enumerate(WORKERS):  # six posts of a pair nobody was handed
            sent = c.post(f"{API_ROOT}/rounds/c/topics/1/judgments",
                          headers={"Authorization": f"Bearer {tokens[w]}"},
                          json={"doc_id": "d8", "grade": 2, "submission_id": f"s{n}" * 8})
            assert sent.status_code == 422 and "handed to them" in sent.json()["error"], sent.text
        page = logged_in(app, tokens["w1"])
        sent = page.post("/rounds/c/topics/1/judgments", headers={"X-CSRF-Token": csrf_of(app, page)},
                         json={"doc_id": "d8", "grade": 2, "submission_id": "p" * 32})
        assert sent.status_code == 422 and "handed to them" in sent.text
        assert app.live.gate.run_sync(history).num_rows == 0
        handed = served_next(c, tokens["w1"])
        answer(c, tokens["w1"], handed, 1)  # handed: taken


def test_a_round_s_documents_are_readable_only_once_handed_out(tmp_path):
    path, tokens = crowd_store(tmp_path, k=3, rate=0.01)
    with app_on(path) as app:
        c = client(app)
        auth = {"Authorization": f"Bearer {tokens['w1']}"}
        for d in QUEUED + GOLD:
            assert c.get(f"{API_ROOT}/rounds/c/topics/1/docs/{d}", headers=auth).status_code == 404
        page = logged_in(app, tokens["w1"])
        assert page.get("/rounds/c/topics/1/docs/d8").status_code == 404
        handed = served_next(c, tokens["w1"])
        assert c.get(f"{API_ROOT}/rounds/c/topics/1/docs/{handed}", headers=auth).json()[
            "doc_id"] == handed
        assert page.get(f"/rounds/c/topics/1/docs/{handed}").status_code == 200
        others = [d for d in QUEUED + GOLD if d != handed]
        assert all(c.get(f"{API_ROOT}/rounds/c/topics/1/docs/{d}", headers=auth).status_code == 404
                   for d in others)
        assert page.get(f"/rounds/c/topics/1/docs/{others[0]}").status_code == 404


def test_claims_outlive_a_restart_and_a_late_answer_is_kept_past_k(tmp_path):
    path, tokens = crowd_store(tmp_path, k=2, rate=0.01)
    with app_on(path) as app:
        c = client(app)
        held = served_next(c, tokens["w1"])  # w1 is handed a document and the server stops
    with app_on(path) as app:
        c = client(app)
        assert served_next(c, tokens["w1"]) == held  # her claim is kept: the same document
        now = [app.live.clock()]
        app.live.clock = lambda: now[0]
        second = served_next(c, tokens["w2"])
        assert second != held  # w1's claim counts toward K: fewest answers and claims first
        now[0] += app.live.claims.lease + 1  # w1 walks away; her lease runs out
        n = 0
        for w in ("w3", "w4"):  # the pair is handed again and reaches K without her
            while (doc := served_next(c, tokens[w])) is not None and doc != held:
                n += 1
                answer(c, tokens[w], doc, n)
            assert doc == held
            n += 1
            answer(c, tokens[w], held, n)
        answer(c, tokens["w1"], held, 99)  # she comes back: her answer is stored, past K
    with Store(path, read_only=True) as s:
        assert ("c", "w1", "1", held) in over_k_answers(s, "c")
        counted = effective_judgments(s, "c", answers=True)
        assert sorted(a for a, d in zip(counted["assessor_id"].to_pylist(),
                                        counted["doc_id"].to_pylist(), strict=True)
                      if d == held) == ["w3", "w4"]


def test_a_crowd_page_is_shown_without_waiting_for_its_handout_s_commit(tmp_path, monkeypatch):
    """The handout's record is the writer's to store in its next commit: a page whose record
    cannot be stored yet is shown all the same, its record follows, and the page carries the
    token that proves the handout meanwhile."""
    import threading

    import pooling.web.judgment_writer as writer_module

    path, tokens = crowd_store(tmp_path, k=3, rate=0.01)
    release, recorded = threading.Event(), []
    stored = writer_module.record_handouts

    def held_back(con, rows):  # the commit of the handouts waits until the page was shown
        if not release.wait(60):
            raise RuntimeError("the page waited for its handout's commit")
        stored(con, rows)
        recorded.extend(rows)

    monkeypatch.setattr(writer_module, "record_handouts", held_back)
    with app_on(path) as app:
        page = logged_in(app, tokens["w1"]).get("/rounds/c/topics/1")
        assert page.status_code == 200
        doc = re.search(r'data-doc-id="([^"]+)"', page.text).group(1)
        token = re.search(r'data-handout="([^"]+)"', page.text).group(1)
        assert token == app.live.proof.token("c", "w1", "1", doc)
        assert not recorded
        release.set()
    assert [(h.assessor_id, h.doc_id) for h in recorded] == [("w1", doc)]  # the record followed
    with Store(path, read_only=True) as s:
        assert s.con.execute("SELECT assessor_id, doc_id FROM crowd_handouts").fetchall() == [
            ("w1", doc)]


def test_a_handout_lost_to_a_crash_is_proven_by_its_page_s_token_and_by_nothing_else(tmp_path):
    """A server killed after showing a page but before its handout's commit: after the
    restart, the worker's answer is taken with the token the page carried (through the API
    and the page route alike), and refused without it, with a token of another document or
    topic, or with another worker's token."""
    path, tokens = crowd_store(tmp_path, k=2, rate=0.01)
    with app_on(path) as app:
        c = client(app)
        auth = {"Authorization": f"Bearer {tokens['w1']}"}
        shown = c.get(f"{API_ROOT}/rounds/c/topics/1/next", headers=auth).json()
        doc, token = shown["doc_id"], shown["handout"]
        page = logged_in(app, tokens["w2"]).get("/rounds/c/topics/1")
        doc2 = re.search(r'data-doc-id="([^"]+)"', page.text).group(1)
        token2 = re.search(r'data-handout="([^"]+)"', page.text).group(1)
    with Store(path) as s:  # what a kill -9 before the writer's commit leaves
        s.con.execute("DELETE FROM crowd_handouts")
    with app_on(path) as app:
        c = client(app)
        auth = {"Authorization": f"Bearer {tokens['w1']}"}

        def post(body: dict, headers: dict = auth) -> httpx.Response:
            return c.post(f"{API_ROOT}/rounds/c/topics/1/judgments", headers=headers,
                          json={"grade": 1, **body})

        refused = [
            post({"doc_id": doc, "submission_id": "a" * 32}),  # no token
            post({"doc_id": doc, "submission_id": "b" * 32, "handout": token + "x"}),
            post({"doc_id": doc, "submission_id": "c" * 32, "handout": token2}),  # w2's
            post({"doc_id": doc2, "submission_id": "d" * 32, "handout": token}),  # another doc
            post({"doc_id": doc, "submission_id": "e" * 32, "handout": ["not", "a", "token"]}),
            post({"doc_id": doc2, "submission_id": "f" * 32, "handout": token2}),  # w1 sends w2's
        ]
        assert [r.status_code for r in refused] == [422] * 6, [r.text for r in refused]
        assert all("handed to them" in r.json()["error"] for r in refused)
        assert app.live.gate.run_sync(history).num_rows == 0
        assert post({"doc_id": doc, "submission_id": "g" * 32, "handout": token}).status_code == 200
        w2 = logged_in(app, tokens["w2"])
        sent = w2.post("/rounds/c/topics/1/judgments", headers={"X-CSRF-Token": csrf_of(app, w2)},
                       json={"doc_id": doc2, "grade": 0, "submission_id": "h" * 32,
                             "handout": token2})
        assert sent.status_code == 200, sent.text
    with Store(path, read_only=True) as s:
        rows = sorted((r["assessor_id"], r["doc_id"], r["grade"]) for r in history(s).to_pylist())
    assert rows == sorted([("w1", doc, 1), ("w2", doc2, 0)])

