"""Offline batches: every row is checked at once, every refusal names its file:line, nothing a
person typed is lost, and an import stores every graded row or none."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from pooling.errors import FormatError
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.batches import export_batch, import_batch
from pooling.judging.judgments import Judgment, effective_judgments, history, record
from pooling.judging.rounds import create_round
from pooling.store import Store

RUNS = {
    "a.run": "1 Q0 d1 1 9 A\n1 Q0 d2 2 8 A\n1 Q0 d3 3 7 A\n2 Q0 e1 1 9 A\n2 Q0 e2 2 8 A\n",
    "b.run": "1 Q0 d2 1 9 B\n1 Q0 d4 2 8 B\n1 Q0 d1 3 7 B\n2 Q0 e3 1 9 B\n2 Q0 e1 2 8 B\n",
}
HEADER = "round_id,query_id,doc_id,grade,note\n"


@pytest.fixture
def store(tmp_path):
    """Round r1 (depth 2): topic 1 queues d1, d2, d4 and is ann's; topic 2 queues e1, e3, e2
    and is bob's; org is an organiser."""
    s = Store.create(tmp_path / "c.duckdb")
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    s.import_runs([tmp_path / n for n in RUNS])
    create_round(s, "r1", "depth", strategy_params={"depth": 2})
    for person in ("ann", "bob"):
        add_assessor(s, person)
    add_assessor(s, "org", role="organiser")
    assign(s, "r1", ["ann", "bob"])
    yield s
    s.close()


def judged(store) -> list[tuple]:
    return [(r["assessor_id"], r["query_id"], r["doc_id"], r["grade"], r["note"])
            for r in history(store).to_pylist()]


def test_every_refusal_names_its_line_and_nothing_is_stored(store, tmp_path):
    batch = tmp_path / "ann.csv"
    batch.write_text(HEADER + "r1,1,d1,2,\n"       # 2: fine
                     "r1,1,d2,9,\n"                 # 3: off the scale
                     "r1,1,d4,x,\n"                 # 4: not an integer
                     "r1,2,e1,1,\n"                 # 5: bob's topic
                     "r1,1,zzz,1,\n"                # 6: not queued
                     "r2,1,d2,1,\n"                 # 7: another round
                     "r1,1,d4,,\n"                  # 8: blank grade: skipped
                     'r1,1,d4,1,"two\nlines"\n'     # 9-10: fine
                     "r1,2,e2,0,\n")                # 11: bob's topic
    with pytest.raises(FormatError) as info:
        import_batch(store, "r1", "ann", batch)
    assert str(info.value).splitlines() == [
        f"{batch}:3: grade 9 is not on the round's scale [0, 1, 2]",
        f"{batch}:4: grade must be one of [0, 1, 2], found 'x'",
        f"{batch}:5: document 'e1' of topic '2' is not assigned to 'ann' in round 'r1'",
        f"{batch}:6: document 'zzz' of topic '1' is not assigned to 'ann' in round 'r1'",
        f"{batch}:7: row is for round 'r2', not 'r1'",
        f"{batch}:11: document 'e2' of topic '2' is not assigned to 'ann' in round 'r1'",
        "Nothing was imported; fix these rows and import again.",
    ]
    assert history(store).num_rows == 0


def test_jsonl_rows_that_are_not_objects_and_unknown_people_are_refused_by_line(store, tmp_path):
    batch = tmp_path / "x.jsonl"
    batch.write_text(json.dumps({"query_id": 1, "doc_id": "d1", "grade": 1}) + "\n\n"
                     "{not json\n[1, 2]\n" + json.dumps({"query_id": "1", "doc_id": "d2", "grade": 0}) + "\n")
    with pytest.raises(FormatError) as info:
        import_batch(store, "r1", "zoe", batch)
    text = str(info.value)
    assert f"{batch}:1: document 'd1' of topic '1' is not assigned to 'zoe'" in text
    assert f"{batch}:3: not valid JSON" in text
    assert f"{batch}:4: expected a JSON object" in text
    assert f"{batch}:5: document 'd2' of topic '1' is not assigned to 'zoe'" in text
    batch.write_text(json.dumps({"query_id": 1, "doc_id": "d1", "grade": 1}) + "\n")
    assert import_batch(store, "r1", "ann", batch) == (1, 0)  # an integer query_id is read as text


def test_jsonl_rows_with_a_key_twice_or_a_number_for_unjudgeable_are_refused_by_line(
        store, tmp_path):
    batch = tmp_path / "ann.jsonl"
    batch.write_text('{"query_id": "1", "doc_id": "d1", "grade": 0, "grade": 2}\n'
                     + json.dumps({"query_id": "1", "doc_id": "d2", "unjudgeable": 1}) + "\n"
                     + json.dumps({"query_id": "1", "doc_id": "d4", "grade": 1}) + "\n")
    with pytest.raises(FormatError) as info:
        import_batch(store, "r1", "ann", batch)
    assert str(info.value).splitlines()[:2] == [
        f"{batch}:1: the key 'grade' is given twice; give it once",
        f"{batch}:2: unjudgeable must be true or false, found '1' (a number: send the JSON "
        "boolean true or false)"]
    assert history(store).num_rows == 0


