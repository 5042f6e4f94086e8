"""The `command` judge with real judge programs as subprocesses."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from pooling.judges.backends import JudgeError, Pair, backend

PROGRAM = Path(__file__).with_name("judge_program.py")
DOCS = ["d1", "dd2", "ddd3", "dddd4", "ddddd6", "dddddd7"]


def pairs(docs=DOCS) -> list[Pair]:
    return [Pair("q1", d, "wing flutter", "thin wings", None, "A study", f"text of {d}")
            for d in docs]


def run(tmp_path: Path, *options: str, timeout: float = 10, docs=DOCS):
    starts = tmp_path / "starts.txt"
    command = shlex.join([sys.executable, str(PROGRAM), "--starts", str(starts), *options])
    judge = backend("command", command=command, timeout=timeout)
    try:
        verdicts = list(judge.judge(pairs(docs)))
    finally:
        judge.close()
    started = len(starts.read_text().splitlines()) if starts.exists() else 0
    return verdicts, started


def test_a_well_behaved_program_grades_every_pair_in_order_started_once(tmp_path):
    verdicts, started = run(tmp_path)
    assert [v.doc_id for v in verdicts] == DOCS
    assert [v.grade for v in verdicts] == [len(d) % 4 for d in DOCS]
    assert [v.probability for v in verdicts] == [len(d) % 4 / 4 for d in DOCS]
    assert verdicts[0].answer == "wing flutter / text of d1"  # the request carried the texts
    assert all(v.status == "ok" and v.error is None for v in verdicts)
    assert started == 1


def test_the_program_is_kept_between_batches_and_stopped_on_close(tmp_path):
    starts = tmp_path / "starts.txt"
    judge = backend("command", command=shlex.join(
        [sys.executable, str(PROGRAM), "--starts", str(starts)]))
    assert [v.status for v in judge.judge(pairs()[:2])] == ["ok", "ok"]
    assert [v.status for v in judge.judge(pairs()[2:])] == ["ok"] * 4
    process = judge._process.popen
    judge.close()
    assert process.poll() == 0  # ended by closing its stdin, not killed
    assert len(starts.read_text().splitlines()) == 1


def test_a_crash_fails_its_pair_and_the_rest_go_to_a_restarted_program(tmp_path):
    verdicts, started = run(tmp_path, "--crash-on", "ddd3")
    by_doc = {v.doc_id: v for v in verdicts}
    crash = by_doc["ddd3"]
    assert crash.status == "failed"
    assert "judge_program.py" in crash.error and "exited with code 3" in crash.error
    assert "ValueError: cannot judge ddd3" in crash.error  # its last stderr line
    assert [by_doc[d].status for d in DOCS] == ["ok", "ok", "failed", "ok", "ok", "ok"]
    assert started == 2


def test_garbage_output_fails_its_pair_with_the_line_and_restarts(tmp_path):
    verdicts, started = run(tmp_path, "--garbage-on", "dd2")
    garbage = verdicts[1]
    assert (garbage.doc_id, garbage.status) == ("dd2", "failed")
    assert garbage.answer == "loading weights... 100%"
    assert "not a JSON object" in garbage.error and "stderr" in garbage.error
    assert [v.status for v in verdicts] == ["ok", "failed", "ok", "ok", "ok", "ok"]
    assert started == 2


def test_a_hanging_program_is_stopped_after_the_timeout(tmp_path):
    start = time.monotonic()
    verdicts, started = run(tmp_path, "--hang-on", "dd2", timeout=5)
    assert [v.status for v in verdicts] == ["ok", "failed", "ok", "ok", "ok", "ok"]
    assert "did not reply within 5 s" in verdicts[1].error
    assert started == 2
    assert time.monotonic() - start < 100  # the 120 s hang was cut short


def test_a_program_that_does_not_read_a_long_request_is_stopped_after_the_timeout(tmp_path):
    starts = tmp_path / "starts.txt"
    judge = backend("command", timeout=5, command=shlex.join(
        [sys.executable, str(PROGRAM), "--deaf", "--starts", str(starts)]))
    long = Pair("q1", "d1", "wing flutter", None, None, None, "flutter " * 200_000)
    start = time.monotonic()
    verdicts = list(judge.judge([long]))
    judge.close()
    assert verdicts[0].status == "failed"
    assert "did not read the request within 5 s" in verdicts[0].error
    assert time.monotonic() - start < 100  # the program sleeps 120 s before it reads


def test_a_program_that_breaks_twice_leaves_the_rest_failed_without_sending_them(tmp_path):
    verdicts, started = run(tmp_path, "--crash-on", "dd2", "--crash-on", "dddd4")
    assert [v.status for v in verdicts] == ["ok", "failed", "ok", "failed", "failed", "failed"]
    assert all("broke twice" in v.error and "not sent" in v.error for v in verdicts[4:])
    assert started == 2


@pytest.mark.parametrize(("option", "said"), [
    ("--wrong-type-on", "replied grade 'high', not a whole number"),
    ("--bad-probability-on", "replied probability 7, not a number in [0, 1]"),
])
def test_a_bad_reply_fails_only_its_pair_and_keeps_the_program(tmp_path, option, said):
    verdicts, started = run(tmp_path, option, "ddd3")
    assert [v.status for v in verdicts] == ["ok", "ok", "failed", "ok", "ok", "ok"]
    assert said in verdicts[2].error and verdicts[2].grade is None
    assert verdicts[2].answer.startswith("{")  # the reply as it came
    assert started == 1


def test_a_reply_for_another_pair_means_the_program_is_out_of_step(tmp_path):
    verdicts, started = run(tmp_path, "--other-doc-on", "dd2")
    assert verdicts[1].status == "failed" and "'someone-else'" in verdicts[1].error
    assert started == 2


def test_a_missing_program_is_refused_when_the_judge_is_made():
    with pytest.raises(JudgeError, match="'no-such-judge-program' was not found"):
        backend("command", command="no-such-judge-program --fast")
    with pytest.raises(JudgeError, match="check its quotes"):
        backend("command", command="python 'unclosed")
