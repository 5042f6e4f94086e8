"""Subtopic (diversity) judgments: a kind of judgment of the one judging core, stored,
validated, undone and read per subtopic; a pair counts once elsewhere, by its maximum."""

from __future__ import annotations

import re

import pytest
from subtopic_fixtures import TOPICS, make_store, subtopic_round

from pooling.errors import FormatError, StoreError, SubmissionConflict
from pooling.judging import validation
from pooling.judging.judgments import (
    Judgment,
    append_judgments,
    effective_judgments,
    record,
    undo_in_store,
)
from pooling.judging.rounds import create_round, get_round
from pooling.store import Store


@pytest.fixture
def store(tmp_path):
    s = make_store(tmp_path)
    subtopic_round(s, overlap=1.0)
    yield s
    s.close()


def _submission(store, sid, grades, doc="d1", who="ann", topic="1"):
    rnd = get_round(store, "div")
    return validation.part_submission(rnd, who, topic, doc, grades_value=grades,
                                      submission_id_value=sid)


def test_a_subtopic_round_records_its_topics_subtopics(store):
    rnd = get_round(store, "div")
    assert rnd.parts_of("1") == ["1", "2", "3"]
    assert rnd.parts_of("2") == ["1", "2"]
    assert rnd.parts["2"][1] == ("2", "The car maker.")


def test_a_subtopic_round_is_refused_when_a_topic_has_no_subtopics(tmp_path):
    s = make_store(tmp_path, topics=TOPICS.replace(
        '  <subtopic number="1" type="inf">The big cat of the Americas.</subtopic>\n'
        '  <subtopic number="2" type="nav">The car maker.</subtopic>\n', ""))
    with pytest.raises(StoreError, match=r"topic\(s\) 2 have none"):
        create_round(s, "div", "depth", strategy_params={"depth": 2}, subtopics=True)
    assert s.one("n", "SELECT count(*) FROM rounds") == (0,)
    create_round(s, "div", "depth", strategy_params={"depth": 2}, subtopics=True, topics=["1"])
    s.close()


def test_one_submission_stores_a_grade_per_subtopic_and_a_retry_once(store):
    items = _submission(store, "s" * 16, {"1": 2, "2": 0, "3": 1})
    assert [(j.part, j.grade, j.submission_id) for j in items] == [
        ("1", 2, "s" * 16 + "~1"), ("2", 0, "s" * 16 + "~2"), ("3", 1, "s" * 16 + "~3")]
    assert record(store, items) == (3, 0)
    assert record(store, items) == (0, 3)
    rows = effective_judgments(store, "div", per_part=True).to_pylist()
    assert [(r["part"], r["grade"]) for r in rows] == [("1", 2), ("2", 0), ("3", 1)]
    plain = effective_judgments(store, "div").to_pylist()
    assert [(r["doc_id"], r["grade"]) for r in plain] == [("d1", 2)]  # relevant to any


def test_the_same_id_with_other_grades_is_a_conflict_and_stores_nothing(store):
    record(store, _submission(store, "s" * 16, {"1": 2, "2": 0, "3": 1}))
    with pytest.raises(SubmissionConflict):
        append_judgments(store, _submission(store, "s" * 16, {"1": 2, "2": 1, "3": 1}))
    assert store.one("n", "SELECT count(*) FROM judgments") == (3,)


@pytest.mark.parametrize("grades, words", [
    ({"1": 2, "2": 0}, "missing"),
    ({"1": 2, "2": 0, "3": 1, "9": 1}, "'9' is not one of topic 1's subtopics"),
    ({"1": 2, "2": 0, "3": 7}, "grade must be one of"),
    ({"1": 2, "2": 0, "3": True}, "grade must be one of"),
    (2, "send grades as an object"),
])
def test_a_submission_must_grade_every_subtopic_on_the_scale(store, grades, words):
    with pytest.raises(validation.JudgmentRefused, match=words):
        _submission(store, "s" * 16, grades)


def test_a_judgment_in_code_must_name_one_of_the_topics_subtopics(store):
    with pytest.raises(StoreError, match="judges subtopics"):
        record(store, [Judgment("div", "ann", "1", "d1", 1, submission_id="x" * 16)])
    with pytest.raises(StoreError, match="'4' is not one of topic 1's subtopics"):
        record(store, [Judgment("div", "ann", "1", "d1", 1, part="4")])
    record(store, [Judgment("div", "ann", "1", "d1", 1, part="3")])


