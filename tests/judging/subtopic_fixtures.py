"""A small store with TREC Web topics that have subtopics (topic 1: three, topic 2: two), two
runs and a subtopic round, for the subtopic judging tests."""

from __future__ import annotations

from pathlib import Path

from pooling.judging.assessors import add_assessor, assign
from pooling.judging.rounds import create_round
from pooling.store import Store

RUNS = {
    "a.run": "1 Q0 d1 1 9 A\n1 Q0 d2 2 8 A\n1 Q0 d3 3 7 A\n2 Q0 e1 1 9 A\n2 Q0 e2 2 8 A\n",
    "b.run": "1 Q0 d2 1 9 B\n1 Q0 d4 2 8 B\n1 Q0 d1 3 7 B\n2 Q0 e3 1 9 B\n2 Q0 e1 2 8 B\n",
}
TOPICS = """<webtrack2010>
<topic number="1" type="faceted">
  <query>bee hives</query>
  <description>How do bees live in a hive?</description>
  <subtopic number="1" type="inf">Find how a colony is organised.</subtopic>
  <subtopic number="2" type="inf">Find what beekeepers do in winter.</subtopic>
  <subtopic number="3" type="nav">Find a shop that sells hives.</subtopic>
</topic>
<topic number="2" type="ambiguous">
  <query>jaguar</query>
  <description>Jaguar, the cat or the car.</description>
  <subtopic number="1" type="inf">The big cat of the Americas.</subtopic>
  <subtopic number="2" type="nav">The car maker.</subtopic>
</topic>
</webtrack2010>
"""
DOCS = "".join(f'{{"doc_id": "{d}", "title": "Doc {d}", "text": "About {d} and bees."}}\n'
               for d in ("d1", "d2", "d3", "d4", "e1", "e2", "e3"))


def make_store(tmp_path: Path, *, topics: str = TOPICS) -> Store:
    """The store with runs, documents and the topics (not yet a round)."""
    s = Store.create(tmp_path / "c.duckdb")
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    s.import_runs([tmp_path / n for n in RUNS])
    (tmp_path / "topics.xml").write_text(topics)
    s.import_topics(tmp_path / "topics.xml", format="trec-web")
    (tmp_path / "docs.jsonl").write_text(DOCS)
    s.import_documents(tmp_path / "docs.jsonl")
    return s


def subtopic_round(s: Store, name: str = "div", *, overlap: float = 0.0) -> None:
    """A depth-2 subtopic round assigned to ann (and bob with an overlap)."""
    create_round(s, name, "depth", strategy_params={"depth": 2}, subtopics=True)
    add_assessor(s, "ann")
    add_assessor(s, "bob")
    assign(s, name, ["ann", "bob"], overlap=overlap)
