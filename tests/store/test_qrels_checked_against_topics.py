"""Subtopic and sampled qrels imported into a store are checked against its topics: a topic
the store lacks, a subtopic the topic lacks, and a grade below -1 are refused at file:line,
and nothing is stored."""

from __future__ import annotations

import pytest

from pooling.errors import FormatError
from pooling.formats.ids import IdError
from pooling.store import Store

TOPICS = """<webtrack2009>
<topic number="1" type="faceted"><query>q one</query><description>d</description>
<subtopic number="1" type="inf">first</subtopic><subtopic number="2" type="nav">second</subtopic>
</topic>
<topic number="2" type="single"><query>q two</query><description>d</description></topic>
</webtrack2009>
"""


@pytest.fixture
def store(tmp_path):
    (tmp_path / "topics.xml").write_text(TOPICS)
    s = Store.create(tmp_path / "c.duckdb")
    s.import_topics(tmp_path / "topics.xml", format="trec-web")
    yield s
    s.close()


def test_a_subtopic_the_topic_lacks_is_refused_at_its_line(store, tmp_path):
    path = tmp_path / "sub.qrels"
    path.write_text("1 1 a 1\n1 2 b 0\n1 7 c 1\n2 9 d 1\n")
    with pytest.raises(FormatError) as info:
        store.import_qrels(path, name="sub", format="subtopic")
    assert [str(p) for p in info.value.problems] == [
        f"{path}:3: topic '1' has no subtopic '7'; its subtopics are 1, 2"]
    assert "sub" not in store.qrels_versions()


def test_subtopic_qrels_of_the_stored_subtopics_are_imported(store, tmp_path):
    path = tmp_path / "sub.qrels"
    path.write_text("1 1 a 1\n1 2 b 0\n1 2 c -1\n2 1 d 1\n")
    store.import_qrels(path, name="sub", format="subtopic")
    assert "sub" in store.qrels_versions()


@pytest.mark.parametrize(("fmt", "text", "problem"), [
    ("subtopic", "1 1 a 1\n1 2 b -5\n1 2 c -1\n", "2: relevance -5 is below -1"),
    ("sampled", "1 0 d1 1 1\n3 0 d2 1 -1\n3 0 d3 1 0\n", "2: topic '3' is not in the store"),
], ids=["subtopic grade below -1", "sampled qrels of an unknown topic"])
def test_a_line_the_store_cannot_take_is_refused_at_its_line(store, tmp_path, fmt, text, problem):
    path = tmp_path / "q.qrels"
    path.write_text(text)
    with pytest.raises(FormatError) as info:
        store.import_qrels(path, name="q", format=fmt)
    assert [str(p) for p in info.value.problems] == [f"{path}:{problem}"]
    assert "q" not in store.qrels_versions()


def test_an_empty_gold_or_qrels_name_is_refused_not_taken_as_no_name(store, tmp_path):
    path = tmp_path / "q.qrels"
    path.write_text("1 0 d1 1\n")
    with pytest.raises(IdError, match=r"qrels version name \(--name\) is empty"):
        store.import_qrels(path, name="")
    with pytest.raises(IdError, match=r"starts or ends with whitespace"):
        store.import_qrels(path, name=" x")
