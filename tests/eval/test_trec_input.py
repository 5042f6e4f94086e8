"""Reading runs and qrels the way trec_eval 10.0 does.

The rules: docs/trec_eval-semantics.md#reading-runs-and-qrels.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pooling.errors import FormatError
from pooling.evaluation.trec_input import parse_qrels, parse_run, read_qrels, read_run


def test_run_extra_fields_comments_blank_lines_and_crlf_are_accepted():
    run = parse_run(
        b"# a comment\r\n"
        b"q1 Q0 d1 1 2.5 tagA extra junk\r\n"
        b"\r\n"
        b"   # indented comment\n"
        b"q1\tQ0\td2\t2\t1e2\ttagB\n"
    )
    assert run.table.column("doc_id").to_pylist() == ["d1", "d2"]
    assert run.table.column("score").to_pylist() == [2.5, 100.0]
    assert run.run_id == "tagB"  # the tag of the last data line


def test_run_scores_are_read_like_atof():
    run = parse_run(b"q Q0 a 1 2.50 t\nq Q0 b 2 2.5e0 t\nq Q0 c 3 -3 t\nq Q0 d 4 1.5abc t\n")
    assert run.table.column("score").to_pylist() == [2.5, 2.5, -3.0, 1.5]


def test_short_run_lines_are_reported_with_file_and_line_exit_2():
    with pytest.raises(FormatError) as err:
        parse_run(b"q Q0 a 1 2.5 t\nq Q0 b 2 2.5\n\nq Q0 c\n", "my.run")
    assert err.value.exit_code == 2
    assert "my.run:2" in str(err.value) and "my.run:4" in str(err.value)


def test_nan_scores_are_refused():
    with pytest.raises(FormatError, match="NaN"):
        parse_run(b"q Q0 a 1 nan t\n")


def test_clean_run_file_takes_the_fast_path_and_gives_the_same_table(tmp_path: Path):
    text = b"q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 2 tag\nq2 Q0 d1 1 -1e-3 last\n"
    path = tmp_path / "run"
    path.write_bytes(text)
    fast, slow = read_run(path), parse_run(text)
    assert fast.run_id == slow.run_id == "last"
    assert fast.table.column("score").to_pylist() == slow.table.column("score").to_pylist()
    assert fast.table.column("doc_id").to_pylist() == slow.table.column("doc_id").to_pylist()


def test_gzipped_run_is_read(tmp_path: Path):
    import gzip

    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress(b"q1 Q0 d1 1 2.5 tag\n"))
    assert read_run(path).table.num_rows == 1


def test_qrels_grades_are_read_like_atol():
    q = parse_qrels(b"q 0 a 1.7\nq 0 b +2\nq 0 c abc\nq 0 d -1\n")
    assert q.column("relevance").to_pylist() == [1, 2, 0, -1]


def test_qrels_need_exactly_four_fields_exit_2():
    with pytest.raises(FormatError) as err:
        parse_qrels(b"q 0 a 1\nq 0 b 1 extra\nq 0 c\n", "my.qrels")
    assert err.value.exit_code == 2
    assert "my.qrels:2" in str(err.value) and "my.qrels:3" in str(err.value)


def test_blank_line_in_qrels_is_an_error():
    with pytest.raises(FormatError, match="my.qrels:2"):
        parse_qrels(b"q 0 a 1\n\nq 0 b 1\n", "my.qrels")


def test_only_one_comment_line_is_skipped_before_each_judgment():
    q = parse_qrels(b"# one\nq 0 a 1\n# first\n# second is data\nq 0 b 0\n")
    assert q.column("query_id").to_pylist() == ["q", "#", "q"]
    assert q.column("doc_id").to_pylist() == ["a", "is", "b"]


def test_clean_qrels_file_reads_the_same_on_both_paths(tmp_path: Path):
    text = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d9 -1\n"
    path = tmp_path / "qrels"
    path.write_bytes(text)
    assert read_qrels(path).to_pylist() == parse_qrels(text).to_pylist()


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("piece", [1, 7, 64, 1000])
def test_a_run_streamed_in_small_pieces_is_the_whole_file(tmp_path: Path, monkeypatch, gzipped, piece):
    # Pieces are cut at newlines; a piece size below one line (1, 7) makes every cut a
    # "read on past the piece" case, and the last line has no final newline.
    import gzip

    from pooling.evaluation import trec_input

    lines = [f"q{i // 7} Q0 doc{i * 37 % 101} {i} {(i % 5) / 4} tag{i % 3}" for i in range(60)]
    text = ("\n".join(lines)).encode()
    path = tmp_path / "run"
    path.write_bytes(gzip.compress(text) if gzipped else text)
    monkeypatch.setattr(trec_input, "_PIECE", piece)
    pieces, shares = [], []
    run_id = trec_input.scan_run(path, lambda table, share: (pieces.append(table), shares.append(share)))
    slow = parse_run(text)
    assert run_id == slow.run_id == "tag2"
    assert piece >= 1000 or len(pieces) > 1
    assert shares == sorted(shares) and shares[-1] == 1.0 and 0 < shares[0]
    for column in ("query_id", "doc_id", "score"):
        got = [v for p in pieces for v in p.column(column).to_pylist()]
        want = slow.table.column(column).to_pylist()
        if column == "doc_id":  # the scan hands doc_ids over as bytes, as trec_eval reads them
            want = [d.encode() for d in want]
        assert got == want


def test_an_unclean_piece_late_in_the_file_sends_the_whole_run_to_the_strict_reader(
    tmp_path: Path, monkeypatch
):
    from pooling.evaluation import trec_input

    text = b"q1 Q0 d1 1 2.5 tag\n" * 50 + b"q1 Q0 d9 1 2.5\n"
    path = tmp_path / "run"
    path.write_bytes(text)
    monkeypatch.setattr(trec_input, "_PIECE", 100)
    seen = []
    assert trec_input.scan_run(path, lambda table, _: seen.append(table)) is None
    assert seen  # earlier pieces were handed over: the caller drops them
    with pytest.raises(FormatError, match="run:51"):
        read_run(path)


@pytest.mark.parametrize("space", [b"\t", b"\r", b"\v", b"\f"])
def test_a_tab_or_other_whitespace_inside_a_line_splits_fields_as_trec_eval_does(
    tmp_path: Path, space
):
    # Split on single spaces only, `d2<TAB>1 0.1 1.0 t` would read as doc "d2\t1" with
    # score 1.0; trec_eval reads doc d2, score 0.1 (its fields are split on any whitespace).
    from pooling import evaluate

    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n")
    run = tmp_path / "run"
    run.write_bytes(b"1 Q0 d2" + space + b"1 0.1 1.0 t\n1 Q0 d1 2 0.5 t\n")
    result = evaluate(tmp_path / "qrels", run, ["map"])
    assert result.runs[0].per_query["map"].tolist() == [1.0]


def test_a_clean_run_with_a_doc_id_that_is_not_utf8_is_refused_at_its_line(tmp_path: Path):
    # Ids are text (docs/trec_eval-semantics.md): a clean file, which the fast readers take,
    # is refused at the line as the strict reader and the qrels readers refuse it.
    from pooling import evaluate
    from pooling.errors import PoolingError

    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    run = tmp_path / "run"
    run.write_bytes(b"1 Q0 d1 1 1.0 t\n1 Q0 d\xff 2 1.0 t\n")
    with pytest.raises(PoolingError, match=rf"^{re.escape(str(run))}:2: not valid UTF-8"):
        evaluate(tmp_path / "qrels", run, ["map", "num_ret"])


def test_the_whole_run_read_from_a_clean_file_has_text_columns(tmp_path: Path):
    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 2.0 tag\nq2 Q0 d1 1 1.0 tag\n")
    table = read_run(path).table
    assert table.column("query_id").type == "string" and table.column("doc_id").type == "string"
    assert table.column("query_id").to_pylist() == ["q1", "q1", "q2"]


def test_a_comment_line_between_lines_of_one_topic_sends_the_run_to_the_strict_reader(
    tmp_path: Path,
):
    from pooling.evaluation import trec_input

    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 d1 1 2.5 tag\n# note Q0 d 1 1 t\nq1 Q0 d2 2 2.0 tag\n")
    assert trec_input.scan_run(path, lambda table, _: None) is None
    assert read_run(path).table.column("doc_id").to_pylist() == ["d1", "d2"]


def test_readers_opened_ahead_are_closed_when_an_earlier_run_fails(tmp_path: Path):
    import threading

    from pooling import evaluate
    from pooling.errors import EvaluationError

    (tmp_path / "qrels").write_text("1 0 d1 1\n2 0 d1 1\n")
    (tmp_path / "short").write_text("1 Q0 d1 1 1.0 t\n")  # topic 2 missing: an error
    (tmp_path / "full").write_text("1 Q0 d1 1 1.0 t\n2 Q0 d1 1 1.0 t\n")
    with pytest.raises(EvaluationError, match="2"):
        evaluate(tmp_path / "qrels", [tmp_path / "short", tmp_path / "full"], ["map"])
    assert not [t for t in threading.enumerate() if t.name == "run-reader"]
    both = evaluate(tmp_path / "qrels", [tmp_path / "full", tmp_path / "full"], ["map"])
    assert [r.summary["map"] for r in both.runs] == [1.0, 1.0]
