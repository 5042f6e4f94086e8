"""Hostile inputs: a small compressed file that expands to a gigabyte is refused at its first
bad block, in bounded memory, by every reader; values that would overflow or ids that are no
text are refused at file:line.

Peak memory is measured in a child process of its own (`resource.getrusage(RUSAGE_CHILDREN)`
of a wrapper), with a generous bound: before the readers streamed, the same bombs took 2.3 to
13.4 GiB.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30
PEAK_MB = 500
_MEASURE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stdout.write(done.stderr)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def gzip_bomb(path: Path, head: bytes, filler: bytes, size: int = GIB) -> Path:
    """`head` then `filler` repeated to `size` bytes, as gzip members (one 16 MiB member
    compressed once and written again and again: a reader sees one gzip file)."""
    def member(data: bytes) -> bytes:
        packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return packer.compress(data) + packer.flush()

    piece = filler * ((16 << 20) // len(filler))
    packed = member(piece)
    with open(path, "wb") as out:
        if head:
            out.write(member(head))
        for _ in range(size // len(piece)):
            out.write(packed)
    return path


def many_bad_lines(path: Path, head: bytes) -> Path:
    """One valid line, then 1 GiB of short lines that are not what was expected."""
    return gzip_bomb(path, head, b"x\n")


def one_long_line(path: Path) -> Path:
    """One line of 1 GiB."""
    return gzip_bomb(path, b"", b"0")


def measured(*args: object, cwd: Path) -> tuple[int, str, float]:
    """(exit code, stderr, peak MB) of one `pooling` command run in a process of its own."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "pooling",
                           *map(str, args)], cwd=cwd, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200"})
    *stderr, last = done.stdout.splitlines()
    code, peak_kib = (int(v) for v in last.split())
    return code, "\n".join(stderr), peak_kib / 1024


def pooling(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200"})


@pytest.fixture
def store(tmp_path: Path) -> Path:
    assert pooling("init", "s.duckdb", cwd=tmp_path).returncode == 0
    (tmp_path / "ok.run").write_text("1 Q0 d1 1 1.0 r\n")
    (tmp_path / "ok.qrels").write_text("1 0 d1 1\n")
    return tmp_path / "s.duckdb"


BOMB_COMMANDS = {
    "import qrels": (["import", "qrels", "{store}", "{bomb}", "--format", "trec", "--name", "b"], b"1 0 d1 1\n"),
    "import sampled qrels": (["import", "qrels", "{store}", "{bomb}", "--format", "sampled",
                              "--name", "b"], b"1 0 d1 s 1\n"),
    "eval qrels": (["eval", "{bomb}", "ok.run"], b"1 0 d1 1\n"),
    "eval run": (["eval", "ok.qrels", "{bomb}"], b"1 Q0 d1 1 1.0 r\n"),
    "import runs": (["import", "runs", "{store}", "{bomb}"], b"1 Q0 d1 1 1.0 r\n"),
    "import topics": (["import", "topics", "{store}", "{bomb}", "--format", "jsonl"],
                      b'{"query_id": "1", "title": "t"}\n'),
    "import docs": (["import", "docs", "{store}", "{bomb}", "--format", "jsonl"],
                    b'{"doc_id": "d1", "text": "t"}\n'),
}


@pytest.mark.parametrize("command", list(BOMB_COMMANDS))
def test_a_gigabyte_of_bad_lines_in_a_small_gzip_is_refused_at_line_2_in_bounded_memory(
        store, command):
    args, head = BOMB_COMMANDS[command]
    bomb = many_bad_lines(store.parent / "bomb.gz", head)
    assert bomb.stat().st_size < 4 << 20
    code, stderr, peak = measured(*(a.format(store=store, bomb=bomb) for a in args),
                                  cwd=store.parent)
    assert code != 0
    assert f"{bomb}:2:" in stderr, stderr
    assert "Traceback" not in stderr
    assert peak < PEAK_MB, f"{command}: peak {peak:.0f} MB"


@pytest.mark.parametrize("command", list(BOMB_COMMANDS))
def test_a_gigabyte_long_line_in_a_small_gzip_is_refused_at_line_1_in_bounded_memory(
        store, command):
    args, _ = BOMB_COMMANDS[command]
    bomb = one_long_line(store.parent / "bomb.gz")
    code, stderr, peak = measured(*(a.format(store=store, bomb=bomb) for a in args),
                                  cwd=store.parent)
    assert code != 0
    assert f"{bomb}:1: line runs past" in stderr, stderr
    assert peak < PEAK_MB, f"{command}: peak {peak:.0f} MB"


def test_a_quarter_gigabyte_of_one_repeated_run_line_is_kept_once_in_bounded_memory(store):
    """`import runs --dedupe first` of a small gzip holding 16.8 million copies of one valid
    line: the run is imported with that line, every copy counted as dropped, holding only
    what it keeps (the rows were held whole before, about 750 MB); without --dedupe it is
    refused at line 2."""
    line = b"1 Q0 d1 1 1.0 r\n"
    bomb = gzip_bomb(store.parent / "same.run.gz", b"", line, size=256 << 20)
    copies = 256 << 20 >> 4
    code, stderr, peak = measured("import", "runs", store, bomb, cwd=store.parent)
    assert code != 0 and f"{bomb}:2: doc 'd1' repeated" in stderr, stderr
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"
    code, stderr, peak = measured("import", "runs", store, bomb, "--dedupe", "first",
                                  cwd=store.parent)
    assert code == 0, stderr
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT n_rows, duplicates_dropped FROM runs").fetchall() == [
            (1, copies - 1)]


