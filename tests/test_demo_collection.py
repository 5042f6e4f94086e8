"""collections/demo: the manifest agrees with the files, and the generator reproduces them."""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.formats import read_documents, read_topics

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO = REPO_ROOT / "collections" / "demo"
GENERATOR = REPO_ROOT / "scripts" / "make_demo_collection.py"


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads((DEMO / "MANIFEST.json").read_text())


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _lines(name: str) -> list[list[str]]:
    return [line.split() for line in (DEMO / name).read_text().splitlines()]


def test_the_manifest_lists_every_file_with_its_checksum_size_and_line_count(manifest):
    on_disk = _files(DEMO)
    assert set(manifest["files"]) == set(on_disk) - {"MANIFEST.json"}
    for name, entry in manifest["files"].items():
        data = on_disk[name]
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), name
        assert entry["size"] == len(data), name
        assert entry["lines"] == len(data.decode().splitlines()), name


def test_the_demo_collection_stays_small(manifest):
    assert sum(entry["size"] for entry in manifest["files"].values()) < 5_000_000


def test_topics_read_with_the_reader_match_the_manifest(manifest):
    topics = read_topics(DEMO / "topics.jsonl")
    ids = topics.column("query_id").to_pylist()
    assert (
        len(ids)
        == manifest["counts"]["topics"]
        == manifest["files"]["topics.jsonl"]["topics"]
        == 50
    )
    assert ids == [str(q) for q in range(101, 151)]
    assert (
        topics.column("description").null_count == 0 and topics.column("narrative").null_count == 0
    )


def test_documents_read_with_the_reader_match_the_manifest(manifest):
    documents = read_documents(DEMO / "documents.jsonl")
    assert (
        documents.num_rows
        == manifest["counts"]["documents"]
        == manifest["files"]["documents.jsonl"]["documents"]
    )
    assert documents.num_rows > 2000
    assert documents.column("text").null_count == 0


def test_runs_tsv_describes_every_run_file_and_its_tag(manifest):
    with open(DEMO / "runs.tsv", newline="") as fh:
        meta = list(csv.DictReader(fh, delimiter="\t"))
    assert list(meta[0]) == ["file", "run_id", "team", "description", "pooled"]
    run_files = sorted(name for name in manifest["files"] if name.startswith("runs/"))
    assert sorted(row["file"] for row in meta) == run_files
    assert len(meta) == manifest["counts"]["runs"] == manifest["files"]["runs.tsv"]["runs"] == 20
    assert len({row["team"] for row in meta}) == manifest["counts"]["teams"] == 8
    assert sum(row["pooled"] == "yes" for row in meta) == manifest["counts"]["pooled_runs"]
    assert {row["pooled"] for row in meta} == {"yes", "no"}
    for row in meta:
        assert manifest["files"][row["file"]]["run_id"] == row["run_id"]


def test_run_files_are_trec_runs_over_known_topics_and_documents(manifest):
    topic_ids = {str(q) for q in range(101, 151)}
    doc_ids = set(read_documents(DEMO / "documents.jsonl").column("doc_id").to_pylist())
    for name, entry in manifest["files"].items():
        if not name.startswith("runs/"):
            continue
        rows = _lines(name)
        assert all(len(r) == 6 and r[1] == "Q0" and r[5] == entry["run_id"] for r in rows), name
        assert {r[0] for r in rows} == topic_ids and entry["topics"] == 50
        assert {r[2] for r in rows} <= doc_ids
        per_topic = {}
        for r in rows:
            per_topic[r[0]] = per_topic.get(r[0], 0) + 1
        assert max(per_topic.values()) <= 100


def test_truth_qrels_cover_every_retrieved_document_with_grades_0_to_2(manifest):
    rows = _lines("truth.qrels")
    entry = manifest["files"]["truth.qrels"]
    assert len(rows) == entry["qrels_rows"] == manifest["counts"]["qrels_rows"]
    assert sum(int(r[3]) > 0 for r in rows) == entry["relevant"] == manifest["counts"]["relevant"]
    assert {int(r[3]) for r in rows} == {0, 1, 2}
    judged = {(r[0], r[2]) for r in rows}
    assert len(judged) == len(rows)
    for name in manifest["files"]:
        if name.startswith("runs/"):
            assert {(r[0], r[2]) for r in _lines(name)} <= judged, name


def test_regenerating_the_demo_collection_reproduces_identical_bytes(tmp_path):
    out = tmp_path / "demo"
    subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(out)], check=True, capture_output=True
    )
    fresh, committed = _files(out), _files(DEMO)
    assert sorted(fresh) == sorted(committed)
    changed = [name for name in fresh if fresh[name] != committed[name]]
    assert changed == []


def test_subtopic_topics_repeat_five_demo_topics_with_their_subjects_aspects(manifest):
    from pooling.formats.trec_web import read_trec_web_topics

    topics = read_trec_web_topics(DEMO / "subtopics.xml").to_pylist()
    entry = manifest["files"]["subtopics.xml"]
    assert [t["query_id"] for t in topics] == ["101", "102", "103", "104", "105"]
    assert entry["topics"] == len(topics)
    subtopics = [json.loads(t["extra"])["subtopics"] for t in topics]
    assert entry["subtopics"] == sum(len(s) for s in subtopics)
    plain = {t["query_id"]: t for t in read_topics(DEMO / "topics.jsonl").to_pylist()}
    for topic, subs in zip(topics, subtopics, strict=True):
        assert 2 <= len(subs) <= 4
        assert [s["number"] for s in subs] == [str(n) for n in range(1, len(subs) + 1)]
        # subtopic 1 is the demo topic's own aspect: its description, word for word
        assert subs[0]["text"] == plain[topic["query_id"]]["description"]
        assert topic["title"].lower() in plain[topic["query_id"]]["title"].lower()


def test_subtopic_truth_grades_each_document_once_on_a_subtopic_of_its_topic(manifest):
    from pooling.formats.subtopic_qrels import read_subtopic_qrels
    from pooling.formats.trec_web import read_trec_web_topics

    rows = read_subtopic_qrels(DEMO / "subtopics.qrels").to_pylist()
    entry = manifest["files"]["subtopics.qrels"]
    assert len(rows) == entry["lines"] and entry["topics"] == 5
    assert sum(r["relevance"] > 0 for r in rows) == entry["relevant"]
    numbers = {t["query_id"]: {s["number"] for s in json.loads(t["extra"])["subtopics"]}
               for t in read_trec_web_topics(DEMO / "subtopics.xml").to_pylist()}
    assert all(r["subtopic"] in numbers[r["query_id"]] for r in rows)
    assert len({(r["query_id"], r["doc_id"]) for r in rows}) == len(rows)
    for q, subs in numbers.items():  # every subtopic has a relevant document
        assert {r["subtopic"] for r in rows if r["query_id"] == q and r["relevance"] > 0} == subs
    assert {r["relevance"] for r in rows} == {0, 1, 2}
