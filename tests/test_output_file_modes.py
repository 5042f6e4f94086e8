"""Every file a command writes gets the mode any new file of the user gets (0644 under umask
022), not the 0600 of a temporary file: outputs are shared with a group, served, published.

Each writer runs as the CLI runs it (in this process, under a set umask), and the test looks
at the mode of what it wrote; the secrets `pooling serve` writes are pinned 0600 elsewhere.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from pooling.output_files import write_atomically, write_text

QRELS = "1 0 d1 2\n1 0 d2 0\n1 0 d3 1\n2 0 d1 1\n2 0 d4 0\n2 0 d5 1\n"
OTHER_QRELS = "1 0 d1 1\n1 0 d2 1\n1 0 d3 0\n2 0 d1 1\n2 0 d4 0\n2 0 d5 0\n"
RUNS = {
    "a.run": "1 Q0 d1 1 3.0 sysA\n1 Q0 d3 2 2.0 sysA\n1 Q0 d9 3 1.0 sysA\n"
             "2 Q0 d4 1 1.5 sysA\n2 Q0 d5 2 1.2 sysA\n",
    "b.run": "1 Q0 d2 1 3.0 sysB\n1 Q0 d1 2 2.0 sysB\n2 Q0 d1 1 1.5 sysB\n2 Q0 d4 2 1.0 sysB\n",
}


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def cli(*args: object) -> None:
    """`pooling ARGS` in this process (the Typer app itself: no exit at the end)."""
    from pooling.cli.app import app

    app([str(a) for a in args], standalone_mode=False)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def campaign(tmp_path: Path, umask_022) -> Path:
    """A store with two runs, two qrels versions and a judging round; its input files beside."""
    (tmp_path / "topics.tsv").write_text("1\tfirst\n2\tsecond\n")
    (tmp_path / "truth.qrels").write_text(QRELS)
    (tmp_path / "other.qrels").write_text(OTHER_QRELS)
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    store = tmp_path / "c.duckdb"
    cli("init", store)
    cli("import", "topics", store, tmp_path / "topics.tsv")
    cli("import", "runs", store, tmp_path / "a.run", tmp_path / "b.run")
    cli("import", "qrels", store, tmp_path / "truth.qrels", "--name", "truth")
    cli("import", "qrels", store, tmp_path / "other.qrels", "--name", "other")
    cli("pool", store, "--round", "r1", "--strategy", "depth", "--depth", "2")
    cli("assessors", "add", store, "ann")
    cli("assign", store, "--round", "r1", "--assessors", "ann")
    return tmp_path


# Each writer: the arguments after `pooling`, with {d} the campaign's folder and {s} its store.
WRITERS = {
    "export run": ["export", "run", "{s}", "sysA", "-o", "{d}/out/sysA.run"],
    "export qrels": ["export", "qrels", "{s}", "--qrels", "truth", "-o", "{d}/out/truth.qrels"],
    "export pool": ["export", "pool", "{s}", "--round", "r1", "-o", "{d}/out/pool.tsv"],
    "export judgments": ["export", "judgments", "{s}", "-o", "{d}/out/judgments.csv"],
    "batch export": ["batch", "export", "{s}", "--round", "r1", "--assessor", "ann",
                     "-o", "{d}/out/batch.csv"],
    "eval csv": ["eval", "{d}/truth.qrels", "{d}/a.run", "{d}/b.run", "-m", "map",
                 "--format", "csv", "-o", "{d}/out/eval.csv"],
    "eval trec": ["eval", "{d}/truth.qrels", "{d}/a.run", "-o", "{d}/out/eval.txt"],
    "eval parquet": ["eval", "{d}/truth.qrels", "{d}/a.run", "-m", "map", "--format", "parquet",
                     "-o", "{d}/out/eval.parquet"],
    "curve": ["curve", "{d}/truth.qrels", "{d}/a.run", "-o", "{d}/out/curve.csv",
              "--plot", "{d}/out/curve.svg"],
    "simulate": ["simulate", "{d}/truth.qrels", "{d}/a.run", "{d}/b.run", "-s", "depth",
                 "-b", "2", "--format", "csv", "-o", "{d}/out/simulate.csv",
                 "--plot", "{d}/out/simulate.svg"],
    "evaluate csv": ["evaluate", "{s}", "-m", "map", "--format", "csv",
                     "-o", "{d}/out/evaluate.csv"],
    "evaluate parquet": ["evaluate", "{s}", "-m", "map", "--format", "parquet",
                         "-o", "{d}/out/evaluate.parquet"],
    "leaderboard": ["leaderboard", "{s}", "-m", "map", "--format", "md",
                    "-o", "{d}/out/leaderboard.md"],
    "agreement": ["agreement", "{s}", "--qrels", "truth", "--qrels", "other", "--format", "csv",
                  "-o", "{d}/out/agreement.csv"],
    "crowd quality": ["crowd", "quality", "{s}", "--round", "r1", "--gold", "truth",
                      "--format", "json", "-o", "{d}/out/quality.json"],
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_written_file_gets_the_mode_the_umask_gives(campaign, writer):
    out = campaign / "out"
    out.mkdir()
    fill = {"{d}": str(campaign), "{s}": str(campaign / "c.duckdb")}
    args = []
    for arg in WRITERS[writer]:
        for key, value in fill.items():
            arg = arg.replace(key, value)
        args.append(arg)
    cli(*args)
    written = sorted(out.iterdir())
    assert written, f"{writer} wrote nothing"
    assert {p.name: oct(mode(p)) for p in written} == {p.name: oct(0o644) for p in written}


@pytest.mark.parametrize("umask", [0o002, 0o022, 0o077])
def test_an_atomic_write_follows_the_umask_and_leaves_no_temporary_file(tmp_path, umask):
    old = os.umask(umask)
    try:
        path = write_text(tmp_path / "out.txt", "x\n")
    finally:
        os.umask(old)
    assert mode(path) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path):
    path = write_text(tmp_path / "out.txt", "old\n")

    def fail(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_atomically(path, fail)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_missing_folder_is_named_by_the_destination_not_the_temporary(tmp_path):
    target = tmp_path / "no-such-folder" / "out.csv"
    with pytest.raises(FileNotFoundError) as info:
        write_text(target, "x\n")
    assert info.value.filename == str(target)


def test_a_release_and_a_store_rebuilt_from_it_follow_the_umask(campaign):
    """A release is a folder to publish: every folder in it 0755, every file 0644 (a
    work directory made by mkdtemp would be 0700); the rebuilt store is 0644 too."""
    release = campaign / "release"
    cli("release", campaign / "c.duckdb", release, "--no-pool-bias")
    folders = [release, *(p for p in release.rglob("*") if p.is_dir())]
    files = [p for p in release.rglob("*") if p.is_file()]
    assert len(folders) > 3 and len(files) > 10
    assert {oct(mode(p)) for p in folders} == {oct(0o755)}
    assert {oct(mode(p)) for p in files} == {oct(0o644)}
    rebuilt = campaign / "rebuilt.duckdb"
    cli("import", "release", rebuilt, release)
    assert oct(mode(rebuilt)) == oct(0o644)
