"""TREC SGML topics: labels stripped, unclosed and closed tags, every problem with its line."""

from __future__ import annotations

import json

import pytest

from pooling.errors import FormatError
from pooling.formats.schemas import TOPICS_SCHEMA
from pooling.formats.trec_topics import read_trec_topics

ROBUST_STYLE = """\
<top>

<num> Number: 303
<title> Hubble Telescope Achievements

<desc> Description:
Identify positive accomplishments of the Hubble telescope since it
was launched in 1991.

<narr> Narrative:
Documents are relevant that show the Hubble telescope has produced
new data.

</top>

<top>
<num> Number: 307
<title> New Hydroelectric Projects
<desc> Description:
Identify hydroelectric projects.
<narr> Narrative:
First paragraph.

Second paragraph.
</top>
"""


def test_unclosed_tags_are_read_with_labels_stripped_and_whitespace_collapsed(make_file):
    table = read_trec_topics(make_file("topics.txt", ROBUST_STYLE))
    assert table.schema == TOPICS_SCHEMA
    first = table.to_pylist()[0]
    assert first == {
        "query_id": "303",
        "title": "Hubble Telescope Achievements",
        "description": "Identify positive accomplishments of the Hubble telescope since it was launched in 1991.",
        "narrative": "Documents are relevant that show the Hubble telescope has produced new data.",
        "extra": None,
    }


def test_paragraph_breaks_are_kept_as_one_blank_line(make_file):
    table = read_trec_topics(make_file("topics.txt", ROBUST_STYLE))
    assert table.column("narrative")[1].as_py() == "First paragraph.\n\nSecond paragraph."


def test_closed_tags_and_unknown_tags_go_to_their_fields_and_extra(make_file):
    path = make_file(
        "topics.sgml",
        """\
        <TOP><NUM>51</NUM><TITLE>Topic: Airbus Subsidies</TITLE>
        <dom> Domain: International Economics
        <desc> Description: Document will discuss government assistance.</desc>
        <con> Concept(s):
        1. Airbus Industrie
        </top>
        """,
    )
    row = read_trec_topics(path).to_pylist()[0]
    assert row["query_id"] == "51"
    assert row["title"] == "Airbus Subsidies"
    assert row["description"] == "Document will discuss government assistance."
    assert row["narrative"] is None
    assert json.loads(row["extra"]) == {
        "dom": "International Economics",
        "con": "1. Airbus Industrie",
    }


def test_gzipped_topic_files_are_read_transparently(make_file):
    table = read_trec_topics(make_file("topics.txt.gz", ROBUST_STYLE, gz=True))
    assert table.column("query_id").to_pylist() == ["303", "307"]


def test_every_problem_is_reported_with_its_line(make_file):
    path = make_file(
        "bad.txt",
        """\
        <top>
        <num> Number: 1
        <title> one
        </top>
        stray text
        <top>
        <num> Number: 1
        <title> duplicate of one
        </top>
        <top>
        <title> no number
        </top>
        <top>
        <num> Number: 4
        <desc> Description: no title
        </top>
        <top>
        <num> Number: 5
        <title> never closed
        """,
    )
    with pytest.raises(FormatError) as caught:
        read_trec_topics(path)
    messages = [str(p) for p in caught.value.problems]
    assert messages == [
        f"{path}:5: text outside <top> ... </top>: 'stray text'",
        f"{path}:6: duplicate topic number '1' (first at line 1)",
        f"{path}:10: topic has no <num>",
        f"{path}:13: topic 4 has no <title> text",
        f"{path}:17: <top> is not closed: expected </top> before the end of the file",
    ]
    assert "<num> Number: 301" in str(caught.value)  # the hint shows the expected shape


def test_a_second_top_before_closing_names_both_lines(make_file):
    path = make_file("t.txt", "<top>\n<num> 1\n<title> a\n<top>\n<num> 2\n<title> b\n</top>\n")
    with pytest.raises(FormatError) as caught:
        read_trec_topics(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:1: <top> is not closed before the next <top> at line 4"
    ]


def test_a_repeated_field_and_a_mismatched_closing_tag_are_problems(make_file):
    path = make_file("t.txt", "<top>\n<num> 1\n<title> a\n<title> b </desc>\n</top>\n")
    with pytest.raises(FormatError) as caught:
        read_trec_topics(path)
    assert [p.line for p in caught.value.problems] == [4, 4]
    assert "second <title> in the topic (first at line 3)" in caught.value.problems[0].message
    assert "</desc> does not close an open <desc>" in caught.value.problems[1].message


def test_a_number_with_spaces_is_a_problem(make_file):
    path = make_file("t.txt", "<top>\n<num> Number: 3 03\n<title> a\n</top>\n")
    with pytest.raises(
        FormatError, match=r"t.txt:2: <num> should hold one topic number, found '3 03'"
    ):
        read_trec_topics(path)


def test_an_empty_file_is_a_problem(make_file):
    with pytest.raises(FormatError, match="file is empty"):
        read_trec_topics(make_file("empty.txt", "\n\n"))


def test_invalid_utf8_is_a_problem_at_its_line(make_file):
    path = make_file("t.txt", b"<top>\n<num> 1\n<title> caf\xe9\n</top>\n")
    with pytest.raises(FormatError) as caught:
        read_trec_topics(path)
    assert f"{path}:3: not valid UTF-8 (byte 0xe9 at column 12); save the file as UTF-8" in [
        str(p) for p in caught.value.problems
    ]


@pytest.mark.shared
def test_the_robust03_topic_file_has_100_topics_from_303_to_650(shared_dir):
    table = read_trec_topics(shared_dir / "data/trec2003-robust/topics/topics.robust03.txt")
    ids = table.column("query_id").to_pylist()
    assert len(ids) == 100 and len(set(ids)) == 100
    assert ids[0] == "303" and ids[-1] == "650"
    assert min(map(int, ids)) == 303 and max(map(int, ids)) == 650
    first = table.to_pylist()[0]
    assert first["title"] == "Hubble Telescope Achievements"
    assert first["description"].startswith("Identify positive accomplishments")
    assert not any(
        t.startswith(("Number", "Description", "Narrative"))
        for t in table.column("narrative").to_pylist()
    )
    assert table.column("title").null_count == 0 and table.column("narrative").null_count == 0