def test_a_plain_round_refuses_a_subtopic(tmp_path):
    s = make_store(tmp_path)
    create_round(s, "plain", "depth", strategy_params={"depth": 2})
    from pooling.judging.assessors import add_assessor, assign
    add_assessor(s, "ann")
    assign(s, "plain", ["ann"])
    with pytest.raises(StoreError, match="documents as a whole"):
        record(s, [Judgment("plain", "ann", "1", "d1", 1, part="1")])
    s.close()


def test_undo_is_per_assessor_pair_and_subtopic(store):
    record(store, _submission(store, "a" * 16, {"1": 2, "2": 0, "3": 1}))
    record(store, [Judgment("div", "ann", "1", "d1", 0, part="1")])  # a correction
    record(store, [Judgment("div", "ann", "1", "d1", None, kind="retract", part="1")])
    rows = effective_judgments(store, "div", per_part=True).to_pylist()
    assert [(r["part"], r["grade"]) for r in rows] == [("1", 2), ("2", 0), ("3", 1)]
    with pytest.raises(StoreError, match="nothing to undo.*subtopic '2'"):
        record(store, [Judgment("div", "bob", "1", "d1", None, kind="retract", part="2")])


def test_the_page_undo_takes_back_the_documents_latest_submission_whole(store):
    record(store, _submission(store, "a" * 16, {"1": 2, "2": 0, "3": 1}))
    record(store, _submission(store, "b" * 16, {"1": 0, "2": 0, "3": 0}, doc="d2"))
    done = undo_in_store(store, "div", "ann", "1", "u" * 16)
    assert (done.doc_id, done.duplicate) == ("d2", False)
    again = undo_in_store(store, "div", "ann", "1", "u" * 16)
    assert (again.doc_id, again.duplicate) == ("d2", True)
    rows = effective_judgments(store, "div", per_part=True).to_pylist()
    assert {(r["doc_id"], r["part"]) for r in rows} == {("d1", "1"), ("d1", "2"), ("d1", "3")}
    kinds = store.con.execute("SELECT submission_id, part FROM judgments WHERE kind = 'retract' "
                              "ORDER BY part").fetchall()
    assert kinds == [("u" * 16 + "~1", "1"), ("u" * 16 + "~2", "2"), ("u" * 16 + "~3", "3")]


def test_an_old_store_upgrades_with_plain_judgments_kept(tmp_path):
    import duckdb

    from pooling.store.schema import MIGRATIONS
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    for step in MIGRATIONS[:-1]:
        for sql in step:
            con.execute(sql)
    con.execute("INSERT INTO store_meta VALUES ('schema_version', ?)", [str(len(MIGRATIONS) - 1)])
    con.execute("INSERT INTO judgments (submission_id, round_id, query_id, doc_id, assessor_id, "
                "kind, grade, judged_at) VALUES ('s', 'r', '1', 'd1', 'ann', 'judge', 1, now())")
    con.close()
    s = Store(path)
    assert s.con.execute("SELECT grade, part FROM judgments").fetchall() == [(1, None)]
    assert s.one("n", "SELECT count(*) FROM subtopic_qrels") == (0,)
    s.close()


def test_a_subtopic_round_judged_before_rounds_named_their_item_type_reads_and_derives_alike(
        store):
    """A store of schema 15 (judgments' `subtopic` column, rounds without `item_type`)
    upgrades to the judged item: the round judges subtopics, every judgment's subtopic is its
    part, and the round derives the subtopic qrels it derived before."""
    from pooling.judging.rules import derive_qrels
    from pooling.store.qrels import subtopic_qrels_table
    from pooling.store.schema import SCHEMA_VERSION
    _two_assessors_judge(store)
    derive_qrels(store, "majority", "before", round_id="div", tie="higher")
    per_part = effective_judgments(store, "div", per_part=True).to_pylist()
    per_doc = effective_judgments(store, "div").to_pylist()
    path = store.path
    # The store as schema 15 wrote it: the upgrades since taken back by hand (the tables
    # later schemas made dropped, then schema 16's renames undone).
    from pooling.store.schema import MIGRATIONS
    for step in MIGRATIONS[16:]:
        for ddl in step:
            made = re.match(r"\s*CREATE TABLE (\w+)", ddl)
            if made:
                store.con.execute(f"DROP TABLE {made.group(1)}")
    store.con.execute("ALTER TABLE judgments RENAME COLUMN part TO subtopic")
    store.con.execute("ALTER TABLE judge_calls RENAME COLUMN part TO subtopic")
    store.con.execute("ALTER TABLE rounds DROP COLUMN item_type")
    store.con.execute("UPDATE store_meta SET value = '15' WHERE key = 'schema_version'")
    store.close()
    with Store(path) as s:
        assert s.schema_version() == SCHEMA_VERSION
        rnd = get_round(s, "div")
        assert (rnd.item_type, rnd.item.part, rnd.parts_of("1")) == ("subtopic", "subtopic",
                                                                     ["1", "2", "3"])
        assert effective_judgments(s, "div", per_part=True).to_pylist() == per_part
        assert effective_judgments(s, "div").to_pylist() == per_doc
        derive_qrels(s, "majority", "after", round_id="div", tie="higher")
        assert (subtopic_qrels_table(s, "after").to_pylist()
                == subtopic_qrels_table(s, "before").to_pylist())
        assert s.one("plain round", "SELECT item_type FROM rounds WHERE round_id = 'div'") == (
            "subtopic",)


