"""Automatic judges in the store: added as assessors of kind model, judging a round's pool a
batch per commit, resuming after kill -9 without judging a pair twice or asking again for an
answer it has, and mixed into qrels only by a rule that names them."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pooling.errors import PoolingError, StoreError
from pooling.judges.model_judges import add_judge, get_judge, judge_pairs, list_judges, round_pairs
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import Judgment, record
from pooling.judging.rounds import create_round
from pooling.judging.rules import derive_grades, derive_qrels
from pooling.store import Store

JUDGE_PROGRAM = Path(__file__).with_name("word_judge.py")
TOPICS = [{"query_id": "1", "title": "wind turbines"}, {"query_id": "2", "title": "solar panels"}]


def program(*args: str) -> str:
    return " ".join(shlex.quote(a) for a in (sys.executable, str(JUDGE_PROGRAM), *args))


def build(tmp_path: Path, docs_per_topic: int = 6) -> Path:
    """Two topics, one run retrieving docs_per_topic documents each (every third about the
    topic), a round pooling all of them; ann judges topic 1, bob topic 2."""
    path = tmp_path / "c.duckdb"
    run, docs = [], []
    for topic in TOPICS:
        q = topic["query_id"]
        for i in range(docs_per_topic):
            d = f"q{q}d{i:03d}"
            run.append(f"{q} Q0 {d} {i + 1} {100 - i} A\n")
            about = topic["title"] if i % 3 == 0 else "something else entirely"
            docs.append({"doc_id": d, "title": f"doc {d}", "text": f"a page on {about}"})
    (tmp_path / "a.run").write_text("".join(run))
    (tmp_path / "topics.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOPICS))
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run"])
        s.import_topics(tmp_path / "topics.jsonl")
        s.import_documents(tmp_path / "docs.jsonl")
        create_round(s, "r1", "depth", strategy_params={"depth": docs_per_topic}, grades=[0, 1])
        add_assessor(s, "ann")
        add_assessor(s, "bob")
        assign(s, "r1", ["ann", "bob"])
    return path


def pooling(*args, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    if check:
        assert done.returncode == 0, done.stderr
    return done


def test_a_judge_is_an_assessor_of_kind_model_with_its_identity(tmp_path):
    with Store(build(tmp_path)) as s:
        judge = add_judge(s, "Words", "command", {"command": program(), "timeout": "5"})
        assert judge.judge_id == "words" and judge.model == program() and judge.prompt is None
        umbrela = add_judge(s, "umbrela", "openai", {"base_url": "http://127.0.0.1:9/v1",
                                                     "model": "m", "api_key_env": "MY_KEY"})
        assert umbrela.prompt_sha256 and len(umbrela.prompt_sha256) == 64
        assert umbrela.params["api_key_env"] == "MY_KEY"
        assert [j.judge_id for j in list_judges(s)] == ["words", "umbrela"]
        row = s.one("kind", "SELECT kind, backend, role FROM assessors WHERE assessor_id = 'words'")
        assert row == ("model", "command", "assessor")
        with pytest.raises(PoolingError, match="no parameter"):
            add_judge(s, "bad", "command", {"command": "x", "colour": "red"})
        with pytest.raises(StoreError, match="is a person"):
            get_judge(s, "ann")


def test_judging_a_round_stores_each_pair_once_and_a_second_run_asks_nothing(tmp_path):
    log = tmp_path / "asked.log"
    path = build(tmp_path)
    with Store(path) as s:
        add_judge(s, "words", "command", {"command": program("--log", str(log))})
        pairs = round_pairs(s, "r1")
        first = judge_pairs(s, "words", pairs, round_id="r1", batch=5)
        assert (first.judged, first.already, first.failed) == (12, 0, 0)
        again = judge_pairs(s, "words", pairs, round_id="r1", batch=5)
        assert (again.judged, again.already) == (0, 12)
        rows = s.con.execute("SELECT doc_id, grade, probability, rationale FROM judgments "
                             "WHERE assessor_id = 'words' ORDER BY doc_id").fetchall()
        assert len(rows) == 12 and rows[0][:3] == ("q1d000", 1, 0.9)
        assert "turbines" in rows[0][3]
        assert s.one("calls", "SELECT count(*) FROM judge_calls WHERE judge_id = 'words'") == (12,)
    assert len(log.read_text().splitlines()) == 12


def test_a_pair_already_answered_is_taken_from_the_cache_not_asked_again(tmp_path):
    log = tmp_path / "asked.log"
    path = build(tmp_path)
    with Store(path) as s:
        add_judge(s, "words", "command", {"command": program("--log", str(log))})
        judge_pairs(s, "words", round_pairs(s, "r1"), round_id="r1")
        # The same judge on the same pairs outside the round: judgments anew, answers cached.
        outside = judge_pairs(s, "words", round_pairs(s, "r1"))
        assert (outside.judged, outside.cached) == (12, 12)
    assert len(log.read_text().splitlines()) == 12


def test_judgments_of_a_judge_are_left_out_of_peoples_rules_and_mixed_in_by_name(tmp_path):
    path = build(tmp_path)
    with Store(path) as s:
        add_judge(s, "words", "command", {"command": program()})
        judge_pairs(s, "words", round_pairs(s, "r1"), round_id="r1")
        record(s, [Judgment("r1", "ann", "1", "q1d000", 0), Judgment("r1", "ann", "1", "q1d001", 1)])
        people = derive_grades(s, "majority", round_id="r1").to_pylist()
        assert people == [{"query_id": "1", "doc_id": "q1d000", "relevance": 0},
                          {"query_id": "1", "doc_id": "q1d001", "relevance": 1}]
        mixed = {(r["query_id"], r["doc_id"]): r["relevance"] for r in
                 derive_grades(s, "human-first", round_id="r1", judge="words").to_pylist()}
        assert len(mixed) == 12
        assert mixed[("1", "q1d000")] == 0  # the person's grade wins over the judge's 1
        assert mixed[("1", "q1d003")] == 1 and mixed[("2", "q2d001")] == 0  # the judge's
        only = derive_grades(s, "judge-only", round_id="r1", judge="words",
                             judge_grades={1: 1, 0: 0}).to_pylist()
        assert sum(r["relevance"] for r in only) == 4
        version = derive_qrels(s, "human-first", "mixed", round_id="r1", judge="words")
        assert version.n_rows == 12
        judges, params = s.one("v", "SELECT judges, params FROM qrels_versions WHERE name = 'mixed'")
        assert judges == ["words"] and json.loads(params)["judge"] == "words"
        with pytest.raises(StoreError, match="needs an automatic judge"):
            derive_grades(s, "judge-only", round_id="r1")
        with pytest.raises(StoreError, match="is a person"):
            derive_grades(s, "judge-only", round_id="r1", judge="ann")


@pytest.mark.slow
def test_a_judge_killed_mid_run_resumes_without_judging_a_pair_twice(tmp_path):
    log = tmp_path / "asked.log"
    path = build(tmp_path, docs_per_topic=50)
    pooling("judges", "add", path, "slow", "--backend", "command",
            "--param", f"command={program('--log', str(log), '--delay', '0.03')}")
    job = subprocess.Popen([sys.executable, "-m", "pooling", "judge", path, "--judge", "slow",
                            "--round", "r1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 45):
        time.sleep(0.05)
    os.killpg(job.pid, signal.SIGKILL)  # the job and its judge program, at once
    job.wait()
    asked_before = len(log.read_text().splitlines())
    assert 45 <= asked_before < 100
    with Store(path, read_only=True) as s:
        answered = s.one("calls", "SELECT count(*) FROM judge_calls")[0]
        stored = s.one("judged", "SELECT count(*) FROM judgments")[0]
    assert 32 <= stored == answered < 100  # whole batches committed, the rest lost
    done = pooling("judge", path, "--judge", "slow", "--round", "r1")
    assert f"{100 - stored} judged now" in done.stdout and f"{stored} judged before" in done.stdout
    asked_after = len(log.read_text().splitlines()) - asked_before
    assert asked_after == 100 - answered  # nothing answered and stored was asked again
    with Store(path, read_only=True) as s:
        assert s.one("n", "SELECT count(*), count(DISTINCT (query_id, doc_id)) FROM judgments") == (100, 100)


def test_the_cli_adds_judges_judges_and_derives_a_mixed_version(tmp_path):
    path = build(tmp_path)
    pooling("judges", "add", path, "words", "--backend", "command", "--param", f"command={program()}")
    assert "words" in pooling("judges", "list", path).stdout
    done = pooling("judge", path, "--judge", "words", "--round", "r1", "--limit", "5")
    assert "5 judged now" in done.stdout and "0 failed" in done.stdout
    refused = pooling("judge", path, "--judge", "words", check=False)
    assert refused.returncode == 1 and "exactly one of --round, --pairs or --qrels" in refused.stderr
    pooling("judge", path, "--judge", "words", "--round", "r1")
    derived = pooling("qrels", "derive", path, "--rule", "judge-only", "--judge", "words",
                      "--round", "r1", "--name", "by-words", "--judge-grades", "0=0,1=1")
    assert "12 judgments" in derived.stdout and "judge words" in derived.stdout
    bad = pooling("qrels", "derive", path, "--rule", "judge-only", "--judge", "words",
                  "--name", "x", "--judge-grades", "0:0", check=False)
    assert bad.returncode == 1 and "from=to" in bad.stderr


def test_a_document_without_text_is_a_failure_that_says_what_to_do_never_a_blind_grade(tmp_path):
    log = tmp_path / "asked.log"
    path = build(tmp_path)
    (tmp_path / "more.run").write_text("1 Q0 no-text 1 5 B\n")
    with Store(path) as s:
        s.import_runs([tmp_path / "more.run"])
        add_judge(s, "words", "command", {"command": program("--log", str(log))})
        report = judge_pairs(s, "words", [("1", "no-text"), ("1", "q1d000")])
        assert (report.judged, report.failed) == (1, 1)
        assert "import the documents" in report.failures[0]
        row = s.one("call", "SELECT status, error FROM judge_calls WHERE doc_id = 'no-text'")
        assert row[0] == "failed" and "no text" in row[1]
    assert log.read_text().split() == ["1", "q1d000"]


@pytest.mark.slow
def test_an_openai_judge_killed_mid_run_resumes_and_its_key_is_nowhere(tmp_path):
    import urllib.request

    key = "sk-secret-7d1f2e3a4b5c6d7e"
    server = subprocess.Popen([sys.executable, str(Path(__file__).with_name("chat_server.py"))],
                              stdout=subprocess.PIPE, text=True)
    try:
        base_url = f"http://127.0.0.1:{int(server.stdout.readline())}/v1"

        def asked() -> dict[str, int]:
            with urllib.request.urlopen(base_url + "/stats", timeout=5) as response:
                return json.loads(response.read())["requests"]

        path = build(tmp_path, docs_per_topic=40)
        prompt = tmp_path / "prompt.txt"
        prompt.write_text("Grade the passage for {query}.\ndoc_id={doc_id} delay=0.05\n{passage}\n")
        env = {**os.environ, "JUDGE_KEY": key, "COLUMNS": "200"}
        added = subprocess.run(
            [sys.executable, "-m", "pooling", "judges", "add", str(path), "llm", "--backend",
             "openai", "--prompt", str(prompt), "--param", f"base_url={base_url}", "--param",
             "model=test-model", "--param", "api_key_env=JUDGE_KEY", "--param", "concurrency=2"],
            capture_output=True, text=True, env=env, timeout=60)
        assert added.returncode == 0, added.stderr
        job = subprocess.Popen([sys.executable, "-m", "pooling", "judge", str(path), "--judge", "llm",
                                "--round", "r1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sum(asked().values()) < 40:
            time.sleep(0.05)
        job.kill()
        job.wait()
        before = sum(asked().values())
        with Store(path, read_only=True) as s:
            answered = s.one("calls", "SELECT count(*) FROM judge_calls WHERE status = 'ok'")[0]
        assert 32 <= answered < 80
        done = subprocess.run([sys.executable, "-m", "pooling", "judge", str(path), "--judge", "llm",
                               "--round", "r1"], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "0 failed" in done.stdout
        assert sum(asked().values()) - before == 80 - answered  # stored answers are not asked again
        with Store(path, read_only=True) as s:
            rows = s.con.execute("SELECT doc_id, grade FROM judgments WHERE assessor_id = 'llm'").fetchall()
        assert len(rows) == 80 == len({d for d, _ in rows})
        assert all(g == len(d) % 4 for d, g in rows)
        for text in (added.stdout, added.stderr, done.stdout, done.stderr):
            assert key not in text
        assert key.encode() not in path.read_bytes()
        assert key.encode() not in (path.with_name(path.name + ".wal").read_bytes()
                                    if path.with_name(path.name + ".wal").exists() else b"")
    finally:
        server.kill()
        server.wait()
        server.stdout.close()
