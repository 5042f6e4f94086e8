"""The format registry: explicit names, sniffing by extension and content, clear failures."""

from __future__ import annotations

import pytest

from pooling.errors import FormatError
from pooling.formats import READERS, formats_of, read_documents, read_table, read_topics, reader_for

TREC_TOPIC = "<top>\n<num> Number: 1\n<title> bears\n</top>\n"
TREC_DOC = "<DOC>\n<DOCNO>D1</DOCNO>\n<TEXT>bears</TEXT>\n</DOC>\n"


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("topics.txt", TREC_TOPIC, "trec"),
        ("topics", TREC_TOPIC, "trec"),
        ("topics.jsonl", '{"qid": "1", "query": "bears"}\n', "jsonl"),
        ("topics.txt", '{"qid": "1", "query": "bears"}\n', "jsonl"),
        ("queries.tsv", "1\tbears\n", "tsv"),
        ("queries.txt", "1\tbears\n", "tsv"),
    ],
)
def test_topic_format_is_sniffed_from_extension_or_content(make_file, name, content, expected):
    path = make_file(name, content)
    assert reader_for("topics", path).name == expected
    assert read_topics(path).column("title").to_pylist() == ["bears"]


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("docs.txt.gz", TREC_DOC, "trec"),
        ("docs.jsonl.gz", '{"doc_id": "D1", "text": "bears"}\n', "jsonl"),
        ("docs.tsv", "D1\tbears\n", "tsv"),
    ],
)
def test_gzipped_documents_are_sniffed_through_the_compression(make_file, name, content, expected):
    path = make_file(name, content, gz=name.endswith(".gz"))
    assert reader_for("documents", path).name == expected
    assert read_documents(path).column("text").to_pylist() == ["bears"]


def test_a_given_format_overrides_sniffing(make_file):
    path = make_file("odd.jsonl", "1\tbears\n")
    assert read_topics(path, format="tsv").column("query_id").to_pylist() == ["1"]


def test_an_unknown_format_name_lists_the_known_ones(make_file):
    with pytest.raises(
        FormatError, match="unknown topics format 'csv'\nUse one of: trec, clef, ntcir, trec-web, jsonl, tsv, smart"
    ):
        read_topics(make_file("q.csv", "1,bears\n"), format="csv")


def test_content_that_matches_no_format_asks_for_one(make_file):
    with pytest.raises(FormatError, match="cannot tell the topics format"):
        read_topics(make_file("q.csv", "1,bears\n"))


def test_letor_files_read_as_qrels(make_file):
    path = make_file("train.txt", "2 qid:1 1:0.5 # D1\n")
    assert read_table("qrels", path).to_pylist() == [
        {"query_id": "1", "doc_id": "D1", "relevance": 2}
    ]


def test_every_registered_reader_declares_a_description_and_a_way_to_be_sniffed():
    for (kind, name), reader in READERS.items():
        assert (reader.kind, reader.name) == (kind, name)
        assert reader.description and reader.sniff is not None
    assert formats_of("documents") == ["trec", "jsonl", "tsv", "smart"]