def test_a_subtopic_batch_has_a_row_per_subtopic_and_imports_each_as_its_judgment(store, tmp_path):
    import csv

    from pooling.judging.batches import SUBTOPIC_BATCH_COLUMNS, export_batch, import_batch
    out = tmp_path / "ann.csv"
    assert export_batch(store, "div", "ann", out) == 3 * 3 + 3 * 2  # 3 docs x 3 subtopics, 3 x 2
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == SUBTOPIC_BATCH_COLUMNS
    assert [(r["query_id"], r["doc_id"], r["subtopic"]) for r in rows[:3]] == [
        ("1", "d1", "1"), ("1", "d1", "2"), ("1", "d1", "3")]
    assert rows[4]["subtopic_text"] == "Find what beekeepers do in winter."
    for r, g in zip(rows[:3], ("2", "0", "1"), strict=True):
        r["grade"] = g
    with open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=SUBTOPIC_BATCH_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    assert import_batch(store, "div", "ann", out) == (3, 0)
    assert import_batch(store, "div", "ann", out) == (0, 3)
    per = effective_judgments(store, "div", per_part=True).to_pylist()
    assert [(r["doc_id"], r["part"], r["grade"]) for r in per] == [
        ("d1", "1", 2), ("d1", "2", 0), ("d1", "3", 1)]
    assert export_batch(store, "div", "ann", tmp_path / "rest.csv") == 12  # d1 is done
    rows[3]["grade"], rows[3]["subtopic"] = "1", "7"
    with open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=SUBTOPIC_BATCH_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(FormatError, match=r"ann.csv:5: subtopic '7' is not one of topic 1's"):
        import_batch(store, "div", "ann", out)


def _two_assessors_judge(store):
    record(store, _submission(store, "a" * 16, {"1": 2, "2": 0, "3": 1}))
    record(store, _submission(store, "b" * 16, {"1": 2, "2": 1, "3": 0}, who="bob"))
    record(store, _submission(store, "c" * 16, {"1": 0, "2": 0, "3": 0}, doc="d2"))
    record(store, _submission(store, "d" * 16, {"1": 1, "2": 0}, doc="e1", topic="2"))


def test_a_subtopic_round_derives_a_subtopic_qrels_version_and_its_plain_rows_are_the_maximum(store):
    from pooling.judging.rules import derive_qrels
    from pooling.store.qrels import derive_plain_qrels, subtopic_qrels_table
    _two_assessors_judge(store)
    result = derive_qrels(store, "majority", "div-qrels", round_id="div", tie="higher")
    rows = subtopic_qrels_table(store, "div-qrels").to_pylist()
    assert [(r["query_id"], r["subtopic"], r["doc_id"], r["relevance"]) for r in rows] == [
        ("1", "1", "d1", 2), ("1", "1", "d2", 0), ("1", "2", "d1", 1), ("1", "2", "d2", 0),
        ("1", "3", "d1", 1), ("1", "3", "d2", 0), ("2", "1", "e1", 1), ("2", "2", "e1", 0)]
    plain = store.qrels_table("div-qrels").to_pylist()
    assert [(r["query_id"], r["doc_id"], r["relevance"]) for r in plain] == [
        ("1", "d1", 2), ("1", "d2", 0), ("2", "e1", 1)]
    assert (result.n_rows, result.n_topics) == (3, 2)
    derived = derive_plain_qrels(store, "div-qrels", "div-plain")
    again = store.qrels_table("div-plain").to_pylist()
    assert [(r["query_id"], r["doc_id"], r["relevance"]) for r in again] == [
        (r["query_id"], r["doc_id"], r["relevance"]) for r in plain]
    info = store.qrels_info("div-plain")
    assert (info["method"], derived.n_rows) == ("derived:max-subtopic", 3)
    assert '"max over subtopics"' in info["params"]
    with pytest.raises(StoreError, match="'div-plain' has no subtopics; versions with "
                                         "subtopics: div-qrels"):
        subtopic_qrels_table(store, "div-plain")


