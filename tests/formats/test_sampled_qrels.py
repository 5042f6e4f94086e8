"""Sampled qrels files: read, written back unchanged, counted per stratum, errors located."""

from __future__ import annotations

from pathlib import Path

import pytest

from pooling.errors import FormatError
from pooling.formats.sampled_qrels import (
    is_sampled_qrels,
    looks_sampled,
    read_sampled_qrels,
    stratum_counts,
    write_sampled_qrels,
)

TEXT = "7 0 a 1 2\n7 0 b 1 0\n7 0 c 2 -1\n7 0 d 2 1\n7 0 e 2 -1\n8 0 a 1 -1\n"


def test_unsampled_pairs_keep_minus_one_and_strata_are_text(tmp_path: Path):
    path = tmp_path / "q"
    path.write_text(TEXT)
    table = read_sampled_qrels(path)
    assert table.column_names == ["query_id", "doc_id", "stratum", "relevance", "line"]
    assert table["relevance"].to_pylist() == [2, 0, -1, 1, -1, -1]
    assert table["stratum"].to_pylist() == ["1", "1", "2", "2", "2", "1"]


def test_a_written_table_reads_back_the_same(tmp_path: Path):
    path, again = tmp_path / "q", tmp_path / "q2"
    path.write_text(TEXT)
    table = read_sampled_qrels(path)
    write_sampled_qrels(table, again)
    assert read_sampled_qrels(again).drop_columns(["line"]).equals(table.drop_columns(["line"]))
    assert again.read_text() == "".join(sorted(TEXT.splitlines(keepends=True)))


def test_inclusion_probability_is_judged_over_pooled_per_topic_and_stratum(tmp_path: Path):
    path = tmp_path / "q"
    path.write_text(TEXT)
    counts = stratum_counts(read_sampled_qrels(path)).to_pylist()
    assert counts == [
        {"query_id": "7", "stratum": "1", "pooled": 2, "judged": 2, "inclusion_probability": 1.0},
        {"query_id": "7", "stratum": "2", "pooled": 3, "judged": 1,
         "inclusion_probability": 1 / 3},
        {"query_id": "8", "stratum": "1", "pooled": 1, "judged": 0, "inclusion_probability": 0.0},
    ]


def test_a_line_without_five_fields_is_named_with_its_file_and_line(tmp_path: Path):
    path = tmp_path / "bad.txt"
    path.write_text("7 0 a 1 2\n7 0 b 1\n")
    with pytest.raises(FormatError, match=r"bad.txt:2.*stratum relevance"):
        read_sampled_qrels(path)


def test_a_grade_below_minus_one_and_a_repeated_pair_are_refused(tmp_path: Path):
    path = tmp_path / "bad.txt"
    path.write_text("7 0 a 1 -2\n")
    with pytest.raises(FormatError, match=r"bad.txt:1: relevance -2 is below -1"):
        read_sampled_qrels(path)
    path.write_text("7 0 a 1 1\n7 0 a 2 0\n")
    with pytest.raises(FormatError, match=r"bad.txt:2.*first at line 1"):
        read_sampled_qrels(path)


def test_five_fields_mark_sampled_qrels_and_four_plain_qrels(tmp_path: Path):
    assert is_sampled_qrels(b"\n# a b c d e f\n1 0 d 1 -1\n")
    assert not is_sampled_qrels(b"1 0 d 1\n")
    plain = tmp_path / "q"
    plain.write_text("1 0 d 1\n")
    assert not looks_sampled(plain) and not looks_sampled("-")
