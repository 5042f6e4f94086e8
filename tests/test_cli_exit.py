"""How `pooling` ends. A command with nothing to clean up (`state.fast_exit`: files in, text
out) ends without tearing the interpreter down, on an error as on success: pyarrow's thread
pool, torn down at exit, now and then aborted the process, and `pooling eval`'s exit code 4
for a run missing a topic came out as 134 (SIGABRT) in about one run in eight. The process
test (tests/eval/test_golden_trec_eval.py) pins the code trec_eval users read; these pin the
path, which a flaky abort cannot."""

from __future__ import annotations

import os
import sys

import pytest

from pooling import cli
from pooling.cli.app import state


class Ended(BaseException):
    """`os._exit` was called (the test stands in for it, so the process goes on)."""


@pytest.fixture
def exits(monkeypatch):
    """The codes `os._exit` was called with; the global state restored after the test."""
    codes: list[int] = []

    def fake_exit(code: int) -> None:
        codes.append(code)
        raise Ended

    monkeypatch.setattr(os, "_exit", fake_exit)
    monkeypatch.setattr(state, "fast_exit", False)
    return codes


def run_main(monkeypatch, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", ["pooling", *args])
    cli.main()


def eval_files(tmp_path, monkeypatch, qrels: str, run: str) -> None:
    """`pooling eval -m map` of these qrels and run lines (files `q` and `r`), which ends by
    `os._exit` (the `exits` fixture stands in for it)."""
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    with pytest.raises(Ended):
        run_main(monkeypatch, "eval", "-m", "map", str(tmp_path / "q"), str(tmp_path / "r"))


def test_eval_on_a_run_missing_a_topic_ends_with_4_without_tearing_the_interpreter_down(
        tmp_path, monkeypatch, capsys, exits):
    eval_files(tmp_path, monkeypatch, "1 0 d1 1\n2 0 d2 1\n", "1 Q0 d1 1 1.0 tag\n")
    assert exits == [4]
    assert f"run {tmp_path / 'r'} has no lines for 1 qrels topic(s): 2." in capsys.readouterr().err


def test_eval_that_succeeds_ends_with_0_without_tearing_the_interpreter_down(
        tmp_path, monkeypatch, capsys, exits):
    eval_files(tmp_path, monkeypatch, "1 0 d1 1\n", "1 Q0 d1 1 1.0 tag\n")
    assert exits == [0]
    assert capsys.readouterr().out.split() == ["map", "all", "1.0000"]


def test_a_command_that_holds_a_store_ends_through_the_interpreters_teardown_on_an_error(
        tmp_path, monkeypatch, capsys, exits):
    (tmp_path / "there.duckdb").write_bytes(b"")
    with pytest.raises(SystemExit) as ended:
        run_main(monkeypatch, "init", str(tmp_path / "there.duckdb"))
    assert ended.value.code != 0 and exits == []
    assert "there.duckdb" in capsys.readouterr().err
