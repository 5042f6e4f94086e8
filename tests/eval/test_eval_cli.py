"""`pooling eval` options and output formats, and `pooling measures`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pooling.cli.app import app
from pooling.errors import PoolingError
from pooling.measures import REGISTRY

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n"
RUN = "q1 Q0 a 1 2 r1\nq1 Q0 b 2 1 r1\nq2 Q0 c 1 1 r1\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_glued_short_options_work_like_trec_eval(files):
    qrels, run = files
    glued = invoke("eval", "-mP.1", "-mmap", "-l1", "-M1", qrels, run)
    spaced = invoke("eval", "-m", "P.1", "-m", "map", "-l", "1", "-M", "1", qrels, run)
    assert glued.exit_code == 0 and glued.output == spaced.output
    assert glued.output.splitlines()[0].split() == ["map", "all", "1.0000"]


def test_ir_measures_names_print_under_their_identity(files):
    out = invoke("eval", "-m", "nDCG@10", "-m", "P(rel=2)@1", *files).output
    # trec_eval table order: P before ndcg_cut
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == ["P(rel=2)@1", "ndcg_cut_10"]


def test_csv_and_json_hold_the_tidy_rows_with_all_for_the_summary(files):
    csv_out = invoke("eval", "-q", "-m", "map", "--format", "csv", *files).output.splitlines()
    assert csv_out[0] == '"run_id","query_id","measure","value"'
    assert '"r1","all","map",1' in csv_out
    rows = json.loads(invoke("eval", "-m", "map", "--format", "json", *files).output)
    assert rows == [{"run_id": "r1", "query_id": "all", "measure": "map", "value": 1.0}]


def test_parquet_goes_to_the_output_file(files, tmp_path: Path):
    out = tmp_path / "res.parquet"
    result = invoke("eval", "-q", "-m", "map", "--format", "parquet", "-o", str(out), *files)
    assert result.exit_code == 0
    table = pq.read_table(out)
    assert table.column_names == ["run_id", "query_id", "measure", "value"]
    assert table.num_rows == 3


def test_trec_output_to_a_file(files, tmp_path: Path):
    out = tmp_path / "res.txt"
    assert invoke("eval", "-m", "map", "-o", str(out), *files).exit_code == 0
    assert out.read_text() == "map                   \tall\t1.0000\n"


def test_complete_and_shared_topics_contradict(files, pooling_cli):
    proc = pooling_cli("eval", "-c", "--shared-topics", *files)
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"contradict" in proc.stderr


def test_unknown_measure_exits_1_with_a_pointer(files, pooling_cli):
    proc = pooling_cli("eval", "-m", "mapp", *files)
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"pooling measures" in proc.stderr


def test_malformed_run_exits_2_naming_file_and_line(files, tmp_path: Path, pooling_cli):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 2 r1\nq1 Q0 b\n")
    proc = pooling_cli("eval", files[0], str(bad))
    assert proc.returncode == 2 and proc.stdout == b""
    assert f"{bad}:2".encode() in proc.stderr


def test_measures_command_lists_every_measure():
    out = invoke("measures").output
    for spec in REGISTRY.values():
        assert (spec.name if spec.trec else spec.ir_name) in out


def test_a_missing_or_unreadable_file_is_named_with_nothing_on_stdout(files, tmp_path: Path, pooling_cli):
    qrels, run = files
    for args in ([qrels, str(tmp_path / "nope.run")], [str(tmp_path / "nope.qrels"), run],
                 [qrels, str(tmp_path)]):
        done = pooling_cli("eval", "-m", "map", *args)
        assert done.returncode == 1 and done.stdout == b""
        err = done.stderr.decode()
        assert "internal error" not in err
        assert Path(args[0] if "nope.qrels" in args[0] else args[1]).name in err


NOT_TEXT = {  # bytes no UTF-8 decoder takes: a stray byte, an overlong '/', a surrogate, past U+10FFFF
    "stray": b"\xff", "overlong": b"\xc0\xaf", "surrogate": b"\xed\xa0\x80", "too high": b"\xf4\x90\x80\x80",
}


@pytest.mark.parametrize("field", ["query_id", "doc_id", "tag"])
@pytest.mark.parametrize("bad", list(NOT_TEXT))
@pytest.mark.parametrize("path", ["kernel", "numpy", "strict", "gzip"])
def test_an_id_that_is_not_utf8_is_refused_at_its_line_on_every_reading_path(
        tmp_path, monkeypatch, field, bad, path):
    """The C kernel, the Arrow reader and the strict reader (a doubled space sends a file
    there) refuse the same line with the same words, as qrels and every store reader do: an
    id that is not text never reaches a measure (it is no id a qrels could name)."""
    import gzip

    bytes_of = NOT_TEXT[bad]
    fields = [b"q1", b"Q0", b"a", b"1", b"2", b"r1"]
    fields[{"query_id": 0, "doc_id": 2, "tag": 5}[field]] += bytes_of
    lines = [b"q1 Q0 b 2 1 r1", b" ".join(fields)] if field != "tag" else [
        b"q1 Q0 b 2 1 r1" + bytes_of, b" ".join(fields)]
    if path == "strict":
        lines[0] = lines[0].replace(b" ", b"  ", 1)
    data = b"\n".join(lines) + b"\n"
    run = tmp_path / ("run.gz" if path == "gzip" else "run")
    run.write_bytes(gzip.compress(data) if path == "gzip" else data)
    (tmp_path / "qrels").write_text(QRELS)
    monkeypatch.setenv("POOLING_KERNEL", "off" if path == "numpy" else "on")
    done = CliRunner().invoke(app, ["eval", "-q", "-m", "map", str(tmp_path / "qrels"), str(run)])
    # a library error (the command line prints it as one line, exit 2), never another one
    assert isinstance(done.exception, PoolingError), repr(done.exception)
    assert done.exception.exit_code == 2 and not done.output
    line = 1 if field == "tag" else 2
    assert str(done.exception).startswith(f"{run}:{line}: not valid UTF-8"), str(done.exception)


def test_ids_of_utf8_beyond_ascii_are_evaluated_as_their_bytes_on_every_path(tmp_path, monkeypatch):
    """Doc ids of two-, three- and four-byte characters are ids like any other, on every path."""
    docs = ["é1", "文2", "\U0001f600x", "b"]
    (tmp_path / "qrels").write_text("".join(f"q1 0 {d} {g}\n" for d, g in zip(docs, (1, 0, 2, 1), strict=True)))
    run = "".join(f"q1 Q0 {d} {i} {9 - i} rü\n" for i, d in enumerate(docs))
    outputs = set()
    for path in ("kernel", "numpy", "strict"):
        text = run.replace(" ", "  ", 1) if path == "strict" else run
        (tmp_path / "run").write_text(text, encoding="utf-8")
        monkeypatch.setenv("POOLING_KERNEL", "off" if path == "numpy" else "on")
        done = invoke("eval", "-q", "-m", "map", "-m", "num_rel_ret", str(tmp_path / "qrels"),
                      str(tmp_path / "run"))
        assert done.exit_code == 0, done.output
        outputs.add(done.output)
    [output] = outputs
    assert "num_rel_ret           \tall\t3" in output
