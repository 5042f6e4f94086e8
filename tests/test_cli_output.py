"""What the command line writes to pipes and files: whole lines, whatever $COLUMNS says.

Every command runs in a subprocess with stdout and stderr pipes, as a script or `| less`
sees them; a long path must come out whole on one line, in messages and in tables.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from pooling.terminal.console import Console

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n"
RUN = "q1 Q0 a 1 2 CUNI_en_run1\nq1 Q0 b 2 1 CUNI_en_run1\nq2 Q0 c 1 1 CUNI_en_run1\n"


def pooling(*args: object, columns: str | None) -> subprocess.CompletedProcess[str]:
    """The real CLI with stdout and stderr pipes; COLUMNS unset (None) or set."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE")}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, env=env, check=False)


@pytest.fixture
def long_dir(tmp_path: Path) -> Path:
    """A directory whose path alone is longer than 80 columns."""
    d = tmp_path / "campaign-2024-submissions-received-by-the-organisers" / "after-the-deadline-extension"
    d.mkdir(parents=True)
    assert len(str(d)) > 100
    return d


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


@pytest.mark.parametrize("columns", [None, "80"])
def test_messages_and_tables_keep_a_long_path_on_one_line(long_dir: Path, tmp_path: Path, columns):
    run = long_dir / "CUNI_en.run1.txt"
    run.write_text(RUN)
    store = tmp_path / "s.duckdb"
    assert pooling("init", store, columns=columns).returncode == 0
    imported = pooling("import", "runs", store, run, columns=columns)
    assert imported.returncode == 0, imported.stderr
    assert lines_with(imported.stdout, str(run)), imported.stdout  # the message line
    info = pooling("info", store, columns=columns)
    assert info.returncode == 0, info.stderr
    rows = lines_with(info.stdout, "CUNI_en_run1 ")  # the run's row in the runs table
    assert len(rows) == 1 and run.name in rows[0], info.stdout  # its source, not cut in two


@pytest.mark.parametrize("columns", [None, "80"])
def test_notes_and_errors_keep_a_long_path_on_one_line(long_dir: Path, columns):
    qrels = long_dir / "qrels.robust2004-and-2005-merged-official-version.txt"
    qrels.write_text(QRELS.replace("q", ""))  # topics 1 and 2, the run's q1 and q2
    run = long_dir / "CUNI_en.run1.txt"
    run.write_text(RUN)
    topic_map = long_dir / "topics.map"
    topic_map.write_text("1 q1\n2 q2\n")
    noted = pooling("eval", "-m", "map", "--topic-map", topic_map, qrels, run, columns=columns)
    assert noted.returncode == 0, noted.stderr
    assert lines_with(noted.stderr, f"{qrels}: topic map changed"), noted.stderr
    missing = long_dir / "CUNI_en.run2.txt"
    failed = pooling("eval", "-m", "map", qrels, missing, columns=columns)
    assert failed.returncode == 1 and failed.stdout == ""
    assert lines_with(failed.stderr, str(missing)), failed.stderr
    usage = pooling("eval", "--format", "x" * 120, qrels, run, columns=columns)
    assert usage.returncode == 2
    assert lines_with(usage.stderr, "x" * 120), usage.stderr


def test_eval_warnings_keep_a_long_run_name_on_one_line(long_dir: Path):
    qrels = long_dir / "qrels.txt"
    qrels.write_text(QRELS)
    name = "CUNI_en_run1_" + "with_a_long_tag_" * 5
    run = long_dir / "run.txt"
    run.write_text(RUN.replace("CUNI_en_run1", name).replace("q2 Q0 c 1 1", "q9 Q0 c 1 1"))
    done = pooling("eval", "-c", "-m", "map", qrels, run, columns="80")
    assert done.returncode == 0, done.stderr
    assert lines_with(done.stderr, f"run {name} "), done.stderr


def test_a_console_off_a_terminal_prints_a_table_at_its_natural_width(tmp_path: Path, monkeypatch):
    from rich.table import Table

    monkeypatch.setenv("COLUMNS", "80")
    cell = "/data/" + "very-long-directory-name/" * 8 + "CUNI_en.run1.gz"
    table = Table("run_id", "what")
    table.add_row("CUNI_en_run1", cell)
    with open(tmp_path / "out.txt", "w") as fh:
        Console(file=fh).print(table)
    text = (tmp_path / "out.txt").read_text()
    assert lines_with(text, cell)
    assert len(set(map(len, text.splitlines()))) == 1  # the box drawn around it stays whole


@pytest.mark.parametrize(("doc_id", "drawn"), [("clueweb12-0000tw-00-00000-and-more", True),
                                               ("clueweb12-" + "x" * 70, False)])
def test_a_console_on_a_terminal_keeps_id_columns_whole(doc_id, drawn):
    """The id stays whole: beside a wrapped description when it fits the width, else in a
    block of its own (a table cannot be drawn narrower than its id)."""
    from rich.table import Table

    table = Table("doc_id", "what")
    table.add_row(doc_id, "a description long enough that it has to wrap in a narrow terminal " * 2)
    with open(os.devnull, "w") as sink:
        console = Console(width=60, force_terminal=True, record=True, file=sink)
        console.print(table)
    text = console.export_text()
    assert lines_with(text, doc_id)  # whole
    if drawn:
        assert len(lines_with(text, "│")) > 2  # while the description wraps
        assert all(len(line) <= 60 for line in text.splitlines())
    else:
        assert lines_with(text, f"doc_id {doc_id}") and lines_with(text, "one block per row")


def test_version_prints_the_installed_package_version():
    done = pooling("--version", columns=None)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"pooling {version('pooling')}\n"
    assert re.fullmatch(r"pooling \d+\.\d+\.\d+\S*\n", done.stdout)
