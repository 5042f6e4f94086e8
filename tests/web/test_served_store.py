"""A live campaign: the organiser's CLI and Python API work on a store `pooling serve` holds,
with organiser credentials only, while assessors keep judging; a killed CLI write is undone."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
import time

import duckdb
import httpx
import pytest
from conftest import REPO_ROOT

from pooling.errors import StoreError
from pooling.store import Store
from pooling.store.remote import CredentialError

pytestmark = pytest.mark.slow


def pooling(*args, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    env = {**(env if env is not None else os.environ), "COLUMNS": "250"}
    done = subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=REPO_ROOT, env=env)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def assessor(server, token: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=server.url, follow_redirects=False, timeout=10)
    assert client.get("/login", params={"token": token}).status_code == 303
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/").text).group(1)
    return client, csrf


def judge(client: httpx.Client, csrf: str, doc_id: str, grade: int, query_id: str = "1"):
    answer = client.post(f"/rounds/r1/topics/{query_id}/judgments",
                         json={"doc_id": doc_id, "grade": grade, "submission_id": f"sub-{doc_id}-{grade}" * 2,
                               "seconds": 3}, headers={"X-CSRF-Token": csrf})
    assert answer.status_code == 200, answer.text
    return answer


def test_the_organisers_cli_works_while_assessors_judge(campaign, server, tmp_path):
    ann, csrf = assessor(server, campaign.tokens["ann"])
    judge(ann, csrf, "d1", 1)
    late = tmp_path / "late.run"
    late.write_text("1 Q0 d9 1 5 late\n1 Q0 d2 2 4 late\n2 Q0 e9 1 5 late\n")
    qrels = tmp_path / "old.qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n2 0 e1 1\n")
    assert "imported run late" in pooling("import", "runs", campaign.path, late).stdout
    judge(ann, csrf, "d2", 0)
    pooling("import", "qrels", campaign.path, qrels, "--name", "old")
    assert "late" in pooling("info", campaign.path).stdout
    board = pooling("leaderboard", campaign.path, "--qrels", "old", "-m", "map").stdout
    assert "late" in board and "A" in board
    pooling("qrels", "derive", campaign.path, "--round", "r1", "--name", "so-far", "--rule", "latest")
    pooling("pool", campaign.path, "--round", "r2", "--strategy", "depth", "--depth", "2")
    judge(ann, csrf, "d3", 1)
    server.stop()
    with Store(campaign.path, read_only=True) as s:
        judged = s.con.execute("SELECT doc_id, grade FROM judgments ORDER BY seq").fetchall()
        assert judged == [("d1", 1), ("d2", 0), ("d3", 1)]
        assert s.con.execute("SELECT count(*) FROM run_results WHERE run_id = 'late'").fetchone() == (3,)
        versions = {r[0] for r in s.con.execute("SELECT name FROM qrels_versions").fetchall()}
        assert {"old", "so-far"} <= versions
        derived = s.con.execute("SELECT doc_id, relevance FROM qrels WHERE version = 'so-far' "
                                "ORDER BY doc_id").fetchall()
        assert derived == [("d1", 1), ("d2", 0)]
        assert s.con.execute("SELECT count(*) FROM rounds WHERE round_id = 'r2'").fetchone() == (1,)


def test_the_python_store_api_goes_through_the_server(campaign, server, tmp_path):
    run = tmp_path / "api.run"
    run.write_text("1 Q0 d4 1 3 api\n2 Q0 e2 1 3 api\n")
    with Store(campaign.path) as s:
        assert s.remote
        report = s.import_runs([run])
        assert report.items[0].run_id == "api"
        table = s.run_table("api")
        assert table["doc_id"].to_pylist() == ["d4", "e2"]
        with pytest.raises(RuntimeError, match="changed my mind"):
            with s.transaction() as con:
                con.execute("INSERT INTO topic_subsets VALUES ('gone', '1')")
                raise RuntimeError("changed my mind")
        assert s.one("count", "SELECT count(*) FROM topic_subsets") == (0,)
        with pytest.raises(StoreError, match="no_such_table"):
            s.one("bad step", "SELECT * FROM no_such_table")


def test_only_organisers_reach_a_served_store(campaign, server):
    env = {k: v for k, v in os.environ.items() if k != "POOLING_TOKEN"}
    wrong = pooling("--token", "not-a-token", "info", campaign.path, check=False, env=env)
    assert wrong.returncode == 1 and "unknown token" in wrong.stderr
    as_assessor = pooling("--token", campaign.tokens["ann"], "info", campaign.path, check=False, env=env)
    assert as_assessor.returncode == 1 and "ann is an assessor" in as_assessor.stderr
    as_organiser = pooling("--token", campaign.tokens["org"], "info", campaign.path, env=env)
    assert "contents" in as_organiser.stdout
    with pytest.raises(CredentialError, match="unknown token"):
        Store(campaign.path, token="forged")
    # An assessor's logged-in browser session carries no bearer token: refused.
    ann, _ = assessor(server, campaign.tokens["ann"])
    assert ann.post("/_store/sessions", json={}).status_code == 401
    bearer = {"Authorization": f"Bearer {campaign.tokens['ann']}"}
    assert httpx.post(server.url + "_store/sessions", json={}, headers=bearer).status_code == 403
    # A session opened with one token cannot be used with another.
    org = {"Authorization": f"Bearer {campaign.tokens['org']}"}
    session = httpx.post(server.url + "_store/sessions", json={}, headers=org).json()["session"]
    stolen = httpx.post(f"{server.url}_store/sessions/{session}/execute",
                        json={"sql": "SELECT 1"}, headers=bearer)
    assert stolen.status_code == 401


def test_a_killed_cli_write_leaves_the_store_as_before_and_the_server_serving(campaign, launch, tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("POOLING_LEASE_SECONDS", "2")
    server = launch(campaign.path)
    big = tmp_path / "big.run"
    big.write_text("".join(f"{q} Q0 x{q}-{i} {i + 1} {1000 - i} big\n"
                           for q in ("1", "2") for i in range(400)))
    env = {**os.environ, "POOLING_KILL_AT": "rows:1"}
    killed = pooling("import", "runs", campaign.path, big, check=False, env=env)
    assert killed.returncode == -9
    ann, csrf = assessor(server, campaign.tokens["ann"])
    judge(ann, csrf, "d1", 2)  # the server serves while the dead client's transaction is open
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with Store(campaign.path, read_only=True) as s:
            if s.one("count", "SELECT count(*) FROM run_results WHERE run_id = 'big'") == (0,):
                break
        time.sleep(0.5)
    with Store(campaign.path, read_only=True) as s:
        assert s.one("count", "SELECT count(*) FROM run_results WHERE run_id = 'big'") == (0,)
        assert s.one("count", "SELECT count(*) FROM runs WHERE run_id = 'big'") == (0,)
    again = pooling("import", "runs", campaign.path, big)  # nothing half-done stands in the way
    assert "imported run big" in again.stdout
    judge(ann, csrf, "d2", 1)
    server.stop()
    con = duckdb.connect(str(campaign.path), read_only=True)
    assert con.execute("SELECT count(*) FROM run_results WHERE run_id = 'big'").fetchone() == (800,)
    assert con.execute("SELECT doc_id FROM judgments ORDER BY seq").fetchall() == [("d1",), ("d2",)]


def test_every_organiser_command_works_on_a_served_store(campaign, server, tmp_path):
    """Reads and writes of every kind through the server, and the pages see the changes."""
    qrels = tmp_path / "q.qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n2 0 e1 1\n2 0 e3 1\n")
    s, out = campaign.path, tmp_path
    for args in (["import", "qrels", s, qrels, "--name", "q1"],
                 ["evaluate", s, "--qrels", "q1"],
                 ["evaluate", s, "--qrels", "q1"],  # the second time from the cache
                 ["leaderboard", s, "--qrels", "q1", "-m", "map", "--format", "csv"],
                 ["compare", s, "--qrels", "q1", "-m", "map", "-m", "P_5"],
                 ["topic-report", s, "--qrels", "q1"],
                 ["pool-bias", s, "--qrels", "q1"],
                 ["export", "run", s, "A", "-o", out / "A.run"],
                 ["export", "qrels", s, "--qrels", "q1", "-o", out / "q1.qrels"],
                 ["export", "pool", s, "--round", "r1", "-o", out / "pool.tsv"],
                 ["export", "judgments", s, "-o", out / "history.csv"],
                 ["organisers", "add", s, "zed"],
                 ["assessors", "add", s, "cy"],
                 ["topics", "subset", s, "first", "1"],
                 ["pool", s, "--round", "r2", "--strategy", "depth", "--depth", "2"],
                 ["batch", "export", s, "--round", "r1", "--assessor", "ann", "-o", out / "batch.csv"]):
        pooling(*args)
    assert (out / "A.run").read_text().startswith("1 Q0 d1 1 9")
    with open(out / "batch.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))[:2]
    with open(out / "judged.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([{**r, "grade": "1"} for r in rows])
    assert "2 judgment(s) stored" in pooling("batch", "import", s, "--round", "r1", "--assessor", "ann",
                                            out / "judged.csv").stdout
    # The pages see what the CLI did: ann's batch judgments, a new assessor's new round.
    ann, _ = assessor(server, campaign.tokens["ann"])
    first_two = {r["doc_id"] for r in rows}
    shown = re.search(r'data-doc-id="([^"]+)"', ann.get("/rounds/r1/topics/1").text).group(1)
    assert shown not in first_two  # the next document to judge skips what the batch judged
    token = next(line for line in pooling("assessors", "add", s, "dee").stdout.splitlines()
                 if "token" in line).split()[-1]
    pooling("assign", s, "--round", "r2", "--assessors", "dee")
    dee, _ = assessor(server, token)
    assert "r2" in dee.get("/").text
    server.stop()
    with Store(campaign.path, read_only=True) as st:
        assert st.one("n", "SELECT count(*) FROM judgments WHERE assessor_id = 'ann'") == (2,)
        assert st.one("n", "SELECT count(*) FROM topic_subsets WHERE name = 'first'") == (1,)
        assert st.one("n", "SELECT count(*) FROM eval_results WHERE qrels_version = 'q1'")[0] > 0