def test_a_csv_without_the_needed_columns_is_refused_at_its_header(store, tmp_path):
    batch = tmp_path / "ann.csv"
    batch.write_text("query_id,doc_id,relevance\n1,d1,2\n")
    with pytest.raises(FormatError, match=r"ann.csv:1: header lacks column\(s\) grade"):
        import_batch(store, "r1", "ann", batch)


def test_an_organiser_may_judge_any_queued_document_but_nothing_else(store, tmp_path):
    batch = tmp_path / "org.csv"
    batch.write_text(HEADER + "r1,1,d1,1,\nr1,2,e3,2,\nr1,2,d1,0,\n")
    with pytest.raises(FormatError) as info:
        import_batch(store, "r1", "org", batch)
    assert f"{batch}:4: document 'd1' of topic '2' is not assigned to 'org'" in str(info.value)
    assert f"{batch}:2" not in str(info.value) and f"{batch}:3" not in str(info.value)
    batch.write_text(HEADER + "r1,1,d1,1,\nr1,2,e3,2,\n")
    assert import_batch(store, "r1", "org", batch) == (2, 0)


def test_rows_are_stored_in_file_order_with_their_notes_and_repeats_counted(store, tmp_path):
    record(store, [Judgment("r1", "ann", "1", "d2", 2, submission_id="web-1")])  # judged on the web
    batch = tmp_path / "ann.csv"
    batch.write_text(HEADER + "r1,1,d1,2,sure\n"
                     "r1,1,d2,1,\n"
                     "r1,1,d1,0,on second thought\n"   # a correction later in the file
                     "r1,1,d2,1,\n")                   # the same row again: stored once
    assert import_batch(store, "r1", "ann", batch) == (3, 1)
    assert judged(store) == [
        ("ann", "1", "d2", 2, None),
        ("ann", "1", "d1", 2, "sure"), ("ann", "1", "d2", 1, None),
        ("ann", "1", "d1", 0, "on second thought"),
    ]
    current = {(r["doc_id"]): r["grade"] for r in effective_judgments(store, "r1").to_pylist()}
    assert current == {"d1": 0, "d2": 1}
    assert import_batch(store, "r1", "ann", batch) == (0, 4)  # idempotent
    batch.write_text(HEADER + "r1,1,d1,0,on third thought\n")  # a changed note is a new judgment
    assert import_batch(store, "r1", "ann", batch) == (1, 0)
    assert judged(store)[-1] == ("ann", "1", "d1", 0, "on third thought")
    record(store, [Judgment("r1", "ann", "1", "d4", 1, submission_id="web-2")])
    seqs = [r["seq"] for r in history(store).to_pylist()]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # web and batches share one order


def test_a_batch_with_no_grades_stores_nothing(store, tmp_path):
    batch = tmp_path / "ann.csv"
    assert export_batch(store, "r1", "ann", batch) == 3
    assert import_batch(store, "r1", "ann", batch) == (0, 0)
    assert history(store).num_rows == 0


def test_a_note_without_a_grade_is_refused_at_its_line_not_dropped(store, tmp_path):
    batch = tmp_path / "ann.csv"
    batch.write_text(HEADER + "r1,1,d1,2,\n" "r1,1,d2,,relevant only in part?\n")
    with pytest.raises(FormatError) as info:
        import_batch(store, "r1", "ann", batch)
    assert "ann.csv:3: a note without a grade" in str(info.value)
    assert history(store).num_rows == 0


def test_export_leaves_out_what_the_assessor_has_judged_and_carries_the_texts(store, tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"doc_id": d, "title": f"title {d}", "text": f"text of {d}"}) + "\n"
                            for d in ("d1", "d2")))
    store.import_documents(docs)
    topics = tmp_path / "t.tsv"
    topics.write_text("1\tfirst topic\n")
    store.import_topics(topics)
    record(store, [Judgment("r1", "ann", "1", "d2", 1),
                   Judgment("r1", "ann", "1", "d4", 0),
                   Judgment("r1", "ann", "1", "d4", None, kind="retract")])
    batch = tmp_path / "ann.jsonl"
    assert export_batch(store, "r1", "ann", batch) == 2
    rows = [json.loads(line) for line in batch.read_text().splitlines()]
    assert [(r["query_id"], r["doc_id"], r["position"]) for r in rows] == [("1", "d1", 1), ("1", "d4", 3)]
    assert rows[0]["topic_title"] == "first topic" and rows[0]["doc_text"] == "text of d1"
    assert rows[1]["doc_title"] is None and rows[1]["grade"] is None


def _pooling(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pooling", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"})


