"""Nugget banks: every edit kept in the append-only history, versions frozen whatever is
edited later, nuggetizer's and iKAT's files imported and exported."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from pooling.errors import FormatError, PoolingError, StoreError
from pooling.formats.nugget_files import read_nuggets
from pooling.store import Store
from pooling.store import nugget_banks as nb


@pytest.fixture
def store(tmp_path):
    with Store.create(tmp_path / "s.duckdb") as s:
        yield s


def texts(store, bank, topic):
    return [(r["nugget_id"], r["importance"], r["text"])
            for r in nb.current_nuggets(store, bank, topic).to_pylist()]


def test_every_edit_is_kept_and_the_bank_is_their_fold(store):
    a = nb.add_nugget(store, "people", "q1", "Paris is the capital", "vital", made_by="ann")
    b = nb.add_nugget(store, "people", "q1", "France is in Europe", made_by="ann")
    c = nb.add_nugget(store, "people", "q1", "Paris is France's capital city", made_by="bob")
    nb.reword_nugget(store, "people", "q1", b, "France lies in western Europe", made_by="bob")
    nb.grade_nugget(store, "people", "q1", b, "vital", made_by="ann")
    nb.merge_nuggets(store, "people", "q1", c, a, text="Paris is the capital of France", made_by="ann")
    d = nb.add_nugget(store, "people", "q1", "The Seine flows through it", made_by="cy")
    nb.delete_nugget(store, "people", "q1", d, made_by="ann", note="off topic")
    assert texts(store, "people", "q1") == [
        (a, "vital", "Paris is the capital of France"),
        (b, "vital", "France lies in western Europe")]
    edits = nb.history(store, "people", "q1")
    assert [(e.action, e.nugget_id, e.made_by) for e in edits] == [
        ("add", a, "ann"), ("add", b, "ann"), ("add", c, "bob"), ("reword", b, "bob"),
        ("grade", b, "ann"), ("merge", c, "ann"), ("reword", a, "ann"), ("add", d, "cy"),
        ("delete", d, "ann")]
    assert edits[5].merged_into == a and edits[-1].note == "off topic"
    assert [e.text for e in edits if e.nugget_id == b] == ["France is in Europe",
                                                          "France lies in western Europe", None]
    # an id is never given again, a deleted nugget cannot be edited
    assert nb.add_nugget(store, "people", "q1", "Another") == "5"
    with pytest.raises(StoreError, match="has no nugget '4'"):
        nb.reword_nugget(store, "people", "q1", d, "back")


def test_a_version_stays_as_frozen_whatever_is_edited_later(store):
    first = nb.add_nugget(store, "b", "q", "one", "vital")
    nb.add_nugget(store, "b", "q", "two")
    v1 = nb.freeze(store, "b")
    assert nb.freeze(store, "b") == v1  # unchanged: no copy
    nb.reword_nugget(store, "b", "q", first, "one, reworded")
    v2 = nb.freeze(store, "b", "b-final")
    assert (v1, v2) == ("b-v1", "b-final")
    assert nb.version_nuggets(store, v1).column("text").to_pylist() == ["one", "two"]
    assert nb.version_nuggets(store, v2).column("text").to_pylist() == ["one, reworded", "two"]
    nb.grade_nugget(store, "b", "q", first, "okay")
    with pytest.raises(StoreError, match="exists already"):
        nb.freeze(store, "b", "b-final")


def test_nuggets_are_ordered_vital_first_and_move_within_their_importance(store):
    ids = [nb.add_nugget(store, "b", "q", f"n{i}", imp) for i, imp in
           enumerate(["okay", "vital", "okay", "vital"])]
    assert [n for n, _, _ in texts(store, "b", "q")] == [ids[1], ids[3], ids[0], ids[2]]
    nb.move_nugget(store, "b", "q", ids[3], ids[1])
    nb.move_nugget(store, "b", "q", ids[0], None)
    assert [n for n, _, _ in texts(store, "b", "q")] == [ids[3], ids[1], ids[2], ids[0]]
    with pytest.raises(StoreError, match="ordered within their importance"):
        nb.move_nugget(store, "b", "q", ids[2], ids[1])


@pytest.mark.parametrize("call, says", [
    (lambda s: nb.add_nugget(s, "b", "q", "  "), "text is empty"),
    (lambda s: nb.add_nugget(s, "b", "q", "x", "essential"), "importance 'essential' is not one of"),
    (lambda s: nb.add_nugget(s, " b", "q", "x"), "starts or ends with whitespace"),
    (lambda s: nb.merge_nuggets(s, "b", "q", "1", "1"), "cannot be merged into itself"),
])
def test_bad_edits_are_refused_and_nothing_is_recorded(store, call, says):
    nb.add_nugget(store, "b", "q", "kept")
    before = len(nb.history(store, "b"))
    with pytest.raises(PoolingError, match=says):
        call(store)
    assert len(nb.history(store, "b")) == before


def nuggetizer_file(tmp_path, records):
    path = tmp_path / "nuggets.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_nuggetizer_file_imports_as_a_version_and_exports_back(store, tmp_path):
    records = [{"qid": "q1", "query": "capital of france?", "nuggets": [
        {"text": "Paris", "importance": "vital"}, {"text": "on the Seine", "importance": "okay"}]},
        {"qid": "q2", "query": "empty", "nuggets": []}]
    path = nuggetizer_file(tmp_path, records)
    done = nb.import_nuggets(store, path, "auto")
    assert (done.version, done.n_nuggets, done.n_topics, done.n_vital) == ("auto-v1", 2, 2, 1)
    assert nb.version_topics(store, "auto-v1") == ["q1", "q2"]
    assert nb.import_nuggets(store, path, "auto").status == "already imported"
    back = [json.loads(line) for line in nb.export_nuggets(store, "auto-v1").splitlines()]
    assert back[0]["nuggets"] == records[0]["nuggets"]
    assert read_nuggets(nuggetizer_file(tmp_path, back)).nuggets.column("text").to_pylist() == [
        "Paris", "on the Seine"]
    assert nb.history(store, "auto")[0].provenance == "imported"


def test_importing_over_a_banks_topics_is_refused_unless_replacing(store, tmp_path):
    nb.add_nugget(store, "b", "q1", "typed by a person", made_by="ann")
    path = nuggetizer_file(tmp_path, [{"qid": "q1", "nuggets": [{"text": "new", "importance": "vital"}]}])
    with pytest.raises(StoreError, match="has nuggets already for 1 topic"):
        nb.import_nuggets(store, path, "b")
    nb.import_nuggets(store, path, "b", replace=True)
    assert texts(store, "b", "q1") == [("2", "vital", "new")]
    kept = [(e.action, e.text) for e in nb.history(store, "b")]
    assert kept[0] == ("add", "typed by a person") and kept[1][0] == "delete"


@pytest.mark.parametrize("line, says", [
    ('{"qid": "1", "nuggets": [{"text": "x", "importance": "key"}]}', "importance must be one of vital, okay"),
    ('{"qid": "1"}', "missing field 'nuggets'"),
    ('{"qid": "1", "nuggets": {}}', "'nuggets' must be a list"),
    ('{"qid": "2", "nuggets": []}\n{"qid": "2", "nuggets": []}', "duplicate qid '2' (first at line 1)"),
])
def test_a_malformed_nugget_file_is_refused_at_its_line_and_nothing_is_imported(store, tmp_path, line, says):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(FormatError, match=re.escape(says)) as caught:
        nb.import_nuggets(store, path, "b")
    assert f"{path}:" in str(caught.value)
    assert nb.banks(store) == []


def test_the_ikat_nuggets_import_with_importance_from_the_stated_grade_rule(store, shared_dir):
    folder = shared_dir / "data" / "ikat2024-nuggets"
    human = nb.import_nuggets(store, folder / "gold_nuggets_human.json", "people")
    assert (human.n_nuggets, human.n_topics) == (2279, 116)
    # README: passage grades 1: 410, 2: 1,225, 3: 587, 4: 57; vital from 3 by default
    assert human.n_vital == 587 + 57
    strict = nb.import_nuggets(store, folder / "gold_nuggets_human.json", "people4", vital_from=4)
    assert strict.n_vital == 57
    model = nb.import_nuggets(store, folder / "gold_nuggets_llm.json", "gpt4")
    assert model.n_nuggets == 6680
    first = nb.version_nuggets(store, "people-v1").to_pylist()
    assert all(r["provenance"] == "imported" for r in first)
    assert "relevance" not in nb.export_nuggets(store, "people-v1")


def test_the_cli_edits_and_shows_the_history(tmp_path):
    path = tmp_path / "cli.duckdb"
    cli = [sys.executable, "-m", "pooling"]

    def run(*args):
        return subprocess.run([*cli, *args], capture_output=True, text=True)

    assert run("init", str(path)).returncode == 0
    added = run("nuggets", "add", str(path), "--bank", "p", "q1", "Paris is the capital",
                "--importance", "vital", "--by", "ann")
    assert added.returncode == 0 and "added nugget 1" in added.stdout
    assert run("nuggets", "reword", str(path), "--bank", "p", "q1", "1", "Paris, capital of France",
               "--by", "bob").returncode == 0
    shown = run("nuggets", "history", str(path), "--bank", "p")
    assert "reword" in shown.stdout and "bob" in shown.stdout and "ann" in shown.stdout
    frozen = run("nuggets", "freeze", str(path), "--bank", "p")
    assert "version p-v1" in frozen.stdout
    exported = run("nuggets", "export", str(path), "p-v1")
    assert json.loads(exported.stdout)["nuggets"] == [{"text": "Paris, capital of France",
                                                       "importance": "vital"}]
    wrong = run("nuggets", "grade", str(path), "--bank", "p", "q1", "7", "okay")
    assert wrong.returncode == 1 and "has no nugget '7'" in wrong.stderr
