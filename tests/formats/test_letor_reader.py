"""LETOR/SVMlight: labels as qrels, features as columns, a run from one feature."""

from __future__ import annotations

import pytest

from pooling.errors import FormatError
from pooling.formats.letor import feature_run, read_letor
from pooling.formats.schemas import QRELS_SCHEMA, RUN_SCHEMA

LETOR4 = """\
2 qid:10032 1:0.056537 2:0.000000 3:0.666667 # docid = GX029-35-5894638 inc = 0.0119881192468859 prob = 0.139842
0 qid:10032 1:0.279152 2:0.000000 3:0.666667 # docid = GX030-77-6315042 inc = 1 prob = 0.341364
1 qid:10032 1:0.279152 2:1.000000 3:0.000000 # docid = GX140-98-13566007 inc = 1 prob = 0.0701303
0 qid:10033 1:0.5 3:0.25 # docid = GX000-00-0000000 inc = 1 prob = 0.0
"""


def test_labels_become_qrels_and_features_become_float_columns(make_file):
    data = read_letor(make_file("train.txt", LETOR4))
    assert data.qrels.schema == QRELS_SCHEMA
    assert data.qrels.to_pylist()[0] == {
        "query_id": "10032",
        "doc_id": "GX029-35-5894638",
        "relevance": 2,
    }
    assert data.feature_ids == ["1", "2", "3"]
    assert data.features.column_names == ["query_id", "doc_id", "1", "2", "3"]
    assert data.features.column("2").to_pylist() == [0.0, 0.0, 1.0, 0.0]  # absent feature is 0.0


def test_a_plain_comment_is_the_doc_id(make_file):
    data = read_letor(make_file("t.txt", "1 qid:1 1:0.5 # D7\n"))
    assert data.qrels.column("doc_id").to_pylist() == ["D7"]


def test_lines_without_a_comment_are_numbered_within_their_query(make_file):
    data = read_letor(make_file("mslr.txt", "0 qid:1 1:3\n1 qid:2 1:3\n2 qid:1 1:3\n"))
    assert data.qrels.column("doc_id").to_pylist() == ["1-1", "2-1", "1-2"]


def test_feature_run_ranks_by_score_then_doc_id_descending(make_file):
    data = read_letor(make_file("train.txt", LETOR4))
    run = feature_run(data, 1)
    assert run.schema == RUN_SCHEMA
    assert run.to_pylist() == [
        {
            "query_id": "10032",
            "doc_id": "GX140-98-13566007",
            "rank": 1,
            "score": 0.279152,
            "tag": "feature_1",
        },
        {
            "query_id": "10032",
            "doc_id": "GX030-77-6315042",
            "rank": 2,
            "score": 0.279152,
            "tag": "feature_1",
        },
        {
            "query_id": "10032",
            "doc_id": "GX029-35-5894638",
            "rank": 3,
            "score": 0.056537,
            "tag": "feature_1",
        },
        {
            "query_id": "10033",
            "doc_id": "GX000-00-0000000",
            "rank": 1,
            "score": 0.5,
            "tag": "feature_1",
        },
    ]
    assert set(feature_run(data, "3", tag="tf").column("tag").to_pylist()) == {"tf"}


def test_feature_run_of_an_unknown_feature_names_the_known_ones(make_file):
    data = read_letor(make_file("train.txt", LETOR4))
    with pytest.raises(
        FormatError, match="no feature 9\nChoose one of the file's features: 1, 2, 3"
    ):
        feature_run(data, 9)


def test_every_bad_line_is_reported_with_its_line(make_file):
    path = make_file(
        "bad.txt",
        """\
        1 qid:1 1:0.5 # D1
        x qid:1 1:0.5 # D2
        1 1:0.5 # D3
        1 qid:1 0:1 2:abc # D4
        1 qid:1 1:1 1:2 # D5
        0 qid:1 1:0.1 # D1
        """,
    )
    with pytest.raises(FormatError) as caught:
        read_letor(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:2: label should be an integer, found 'x'",
        f"{path}:3: expected qid:<id> after the label, found '1:0.5'",
        f"{path}:4: expected feature:value with a positive integer feature, found '0:1'",
        f"{path}:4: expected feature:value with a positive integer feature, found '2:abc'",
        f"{path}:5: feature 1 given twice",
        f"{path}:6: duplicate document 'D1' for qid 1 (first at line 1)",
    ]


def test_an_empty_letor_file_is_a_problem(make_file):
    with pytest.raises(FormatError, match="file is empty"):
        read_letor(make_file("e.txt", "# only a comment\n"))