def test_subtopic_qrels_refuse_rules_they_cannot_apply_per_subtopic(store):
    from pooling.judging.rules import derive_qrels
    _two_assessors_judge(store)
    with pytest.raises(StoreError, match="rule 'adjudicated' does not derive subtopic qrels"):
        derive_qrels(store, "adjudicated", "x", round_id="div")
    assert store.one("n", "SELECT count(*) FROM qrels_versions") == (0,)


def test_agreement_is_reported_per_subtopic(store):
    from pooling.judging.rules import round_agreement, subtopic_agreement
    _two_assessors_judge(store)
    per = subtopic_agreement(store, "div")
    assert [(a.query_id, a.subtopic) for a in per] == [("1", "1"), ("1", "2"), ("1", "3"),
                                                       ("2", "1"), ("2", "2")]
    shared = {(a.query_id, a.subtopic): a.report.n_shared for a in per if a.report is not None}
    assert shared == {("1", "1"): 1, ("1", "2"): 1, ("1", "3"): 1}
    assert per[0].report.overlap == 1.0 and per[1].report.overlap == 0.0  # 0 vs 1 at threshold 1
    assert "agreement needs overlap" in per[3].problem
    assert round_agreement(store, "div").n_shared == 1  # d1, on its maximum: 2 and 2


def test_the_cli_pools_a_subtopic_round_and_reports_agreement_per_subtopic(store, tmp_path):
    import subprocess
    import sys
    _two_assessors_judge(store)
    path = store.path
    store.close()

    def pooling(*args):
        return subprocess.run([sys.executable, "-m", "pooling", *map(str, args)],
                              capture_output=True, text=True, env={"COLUMNS": "200",
                                                                   **__import__("os").environ})
    made = pooling("pool", path, "--round", "div2", "--strategy", "depth", "--depth", "1",
                   "--subtopics")
    assert made.returncode == 0, made.stderr
    assert "graded on 5 subtopics" in made.stdout
    agreed = pooling("agreement", path, "--round", "div")
    assert agreed.returncode == 0, agreed.stderr
    assert "per subtopic" in agreed.stdout and "not judged yet" not in agreed.stdout
    derived = pooling("qrels", "derive", path, "--round", "div", "--rule", "latest", "--name", "q")
    assert derived.returncode == 0 and "8 subtopic judgments" in derived.stdout, derived.stderr
    plain = pooling("qrels", "plain", path, "--from", "q", "--name", "qp")
    assert plain.returncode == 0 and "3 judgments on 2 topics" in plain.stdout, plain.stderr


SUBTOPIC_JUDGE = '''
import json, sys
print("ready", file=sys.stderr, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    grade = len(request["description"] or "") % 3
    print(json.dumps({"grade": grade, "probability": grade / 2,
                      "rationale": request["title"] + " | " + (request["description"] or "")}),
          flush=True)
'''


def test_a_judge_is_asked_per_subtopic_with_its_text_and_its_calls_say_which(store, tmp_path):
    import shlex
    import sys

    from pooling.judges.model_judges import add_judge, judge_pairs, judge_round
    program = tmp_path / "subtopic_judge.py"
    program.write_text(SUBTOPIC_JUDGE)
    add_judge(store, "prog", "command", {"command": shlex.join([sys.executable, str(program)])})
    report = judge_round(store, "prog", "div", limit=4)
    assert (report.pairs, report.judged, report.failed) == (15, 4, 0)
    report = judge_round(store, "prog", "div")
    assert (report.already, report.judged) == (4, 11)
    calls = store.con.execute("SELECT query_id, doc_id, part, grade, answer FROM judge_calls "
                              "ORDER BY query_id, doc_id, part").fetchall()
    assert len(calls) == 15
    text = "Find what beekeepers do in winter."
    assert calls[1] == ("1", "d1", "2", len(text) % 3, f"bee hives | {text}")
    rows = store.con.execute("SELECT query_id, doc_id, part, grade FROM judgments "
                             "WHERE assessor_id = 'prog' ORDER BY seq").fetchall()
    assert [r[:3] for r in rows[:4]] == [("1", "d1", "1"), ("1", "d1", "2"), ("1", "d1", "3"),
                                         ("1", "d2", "1")]
    assert judge_round(store, "prog", "div").judged == 0  # nothing is asked twice
    with pytest.raises(StoreError, match="judges subtopics"):
        judge_pairs(store, "prog", [("1", "d1")], round_id="div")


