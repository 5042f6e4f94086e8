"""Subtopic qrels (ndeval's `query_id subtopic doc_id relevance`): reading, its errors,
writing back, and the plain qrels derived from it."""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow as pa
import pytest

from pooling.errors import FormatError
from pooling.formats.subtopic_qrels import (
    plain_qrels,
    read_subtopic_qrels,
    subtopic_qrels_table,
    write_subtopic_qrels,
)

TEXT = "1 1 a 1\n1 2 a 2\n1 2 b 0\n1 3 c -1\n2 1 d 0\n"


def test_reading_gives_one_row_a_judgment_with_its_line(tmp_path: Path):
    path = tmp_path / "q.txt"
    path.write_text(TEXT)
    table = read_subtopic_qrels(path)
    assert table.column_names == ["query_id", "subtopic", "doc_id", "relevance", "line"]
    assert table.column("relevance").to_pylist() == [1, 2, 0, -1, 0]
    assert table.column("subtopic").to_pylist() == ["1", "2", "2", "3", "1"]
    assert table.column("line").to_pylist() == [1, 2, 3, 4, 5]


def test_a_gzipped_file_reads_as_the_plain_one(tmp_path: Path):
    (tmp_path / "q.txt").write_text(TEXT)
    (tmp_path / "q.txt.gz").write_bytes(gzip.compress(TEXT.encode()))
    assert read_subtopic_qrels(tmp_path / "q.txt.gz").equals(read_subtopic_qrels(tmp_path / "q.txt"))


@pytest.mark.parametrize(("text", "line", "says"), [
    ("1 1 a 1\n1 1 b\n", 2, "expected 4 fields"),
    ("1 1 a 1\n1 1 b 1 extra\n", 2, "expected 4 fields"),
    ("1 1 a 1\n1 1 b yes\n", 2, "integer"),
    ("1 1 a 1\n1 2 a 1\n1 1 a 0\n", 3, "judged again for subtopic '1' of query '1' (first at line 1)"),
])
def test_a_malformed_line_is_named_with_its_file_line_and_what_was_expected(
        tmp_path: Path, text, line, says):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(FormatError) as caught:
        read_subtopic_qrels(path)
    message = str(caught.value)
    assert f"bad.txt:{line}" in message and says in message
    assert "query_id subtopic doc_id relevance" in message or "keep one line" in message


def test_every_problem_of_a_file_is_reported_at_once(tmp_path: Path):
    path = tmp_path / "bad.txt"
    path.write_text("1 1 a\n1 1 b x\n1 1 c 1\n")
    with pytest.raises(FormatError) as caught:
        read_subtopic_qrels(path)
    assert {p.line for p in caught.value.problems} == {1, 2}


def test_an_empty_file_is_an_error(tmp_path: Path):
    path = tmp_path / "empty.txt"
    path.write_text("")
    with pytest.raises(FormatError, match="empty"):
        read_subtopic_qrels(path)


def test_writing_and_reading_back_gives_the_same_judgments(tmp_path: Path):
    path = tmp_path / "q.txt"
    path.write_text(TEXT)
    table = read_subtopic_qrels(path)
    write_subtopic_qrels(table, tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_text() == TEXT
    assert read_subtopic_qrels(tmp_path / "out.txt").equals(table)


def test_an_id_with_whitespace_cannot_be_written(tmp_path: Path):
    table = pa.table({"query_id": ["1"], "subtopic": ["a b"], "doc_id": ["d"], "relevance": [1]})
    with pytest.raises(FormatError, match="whitespace"):
        write_subtopic_qrels(table, tmp_path / "out.txt")


def test_a_documents_plain_grade_is_its_highest_over_the_subtopics(tmp_path: Path):
    path = tmp_path / "q.txt"
    path.write_text(TEXT)
    plain = plain_qrels(read_subtopic_qrels(path))
    assert plain.column_names == ["query_id", "doc_id", "relevance"]
    assert plain.to_pylist() == [
        {"query_id": "1", "doc_id": "a", "relevance": 2},
        {"query_id": "1", "doc_id": "b", "relevance": 0},
        {"query_id": "1", "doc_id": "c", "relevance": -1},
        {"query_id": "2", "doc_id": "d", "relevance": 0},
    ]


def test_a_table_in_memory_is_checked_like_a_file():
    with pytest.raises(FormatError, match="no column"):
        subtopic_qrels_table(pa.table({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}))
    twice = pa.table({"query_id": [1, 1], "subtopic": [1, 1], "doc_id": ["a", "a"],
                      "relevance": [1, 0]})
    with pytest.raises(FormatError, match="judged again"):
        subtopic_qrels_table(twice)
    ok = subtopic_qrels_table(pa.table({"query_id": [1], "subtopic": [2], "doc_id": ["a"],
                                        "relevance": [1]}))
    assert ok.column("query_id").to_pylist() == ["1"] and ok.column("subtopic").to_pylist() == ["2"]
