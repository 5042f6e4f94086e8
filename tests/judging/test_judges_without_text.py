"""Judges on a collection whose corpus is licensed (the store holds no document text): a
command judge declared with needs=ids gets topic and document ids only and judges every pair;
a judge that needs text fails each pair, and `pooling judge` then exits 1 with the count."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.errors import PoolingError
from pooling.judges.model_judges import add_judge, judge_round
from pooling.judging.rounds import create_round
from pooling.store import Store

# Reads its documents from its own copy of the corpus, logs each request's keys.
IDS_JUDGE = '''
import json, sys
corpus = json.load(open(sys.argv[1]))
log = open(sys.argv[2], "a")
for line in sys.stdin:
    request = json.loads(line)
    log.write(json.dumps(request) + "\\n")
    log.flush()
    grade = int("turbine" in corpus[request["doc_id"]])
    print(json.dumps({"grade": grade}), flush=True)
'''


def pooling(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def licensed(tmp_path) -> tuple[Path, str, Path]:
    """A store with topics, a run of 4 documents per topic and round r1 pooling them, but no
    document text (the corpus is licensed); the judge program and the log it writes."""
    corpus = {f"q{q}d{i}": ("wind turbine" if i % 2 else "solar") for q in (1, 2) for i in range(4)}
    (tmp_path / "corpus.json").write_text(json.dumps(corpus))
    (tmp_path / "judge.py").write_text(IDS_JUDGE)
    (tmp_path / "a.run").write_text("".join(f"{d[1]} Q0 {d} {i + 1} {10 - i} A\n"
                                            for i, d in enumerate(corpus)))
    (tmp_path / "topics.tsv").write_text("1\twind turbines\n2\twind power\n")
    path = tmp_path / "c.duckdb"
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run"])
        s.import_topics(tmp_path / "topics.tsv")
        create_round(s, "r1", "depth", strategy_params={"depth": 10}, grades=[0, 1])
    log = tmp_path / "asked.jsonl"
    command = shlex.join([sys.executable, str(tmp_path / "judge.py"),
                          str(tmp_path / "corpus.json"), str(log)])
    return path, command, log


def test_a_judge_that_needs_ids_only_gets_ids_and_judges_every_pair(licensed):
    path, command, log = licensed
    with Store(path) as s:
        judge = add_judge(s, "reader", "command", {"command": command, "needs": "ids"})
        assert judge.params["needs"] == "ids" and not judge.needs_text
        report = judge_round(s, "reader", "r1")
        grades = dict(((q, d), g) for q, d, g in s.con.execute(
            "SELECT query_id, doc_id, grade FROM judgments WHERE assessor_id = 'reader'").fetchall())
    assert (report.judged, report.failed) == (8, 0)
    assert grades[("1", "q1d1")] == 1 and grades[("1", "q1d0")] == 0
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(requests) == 8
    assert all(set(r) == {"query_id", "doc_id"} for r in requests)


def test_a_judge_that_needs_text_fails_every_pair_and_the_command_exits_1_with_the_count(licensed):
    path, command, log = licensed
    added = pooling("judges", "add", path, "texts", "--backend", "command", "--param",
                    f"command={command}")
    assert added.returncode == 0, added.stderr
    done = pooling("judge", path, "--judge", "texts", "--round", "r1")
    assert done.returncode == 1
    assert "0 judged now" in done.stdout and "8 failed" in done.stdout
    assert "Error: 8 call(s) gave no grade (texts 8)" in done.stderr
    assert "add a judge with the parameter needs=ids" in done.stderr
    assert not log.exists()  # never asked blind


def test_a_jury_where_calls_failed_exits_1_with_the_count(licensed):
    path, command, _ = licensed
    for name, needs in (("texts", "text"), ("reader", "ids")):
        added = pooling("judges", "add", path, name, "--backend", "command", "--param",
                        f"command={command}", "--param", f"needs={needs}")
        assert added.returncode == 0, added.stderr
    done = pooling("judge", path, "--judge", "texts", "--judge", "reader", "--round", "r1")
    assert done.returncode == 1
    assert "8 failed" in done.stdout
    assert "Error: 8 call(s) gave no grade (texts 8)" in done.stderr


def test_a_judge_run_without_failures_exits_0(licensed):
    path, command, _ = licensed
    pooling("judges", "add", path, "reader", "--backend", "command", "--param",
            f"command={command}", "--param", "needs=ids")
    done = pooling("judge", path, "--judge", "reader", "--round", "r1")
    assert done.returncode == 0, done.stderr
    assert "8 judged now" in done.stdout and "0 failed" in done.stdout


def test_needs_takes_text_or_ids_only(licensed):
    path, command, _ = licensed
    with Store(path) as s, pytest.raises(PoolingError, match="'text' .* or 'ids' .*got 'docs'"):
        add_judge(s, "reader", "command", {"command": command, "needs": "docs"})