def test_the_exported_history_names_each_judgments_subtopic(store, tmp_path):
    import csv

    from pooling.judging.history import export_history
    record(store, _submission(store, "a" * 16, {"1": 2, "2": 0, "3": 1}))
    export_history(store, tmp_path / "history.csv")
    with open(tmp_path / "history.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["doc_id"], r["subtopic"], r["grade"]) for r in rows] == [
        ("d1", "1", "2"), ("d1", "2", "0"), ("d1", "3", "1")]


def test_a_subtopic_round_is_not_sampled_in_strata(tmp_path):
    s = make_store(tmp_path)
    with pytest.raises(StoreError, match="either sampled in strata or judged on subtopics"):
        create_round(s, "div", "sample", strategy_params={"strata": "1", "rates": "1,0.5"},
                     subtopics=True)
    s.close()


def test_subtopic_qrels_go_out_and_come_back_in_ndevals_format(store, tmp_path):
    import subprocess
    import sys

    from pooling.formats.subtopic_qrels import read_subtopic_qrels
    from pooling.judging.rules import derive_qrels
    from pooling.store.qrels import export_subtopic_qrels, subtopic_qrels_table
    _two_assessors_judge(store)
    derive_qrels(store, "latest", "div-latest", round_id="div")
    out = tmp_path / "div.qrels"
    assert export_subtopic_qrels(store, out, "div-latest") == "div-latest"
    assert out.read_text().splitlines()[:3] == ["1 1 d1 2", "1 1 d2 0", "1 2 d1 1"]
    assert (tmp_path / "div.qrels.meta.json").exists()
    assert read_subtopic_qrels(out).num_rows == 8
    again = store.import_qrels(out, name="div-again", format="subtopic")
    assert (again.status, again.format, again.n_rows) == ("imported", "subtopic", 3)
    assert (subtopic_qrels_table(store, "div-again").to_pylist()
            == subtopic_qrels_table(store, "div-latest").to_pylist())
    assert store.import_qrels(out, name="div-again", format="subtopic").status == "already imported"
    path = store.path
    store.close()
    done = subprocess.run([sys.executable, "-m", "pooling", "qrels", "export-subtopics", str(path),
                           "--qrels", "div-again"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == out.read_text(), done.stderr
    plain = subprocess.run([sys.executable, "-m", "pooling", "qrels", "export-subtopics",
                            str(path), "--qrels", "div-plain-none"], capture_output=True, text=True)
    assert plain.returncode != 0 and "Traceback" not in plain.stderr


SUBTOPIC_ECHO_JUDGE = '''
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    grade = int(request["subtopic"]) % 3  # the request names the subtopic it asks about
    print(json.dumps({"grade": grade, "rationale": request["subtopic"]}), flush=True)
'''


def test_a_judges_subtopic_grades_derive_qrels_alone_or_under_the_peoples(store, tmp_path):
    import shlex
    import sys

    from pooling.judges.model_judges import add_judge, judge_round
    from pooling.judging.rules import derive_qrels
    from pooling.store.qrels import subtopic_qrels_table
    program = tmp_path / "echo_judge.py"
    program.write_text(SUBTOPIC_ECHO_JUDGE)
    add_judge(store, "echo", "command", {"command": shlex.join([sys.executable, str(program)])})
    judge_round(store, "echo", "div")
    _two_assessors_judge(store)

    def rows(version):
        return {(r["query_id"], r["subtopic"], r["doc_id"]): r["relevance"]
                for r in subtopic_qrels_table(store, version).to_pylist()}

    alone = derive_qrels(store, "judge-only", "by-judge", round_id="div", judge="echo",
                         judge_grades={2: 1})
    judged = rows("by-judge")
    assert len(judged) == 15 and alone.n_topics == 2
    assert all(grade == {"1": 1, "2": 1, "3": 0}[s] for (_, s, _), grade in judged.items())
    assert store.qrels_info("by-judge")["judges"] == ["echo"]
    derive_qrels(store, "human-first", "people-first", round_id="div", judge="echo", tie="higher")
    people = {("1", "1", "d1"): 2, ("1", "2", "d1"): 1, ("1", "3", "d1"): 1,  # majority, ties up
              ("1", "1", "d2"): 0, ("1", "2", "d2"): 0, ("1", "3", "d2"): 0,
              ("2", "1", "e1"): 1, ("2", "2", "e1"): 0}
    mixed = rows("people-first")
    assert set(mixed) == set(judged)
    assert {k: v for k, v in mixed.items() if k in people} == people
    assert all(mixed[k] == int(k[1]) % 3 for k in mixed if k not in people)  # the judge's own
    with pytest.raises(StoreError, match="needs an automatic judge"):
        derive_qrels(store, "judge-only", "x", round_id="div")
