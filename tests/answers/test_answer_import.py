"""Answer runs in the store: imported all or nothing, references pooled as a ranked run,
topics refused or added, the same file twice stored once, and exported as given."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pooling.errors import FormatError, StoreError
from pooling.store import Store
from pooling.store.answers import answers_table, export_answers, import_answers, sentences_table
from pooling.store.schema import DATA_TABLES


def rag(run, topic, refs, answer):
    return json.dumps({"run_id": run, "topic_id": topic, "topic": f"question {topic}",
                       "references": refs, "response_length": 5, "answer": answer})


@pytest.fixture
def files(tmp_path):
    a = tmp_path / "runA.jsonl"
    a.write_text(rag("A", "1", ["d1", "d2"], [{"text": "One.", "citations": [1, 0]}]) + "\n"
                 + rag("A", "2", ["d3"], [{"text": "Two.", "citations": [0]}]) + "\n")
    b = tmp_path / "runB.jsonl"
    b.write_text(rag("B", "1", ["d2", "d9"], [{"text": "Uno.", "citations": []},
                                               {"text": "Dos.", "citations": [1]}]) + "\n")
    return a, b


@pytest.fixture
def store(tmp_path):
    with Store.create(tmp_path / "s.duckdb") as s:
        yield s


def digests(store):
    return {t: store.table_digest(t) for t in DATA_TABLES}


def test_answers_sentences_and_a_ranked_run_of_the_references_are_stored(store, files):
    report = import_answers(store, files, add_topics=True)
    assert [(i.run_id, i.n_answers, i.n_sentences, i.n_citations, i.ranked_run)
            for i in report.items] == [("A", 2, 2, 3, True), ("B", 1, 2, 1, True)]
    assert sorted(report.topics_added) == ["1", "2"]
    ranked = store.run_table("A").to_pylist()
    assert [(r["query_id"], r["doc_id"], r["rank"]) for r in ranked] == [
        ("1", "d1", 1), ("1", "d2", 2), ("2", "d3", 1)]
    assert store.one("t", "SELECT title FROM topics WHERE query_id = '2'")[0] == "question 2"
    said = sentences_table(store, "B").to_pylist()
    assert [(s["sentence"], s["citations"]) for s in said] == [(0, []), (1, ["d9"])]


def test_the_same_file_again_is_already_imported_and_stores_nothing(store, files):
    import_answers(store, files, add_topics=True)
    before = digests(store)
    again = import_answers(store, [files[0]])
    assert [(i.run_id, i.status) for i in again.items] == [("A", "already imported")]
    assert digests(store) == before


def test_topics_the_store_lacks_are_refused_without_add_topics(store, files):
    before = digests(store)
    with pytest.raises(StoreError, match=r"2 topic\(s\) are not in the store \('1', '2'\).*--add-topics"):
        import_answers(store, files)
    assert digests(store) == before


def test_one_bad_file_refuses_the_call_and_nothing_is_imported(store, files, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(rag("C", "1", ["x"], [{"text": "t", "citations": [4]}]) + "\n")
    before = digests(store)
    with pytest.raises(FormatError) as caught:
        import_answers(store, [*files, bad], add_topics=True)
    assert f"{bad}:1: answer[0] cites index 4" in str(caught.value)
    assert "Nothing was imported" in str(caught.value)
    assert digests(store) == before


def test_a_run_id_the_store_holds_is_refused(store, files, tmp_path):
    import_answers(store, [files[0]], add_topics=True)
    other = tmp_path / "again.jsonl"
    other.write_text(rag("A", "1", ["d7"], [{"text": "New.", "citations": [0]}]) + "\n")
    before = digests(store)
    with pytest.raises(StoreError, match="already holds answers of run 'A'"):
        import_answers(store, [other])
    assert digests(store) == before


def test_a_ranked_run_of_the_same_name_is_refused_unless_references_stay_out(store, files, tmp_path):
    run = tmp_path / "A.run"
    run.write_text("1 Q0 d5 1 9.0 A\n")
    store.import_topics(_topics(tmp_path))
    store.import_runs([run])
    with pytest.raises(StoreError, match="already holds a ranked run 'A'"):
        import_answers(store, [files[0]])
    report = import_answers(store, [files[0]], references_as_run=False)
    assert report.items[0].ranked_run is False
    assert store.run_table("A").num_rows == 1


def _topics(tmp_path):
    path = tmp_path / "topics.tsv"
    path.write_text("1\tquestion one\n2\tquestion two\n")
    return path


def test_export_gives_back_each_answer_as_given(store, files):
    import_answers(store, files, add_topics=True)
    assert export_answers(store, "A") == files[0].read_text()
    assert [r["line"] for r in answers_table(store, "A").to_pylist()] == [1, 2]


def test_the_cli_imports_lists_and_exports_answers(tmp_path, files):
    path = tmp_path / "cli.duckdb"
    cli = [sys.executable, "-m", "pooling"]
    subprocess.run([*cli, "init", str(path)], check=True, capture_output=True)
    done = subprocess.run([*cli, "import", "answers", str(path), *map(str, files), "--add-topics"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "imported answer run A (rag24: 2 answers over 2 topics, 2 sentences, 3 citations" in done.stdout
    listed = subprocess.run([*cli, "answers", "list", str(path)], capture_output=True, text=True)
    assert listed.returncode == 0 and "rag24" in listed.stdout
    out = tmp_path / "back.jsonl"
    subprocess.run([*cli, "export", "answers", str(path), "B", "-o", str(out)], check=True,
                   capture_output=True)
    assert out.read_text() == files[1].read_text()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"run_id": "Z", "topic_id": "1"}\n')
    refused = subprocess.run([*cli, "import", "answers", str(path), str(bad)],
                             capture_output=True, text=True)
    assert refused.returncode == 1
    assert f"{bad}:1: missing field 'answer'" in refused.stderr


def test_the_real_answer_runs_import_and_come_back_byte_for_byte(shared_dir, tmp_path):
    rag24 = sorted((shared_dir / "data" / "rag24-baseline-answers").glob("*.jsonl"))
    ikat = shared_dir / "data" / "ikat2024-nuggets" / "automatic_responses.json"
    with Store.create(tmp_path / "real.duckdb") as s:
        report = import_answers(s, [*rag24, ikat], add_topics=True)
        assert len(report.items) == 3 + 19
        assert s.one("n", "SELECT count(*) FROM answers")[0] == 3 * 301 + 1501
        for path in rag24:
            assert export_answers(s, path.stem) == path.read_text()
        original = json.loads(ikat.read_text())
        back = json.loads(export_answers(s, "ksu"))
        assert back == {q: {"ksu": runs["ksu"]} for q, runs in original.items() if "ksu" in runs}
        # the iKAT topics have no text in the file: added by id alone
        assert s.one("t", "SELECT title FROM topics WHERE query_id = '0_2'")[0] is None
