"""Every command that reads a file reports a damaged compressed one (gzip, bzip2, xz, zstd; cut
short or corrupt) in one line naming the file, with exit code 1: never "Aborted.", never an
"internal error". An EOFError that still escapes a command is an error saying the input
ended early, not click's abort."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pooling.judging.assessors import add_assessor, assign
from pooling.judging.rounds import create_round
from pooling.store import Store

zstandard = pytest.importorskip("zstandard")

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstd": lambda data: zstandard.ZstdCompressor(write_checksum=True).compress(data),
}
SUFFIX = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz", "zstd": ".zst"}
LINES = range(3000)
CONTENT = {
    "run": b"".join(b"%d Q0 d%d %d %d.5 t\n" % (i % 5, i, i, 9999 - i) for i in LINES),
    "qrels": b"".join(b"%d 0 d%d %d\n" % (i % 5, i, i % 2) for i in LINES),
    "topic_map": b"".join(b"w%d %d\n" % (i, i) for i in LINES),
    "zscores": b"".join(b"%d map 0.%d 0.1\n" % (i, i) for i in LINES),
    "prefs": b"".join(b"%d g s d%d %d\n" % (i % 5, i, i % 3) for i in LINES),
    "qrels_jg": b"".join(b"%d u%d d%d %d\n" % (i % 5, i % 2, i, i % 2) for i in LINES),
    "meta": b"file\trun_id\n" + b"".join(b"f%d\tr%d\n" % (i, i) for i in LINES),
    "topics": b"".join(b"<top>\n<num> Number: %d\n<title> t %d\n</top>\n" % (i, i) for i in LINES),
    "docs": b"".join(b"<DOC>\n<DOCNO> d%d </DOCNO>\n<TEXT>x %d</TEXT>\n</DOC>\n" % (i, i)
                     for i in LINES),
    "letor": b"".join(b"%d qid:%d 1:0.5 # docid = d%d\n" % (i % 3, i % 5, i) for i in LINES),
    "batch": b"query_id,doc_id,grade\n" + b"".join(b"1,d%d,1\n" % i for i in LINES),
}
# command -> (its arguments, with BAD where the damaged file goes; what that file holds)
COMMANDS: dict[str, tuple[list[str], str]] = {
    "eval (run)": (["eval", "{qrels}", "BAD"], "run"),
    "eval (qrels)": (["eval", "BAD", "{run}"], "qrels"),
    "eval --topic-map": (["eval", "{qrels}", "--topic-map", "BAD", "{run}"], "topic_map"),
    "eval -Z": (["eval", "-Z", "BAD", "{qrels}", "{run}"], "zscores"),
    "eval -R prefs": (["eval", "-R", "prefs", "BAD", "{run}"], "prefs"),
    "eval -R qrels_prefs": (["eval", "-R", "qrels_prefs", "BAD", "{run}"], "qrels"),
    "eval -R qrels_jg": (["eval", "-R", "qrels_jg", "BAD", "{run}"], "qrels_jg"),
    "curve": (["curve", "{qrels}", "BAD"], "run"),
    "simulate": (["simulate", "{qrels}", "BAD", "-s", "depth", "-b", "5"], "run"),
    "import runs": (["import", "runs", "{store}", "BAD"], "run"),
    "import runs --name": (["import", "runs", "{store}", "--name", "x", "BAD"], "run"),
    "import runs --meta": (["import", "runs", "{store}", "--meta", "BAD", "{run}"], "meta"),
    "import qrels": (["import", "qrels", "{store}", "BAD"], "qrels"),
    "import topics": (["import", "topics", "{store}", "BAD"], "topics"),
    "import docs": (["import", "docs", "{store}", "BAD"], "docs"),
    "import letor": (["import", "letor", "{store}", "BAD"], "letor"),
    "batch import": (["batch", "import", "{store}", "--round", "r1", "--assessor", "ann", "BAD"],
                     "batch"),
}


def _damaged(data: bytes, damage: str) -> bytes:
    if damage == "truncated":
        return data[: len(data) * 2 // 3]
    bad = bytearray(data)
    for i in range(len(bad) // 2, len(bad) // 2 + 16):
        bad[i] ^= 0x55
    return bytes(bad)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("damaged-cli")
    (d / "run.txt").write_bytes(b"".join(CONTENT["run"].splitlines(True)[:20]))
    (d / "qrels.txt").write_bytes(b"".join(CONTENT["qrels"].splitlines(True)[:20]))
    with Store.create(d / "store.duckdb") as s:
        s.import_runs([d / "run.txt"])
        create_round(s, "r1", "depth", strategy_params={"depth": 2})
        add_assessor(s, "ann")
        assign(s, "r1", ["ann"])
    for kind, compress in COMPRESS.items():
        for fmt, data in CONTENT.items():
            packed = compress(data)
            for damage in ("truncated", "corrupt"):
                (d / f"{fmt}.{damage}{SUFFIX[kind]}").write_bytes(_damaged(packed, damage))
    return d


def run_cli(args: list[str], monkeypatch, capsys) -> tuple[int, str]:
    """`pooling ARGS` in this process: (exit code, stderr). A command with nothing to clean
    up ends with `os._exit` (tests/test_cli_exit.py), which here raises SystemExit instead."""
    from pooling.cli import main
    from pooling.cli.app import state

    def exit_here(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(sys, "argv", ["pooling", *args])
    monkeypatch.setattr(state, "fast_exit", False)
    monkeypatch.setattr(os, "_exit", exit_here)
    monkeypatch.setenv("COLUMNS", "400")
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main()
    return int(done.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
@pytest.mark.parametrize("kind", list(COMPRESS))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_damaged_compressed_input_is_named_in_one_line(command, kind, damage, work,
                                                          monkeypatch, capsys):
    template, fmt = COMMANDS[command]
    bad = work / f"{fmt}.{damage}{SUFFIX[kind]}"
    fill = {"{qrels}": work / "qrels.txt", "{run}": work / "run.txt",
            "{store}": work / "store.duckdb", "BAD": bad}
    code, err = run_cli([str(fill.get(a, a)) for a in template], monkeypatch, capsys)
    lines = err.strip().splitlines()
    assert code == 1, err
    assert len(lines) == 1, err
    assert "Aborted" not in err and "internal error" not in err
    assert re.fullmatch(rf"Error: {re.escape(str(bad))}: (truncated {kind} stream after \d+ lines"
                        rf"|corrupt {kind} data)[ ;].*", lines[0]), lines[0]


def test_an_eof_error_out_of_a_command_is_an_error_not_an_abort(work, monkeypatch, capsys):
    import pooling.evaluation.trec_input as trec_input

    def ended(*_args, **_kwargs):
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")

    monkeypatch.setattr(trec_input, "load_qrels", ended)
    monkeypatch.setattr("pooling.evaluation.inputs.load_qrels", ended)
    code, err = run_cli(["eval", str(work / "qrels.txt"), str(work / "run.txt")], monkeypatch,
                        capsys)
    assert code == 1
    assert "Aborted" not in err
    assert err.startswith("Error: input ended in the middle of the data (Compressed file ended")
