"""TSV topics and documents: no header, the first record fixes the documents' layout."""

from __future__ import annotations

import pytest

from pooling.errors import FormatError
from pooling.formats.schemas import DOCUMENTS_SCHEMA, TOPICS_SCHEMA
from pooling.formats.tsv import iter_tsv_documents, read_tsv_documents, read_tsv_topics


def test_topic_text_becomes_the_title_and_blank_lines_are_skipped(make_file):
    table = read_tsv_topics(make_file("q.tsv", "1\tblack bear attacks\n\n2\t hubble telescope \n"))
    assert table.schema == TOPICS_SCHEMA
    assert table.select(["query_id", "title"]).to_pylist() == [
        {"query_id": "1", "title": "black bear attacks"},
        {"query_id": "2", "title": "hubble telescope"},
    ]
    assert table.column("description").null_count == 2


def test_topic_lines_without_a_tab_or_with_extra_fields_are_problems(make_file):
    path = make_file("q.tsv", "1\tfine\n2 no tab\n3\ta\tb\n\tno id\n1\tagain\n")
    with pytest.raises(FormatError) as caught:
        read_tsv_topics(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:2: expected 2 tab-separated fields (query_id, text), found no tab",
        f"{path}:3: expected 2 tab-separated fields (query_id, text), found 3 fields",
        f"{path}:4: empty query_id",
        f"{path}:5: duplicate query_id '1' (first at line 1)",
    ]


def test_two_field_documents_have_no_title(make_file):
    table = read_tsv_documents(make_file("d.tsv", "D1\tsome text\nD2\tmore text\n"))
    assert table.schema == DOCUMENTS_SCHEMA
    assert table.to_pylist()[0] == {
        "doc_id": "D1",
        "title": None,
        "text": "some text",
        "url": None,
        "extra": None,
    }


def test_three_field_documents_have_a_title(make_file):
    table = read_tsv_documents(make_file("d.tsv", "D1\tA title\tthe text\n"))
    assert table.select(["title", "text"]).to_pylist() == [{"title": "A title", "text": "the text"}]


def test_a_document_line_with_another_layout_than_the_first_is_a_problem(make_file):
    path = make_file("d.tsv", "D1\tA title\tthe text\nD2\tonly text\nD3\n")
    with pytest.raises(FormatError) as caught:
        read_tsv_documents(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:2: expected 3 tab-separated fields like line 1, found 2 fields",
        f"{path}:3: expected 3 tab-separated fields like line 1, found no tab",
    ]


def test_streamed_documents_come_in_batches_and_problems_are_raised_after_the_last(make_file):
    lines = "".join(f"D{i}\ttext {i}\n" for i in range(5)) + "D0\tdup\n"
    stream = iter_tsv_documents(make_file("d.tsv", lines), batch_size=2)
    sizes = [next(stream).num_rows for _ in range(3)]
    assert sizes == [2, 2, 1]
    with pytest.raises(FormatError, match="duplicate doc_id 'D0' \\(first at line 1\\)"):
        next(stream)


def test_an_empty_documents_file_is_a_problem(make_file):
    with pytest.raises(FormatError, match="file is empty"):
        read_tsv_documents(make_file("d.tsv", ""))