def test_cli_batch_export_of_an_adaptive_round_says_why_and_what_to_do(store, tmp_path):
    create_round(store, "live", "mtf", depth=3)
    assign(store, "live", ["ann"])
    path = store.path
    store.close()
    done = _pooling("batch", "export", str(path), "--round", "live", "--assessor", "ann",
                    "-o", str(tmp_path / "b.csv"))
    assert done.returncode == 1
    assert "round 'live' is adaptive (mtf)" in done.stderr
    assert "one at a time in the judging pages (`pooling serve`) or the API" in done.stderr
    assert "pool a static round" in done.stderr
    assert not (tmp_path / "b.csv").exists()


class _CountingConnection:
    """A DuckDB connection that counts the statements sent through it."""

    def __init__(self, con):
        self._con, self.statements = con, 0

    def execute(self, *args, **kwargs):
        self.statements += 1
        return self._con.execute(*args, **kwargs)

    def sql(self, *args, **kwargs):
        self.statements += 1
        return self._con.sql(*args, **kwargs)

    def executemany(self, *args, **kwargs):
        self.statements += 1
        return self._con.executemany(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


def _statements_to_import(tmp_path, topics: int, docs: int) -> int:
    """SQL statements that importing an exported, fully graded batch of one assessor takes."""
    s = Store.create(tmp_path / f"s{topics}x{docs}.duckdb")
    run = tmp_path / f"r{topics}x{docs}.run"
    run.write_text("".join(f"{q} Q0 d{q}-{d} {d + 1} {docs - d} A\n"
                           for q in range(1, topics + 1) for d in range(docs)))
    s.import_runs([run])
    create_round(s, "r1", "depth", strategy_params={"depth": docs})
    add_assessor(s, "ann")
    assign(s, "r1", ["ann"])
    batch = tmp_path / f"b{topics}x{docs}.csv"
    assert export_batch(s, "r1", "ann", batch) == topics * docs
    lines = batch.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    at = header.index("grade")
    rows = list(csv.reader(lines))
    for row in rows[1:]:
        row[at] = "1"
    with open(batch, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    counting = _CountingConnection(s.con)
    s.con = counting
    try:
        assert import_batch(s, "r1", "ann", batch) == (topics * docs, 0)
        first = counting.statements
        assert import_batch(s, "r1", "ann", batch) == (0, topics * docs)
    finally:
        s.con = counting._con
        s.close()
    return first


def test_import_takes_the_same_few_statements_however_many_rows_the_batch_has(tmp_path):
    small = _statements_to_import(tmp_path, topics=2, docs=5)
    large = _statements_to_import(tmp_path, topics=20, docs=50)
    assert small == large and small < 20


def test_a_later_batch_giving_an_earlier_grade_again_is_stored_not_taken_for_a_retry(store, tmp_path):
    first = tmp_path / "a.csv"
    first.write_text(HEADER + "r1,1,d1,1,\n")
    assert import_batch(store, "r1", "ann", first) == (1, 0)
    record(store, [Judgment("r1", "ann", "1", "d1", 2, submission_id="web-changed-0001")])
    later = tmp_path / "b.csv"
    later.write_text(HEADER + "r1,1,d1,1,\n" "r1,1,d2,0,\n")
    assert import_batch(store, "r1", "ann", later) == (2, 0)
    assert import_batch(store, "r1", "ann", later) == (0, 2)  # the same file again: a retry
    current = {r["doc_id"]: r["grade"] for r in effective_judgments(store, "r1").to_pylist()}
    assert current == {"d1": 1, "d2": 0}


def test_a_note_the_store_cannot_hold_is_refused_at_its_line_and_the_rest_waits(store, tmp_path):
    batch = tmp_path / "ann.jsonl"
    batch.write_text(json.dumps({"query_id": "1", "doc_id": "d1", "grade": 1}) + "\n"
                     + json.dumps({"query_id": "1", "doc_id": "d2", "grade": 0, "note": "bad \udfff"})
                     + "\n")
    with pytest.raises(FormatError) as info:
        import_batch(store, "r1", "ann", batch)
    assert str(info.value).splitlines()[0] == (
        f"{batch}:2: note holds a lone surrogate (U+DFFF at character 5), which is not text that "
        "can be stored; send UTF-8 text (in JSON, a character outside the BMP needs both halves "
        "of its \\u pair)")
    assert history(store).num_rows == 0
    path = store.path
    store.close()
    done = _pooling("batch", "import", str(path), "--round", "r1", "--assessor", "ann", str(batch))
    assert done.returncode == 1 and "internal error" not in done.stderr
    assert f"{batch}:2: note holds a lone surrogate" in done.stderr


@pytest.mark.parametrize(("name", "assessor_id", "why"), [
    ("Ann\x00", None, "the assessor's name 'Ann\\x00' holds the control character U+0000"),
    ("Ann", " ann", "the assessor id (--id) ' ann' starts or ends with whitespace"),
    ("Ann", "a" * 201, "is 201 bytes long; a name is at most 200 bytes"),
])
def test_an_assessor_name_or_id_that_breaks_the_id_rule_is_refused(store, name, assessor_id, why):
    from pooling.errors import StoreError

    with pytest.raises(StoreError) as info:
        add_assessor(store, name, assessor_id=assessor_id)
    assert why in str(info.value)
