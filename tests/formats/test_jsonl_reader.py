"""JSONL topics and documents: key aliases, other keys to extra, every bad line reported."""

from __future__ import annotations

import json

import pytest

from pooling.errors import FormatError
from pooling.formats.jsonl import read_jsonl_documents, read_jsonl_topics
from pooling.formats.schemas import DOCUMENTS_SCHEMA, TOPICS_SCHEMA


def test_topic_aliases_map_to_canonical_columns_and_other_keys_go_to_extra(make_file):
    path = make_file(
        "q.jsonl",
        """\
        {"query_id": "1", "title": "a", "description": "d", "narrative": "n"}
        {"qid": 2, "query": "b", "lang": "en"}
        {"_id": "3", "text": "c", "metadata": {"k": 1}}
        """,
    )
    table = read_jsonl_topics(path)
    assert table.schema == TOPICS_SCHEMA
    rows = table.to_pylist()
    assert rows[0] == {
        "query_id": "1",
        "title": "a",
        "description": "d",
        "narrative": "n",
        "extra": None,
    }
    assert rows[1]["query_id"] == "2" and rows[1]["title"] == "b"
    assert json.loads(rows[1]["extra"]) == {"lang": "en"}
    assert json.loads(rows[2]["extra"]) == {"metadata": {"k": 1}}


def test_the_first_alias_wins_and_the_others_are_kept_in_extra(make_file):
    row = read_jsonl_topics(
        make_file("q.jsonl", '{"id": "x", "qid": "7", "title": "t"}\n')
    ).to_pylist()[0]
    assert row["query_id"] == "7"
    assert json.loads(row["extra"]) == {"id": "x"}


def test_document_aliases_map_to_canonical_columns(make_file):
    path = make_file(
        "d.jsonl",
        """\
        {"docno": "D1", "title": "T", "contents": "body text", "url": "http://x", "date": "1991"}
        {"_id": "D2", "body": "b"}
        """,
    )
    table = read_jsonl_documents(path)
    assert table.schema == DOCUMENTS_SCHEMA
    assert table.to_pylist() == [
        {
            "doc_id": "D1",
            "title": "T",
            "text": "body text",
            "url": "http://x",
            "extra": '{"date":"1991"}',
        },
        {"doc_id": "D2", "title": None, "text": "b", "url": None, "extra": None},
    ]


def test_every_bad_line_is_reported_with_its_line(make_file):
    path = make_file(
        "d.jsonl",
        """\
        {"doc_id": "D1", "text": "ok"}
        {"doc_id": "D2", "text": "unterminated}
        ["not", "an", "object"]
        {"text": "no id"}
        {"doc_id": "D1", "text": "again"}
        {"doc_id": "D3", "content": "misnamed text key"}
        {"doc_id": 4.5, "text": "float id"}
        {"doc_id": "D5", "text": ["a list"]}
        """,
    )
    with pytest.raises(FormatError) as caught:
        read_jsonl_documents(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:2: invalid JSON (Unterminated string starting at: column 26)",
        f"{path}:3: expected a JSON object, found list",
        f"{path}:4: missing or empty doc_id: expected one of the keys doc_id, docno, docid, id, _id",
        f"{path}:5: duplicate doc_id 'D1' (first at line 1)",
        f"{path}:6: document D3 has no text: expected one of the keys title, text, contents, body",
        f"{path}:7: doc_id should be a string or an integer, found 4.5",
        f'{path}:8: text should be a string, found ["a list"]',
    ]
    assert '{"doc_id": "D1"' in str(caught.value)  # the hint


def test_a_topic_without_a_title_is_a_problem(make_file):
    path = make_file("q.jsonl", '{"query_id": "1", "description": "only a description"}\n')
    with pytest.raises(
        FormatError, match="topic 1 has no text: expected one of the keys title, query, text"
    ):
        read_jsonl_topics(path)


def test_an_empty_jsonl_file_is_a_problem(make_file):
    with pytest.raises(FormatError, match="file is empty: expected at least one topic"):
        read_jsonl_topics(make_file("q.jsonl", "\n"))