@pytest.mark.parametrize(("command", "head", "filler"), [
    (["import", "topics", "{store}", "{bomb}", "--format", "trec-web"], b"<webtrack2009>\n", b"x\n"),
    (["import", "topics", "{store}", "{bomb}", "--format", "trec-web"], b"<webtrack2009>", b"0"),
    (["import", "docs", "{store}", "{bomb}", "--format", "trec"], b"<DOC>\n", b"x\n"),
], ids=["xml topics, many lines", "xml topics, one line", "sgml documents, one open <DOC>"])
def test_a_gigabyte_of_text_in_one_xml_file_or_document_is_refused_in_bounded_memory(
        store, command, head, filler):
    bomb = gzip_bomb(store.parent / "bomb.gz", head, filler)
    code, stderr, peak = measured(*(a.format(store=store, bomb=bomb) for a in command),
                                  cwd=store.parent)
    assert code != 0
    assert f"{bomb}:" in stderr and "runs past" in stderr, stderr
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"


def test_a_huge_grade_or_rank_is_refused_at_its_line_naming_the_64_bit_range(store):
    cwd = store.parent
    (cwd / "big.qrels").write_text("1 0 d1 1\n1 0 d2 99999999999999999999\n")
    (cwd / "big.run").write_text("1 Q0 d1 1 1.0 r\n1 Q0 d2 99999999999999999999 0.5 r\n")
    for args, where, column in ((["import", "qrels", store, "big.qrels"], "big.qrels:2", "relevance"),
                                (["import", "runs", store, "big.run"], "big.run:2", "rank")):
        done = pooling(*args, cwd=cwd)
        assert done.returncode == 1
        assert "internal error" not in done.stderr and "OverflowError" not in done.stderr
        assert (f"{where}: {column} must be an integer, found '99999999999999999999': beyond the "
                "64-bit integer range") in done.stderr


def test_ids_that_are_not_utf8_or_hold_control_characters_are_refused_at_their_line(store):
    cwd = store.parent
    (cwd / "bad.qrels").write_bytes(b"1 0 d1 1\n1 0 caf\xe9 1\n1 0 d\x002 1\n1 0 d\x013 0\n")
    done = pooling("import", "qrels", store, "bad.qrels", cwd=cwd)
    assert done.returncode == 1
    assert "bad.qrels:2: not valid UTF-8 (byte 0xe9 at column 8)" in done.stderr
    assert "bad.qrels:3: doc_id 'd\\x002' holds the control character U+0000" in done.stderr
    assert "bad.qrels:4: doc_id 'd\\x013' holds the control character U+0001" in done.stderr
    (cwd / "bad.run").write_bytes(b"1 Q0 d1 1 1.0 r\n1 Q0 caf\xe9 2 0.5 r\n")
    done = pooling("import", "runs", store, "bad.run", cwd=cwd)
    assert done.returncode == 1
    assert "bad.run:2: not valid UTF-8 (byte 0xe9 at column 9)" in done.stderr
    with_store = pooling("info", store, cwd=cwd).stdout
    assert "bad" not in with_store


def test_a_run_id_too_long_to_name_a_release_file_is_refused_at_import(store):
    cwd = store.parent
    tag = "r" * 300
    (cwd / "long.run").write_text(f"1 Q0 d1 1 1.0 {tag}\n")
    done = pooling("import", "runs", store, "long.run", cwd=cwd)
    assert done.returncode == 1
    assert "long.run: run id 'rrrr" in done.stderr
    assert "is 300 bytes long; a name is at most 200 bytes" in done.stderr
    assert tag not in pooling("info", store, cwd=cwd).stdout


@pytest.mark.parametrize(("name", "why"), [
    (" x", "starts or ends with whitespace"),
    ("", "is empty"),
    ("a\x01b", "holds the control character U+0001"),
])
def test_a_qrels_version_name_that_breaks_the_id_rule_is_refused_naming_the_option(
        store, name, why):
    done = pooling("import", "qrels", store, "ok.qrels", "--name", name, cwd=store.parent)
    assert done.returncode == 1
    assert "qrels version name (--name)" in done.stderr and why in done.stderr


def test_a_round_id_holding_a_control_character_is_refused(store):
    cwd = store.parent
    assert pooling("import", "runs", store, "ok.run", cwd=cwd).returncode == 0
    done = pooling("pool", store, "--round", "r\x01", "--strategy", "depth", "--depth", "5",
                   cwd=cwd)
    assert done.returncode == 1
    assert "the round name (--round) 'r\\x01' holds the control character U+0001" in done.stderr
