"""Every command that reads input files refuses a path that is not a readable regular file
(a directory, a device, a named pipe, a file it may not read) and a line too long to be a
run or qrels line: exit code 1 and one line on stderr naming the path, never a hang, a usage
error or a read without end."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pooling.judging.assessors import add_assessor, assign
from pooling.judging.rounds import create_round
from pooling.store import Store

REPO_ROOT = Path(__file__).resolve().parents[1]
LONG = 10_000_000  # bytes in one doc id

RUN = "1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n"
QRELS = "1 0 d1 1\n1 0 d2 0\n"
# command -> its arguments, with BAD where the path under test goes
COMMANDS = {
    "eval (run)": ["eval", "{qrels}", "BAD"],
    "eval (qrels)": ["eval", "BAD", "{run}"],
    "eval --topic-map": ["eval", "{qrels}", "--topic-map", "BAD", "{run}"],
    "curve": ["curve", "{qrels}", "BAD"],
    "simulate": ["simulate", "{qrels}", "BAD", "-s", "depth", "-b", "5"],
    "import runs": ["import", "runs", "{store}", "BAD"],
    "import runs --name": ["import", "runs", "{store}", "--name", "x", "BAD"],
    "import runs --meta": ["import", "runs", "{store}", "--meta", "BAD", "{run}"],
    "import qrels": ["import", "qrels", "{store}", "BAD"],
    "import topics": ["import", "topics", "{store}", "BAD"],
    "import docs": ["import", "docs", "{store}", "BAD"],
    "import letor": ["import", "letor", "{store}", "BAD"],
    "batch import": ["batch", "import", "{store}", "--round", "r1", "--assessor", "ann", "BAD"],
}
# Commands whose BAD input is read as TREC run or qrels lines, and which of the two.
LINE_READERS = {"eval (run)": "run", "eval (qrels)": "qrels", "curve": "run", "simulate": "run",
                "import runs": "run", "import runs --name": "run", "import qrels": "qrels"}


@pytest.fixture(scope="module")
def work():
    """Inputs for every command, one of them unreadable."""
    d = Path(tempfile.mkdtemp(prefix="pooling-inputs-"))
    (d / "run.txt").write_text(RUN)
    (d / "qrels.txt").write_text(QRELS)
    (d / "a_directory").mkdir()
    os.mkfifo(d / "a_fifo")
    (d / "unreadable.txt").write_text(RUN)
    (d / "unreadable.txt").chmod(0)
    (d / "long_run.txt").write_text(RUN.replace(" t\n", " long\n") + "1 Q0 " + "x" * LONG
                                    + " 3 0.5 long\n")  # a tag not in the store yet
    (d / "long_qrels.txt").write_text(QRELS + "1 0 " + "x" * LONG + " 1\n")
    store = d / "store.duckdb"
    with Store.create(store) as s:
        s.import_runs([d / "run.txt"])
        create_round(s, "r1", "depth", strategy_params={"depth": 2})
        add_assessor(s, "ann")
        assign(s, "r1", ["ann"])
    yield d
    shutil.rmtree(d)


def _args(command: str, work: Path, bad: Path) -> list[str]:
    fill = {"{qrels}": work / "qrels.txt", "{run}": work / "run.txt", "{store}": work / "store.duckdb"}
    return [str(bad) if a == "BAD" else str(fill.get(a, a)) for a in COMMANDS[command]]


def _pooling(args: list[str], *, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "pooling", *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO_ROOT, env={**os.environ, "COLUMNS": "400"})


def _assert_one_line_error(done: subprocess.CompletedProcess, path: Path, fragment: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1, done.stderr
    assert str(path) in lines[0] and fragment in lines[0], lines[0]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("kind", "fragment"), [
    ("a_directory", "is a directory, not a file"),
    ("/dev/zero", "is a character device, not a regular file"),
    ("a_fifo", "is a named pipe (FIFO), not a regular file"),
])
def test_an_input_that_is_not_a_regular_file_is_refused_in_one_line(command, kind, fragment, work):
    bad = Path(kind) if kind.startswith("/") else work / kind
    _assert_one_line_error(_pooling(_args(command, work, bad)), bad, fragment)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_input_the_user_may_not_read_is_refused_in_one_line(command, work):
    bad = work / "unreadable.txt"
    if os.geteuid() != 0:
        prefix: tuple[str, ...] = ()
    elif shutil.which("setpriv"):
        # root reads any file through two capabilities: run the command as root without them.
        # It stays the same user, so it still reads the clone wherever that sits (a private
        # directory included), and only the unreadable input is out of its reach.
        prefix = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search")
    else:
        pytest.skip("running as root, which may read any file, and setpriv is missing to "
                    "run the command without that power")
    assert stat.S_IMODE(bad.stat().st_mode) == 0
    _assert_one_line_error(_pooling(_args(command, work, bad), prefix=prefix), bad,
                           "permission denied")


@pytest.mark.parametrize("command", list(LINE_READERS))
def test_a_line_longer_than_a_mebibyte_is_refused_with_its_file_and_line(command, work):
    kind = LINE_READERS[command]
    bad = work / f"long_{kind}.txt"
    length = len((bad.read_bytes().splitlines())[2])
    done = _pooling(_args(command, work, bad))
    _assert_one_line_error(done, bad, f"{bad}:3: line is {length:,} bytes long; a {kind} line (")
    assert done.stderr.rstrip().endswith("is at most 1 MiB")
