"""SMART collections (Cranfield, CACM, CISI, MED, NPL): records, queries numbered by position,
and relevance files with their grade mappings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pooling.errors import FormatError
from pooling.formats import read_documents, read_qrels, read_topics
from pooling.formats.smart import read_smart_documents, read_smart_qrels, read_smart_topics

DOCS = """.I 1
.T
experimental investigation of the aerodynamics of a wing
in a slipstream .
.A
brenckman,m.
.B
j. ae. scs. 25, 1958, 324.
.W
experimental investigation of the aerodynamics of a wing in a slipstream .
an experimental study of a wing in a propeller slipstream was made .
.I 2
.T
simple shear flow past a flat plate .
.A
ting-yili
.B
department of aeronautical engineering, rensselaer polytechnic
institute
.W
.I 3
.T
.W
"""
QUERIES = """.I 001
.W
what similarity laws must be obeyed when constructing aeroelastic models
of heated high speed aircraft .
.I 002
.W
what are the structural and aeroelastic problems associated with flight
of high speed aircraft .
.I 004
.W
what problems of heat conduction in composite slabs have been solved so far .
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_documents_keep_title_text_and_the_other_fields_in_extra(tmp_path):
    table = read_smart_documents(write(tmp_path, "docs.all", DOCS))
    rows = table.to_pylist()
    assert [r["doc_id"] for r in rows] == ["1", "2", "3"]
    assert rows[0]["title"] == "experimental investigation of the aerodynamics of a wing in a slipstream ."
    assert rows[0]["text"].endswith("was made .")
    assert '"source":"j. ae. scs. 25, 1958, 324."' in rows[0]["extra"]
    assert rows[1]["text"] is None and "rensselaer polytechnic institute" in rows[1]["extra"]
    assert rows[2]["title"] is None and rows[2]["text"] is None  # empty fields are real


def test_queries_are_numbered_by_position_as_relevance_files_count_them(tmp_path):
    path = write(tmp_path, "q.qry", QUERIES)
    by_position = read_smart_topics(path).to_pylist()
    assert [r["query_id"] for r in by_position] == ["1", "2", "3"]
    assert by_position[2]["extra"] == '{"smart_id":"004"}'
    assert [r["query_id"] for r in read_smart_topics(path, numbering="id").to_pylist()] == [
        "001", "002", "004"]


def test_the_registry_sniffs_smart_from_content(tmp_path):
    assert read_documents(write(tmp_path, "cran.all.1400", DOCS)).num_rows == 3
    assert read_topics(write(tmp_path, "queries.txt", QUERIES)).num_rows == 3


def test_cranfield_grades_run_backwards_and_minus_one_is_not_relevant(tmp_path):
    path = write(tmp_path, "cranqrel", "1 184 2 \n1 29 1\n1 12 4\n2 12 -1\n")
    rows = read_smart_qrels(path).to_pylist()
    assert [(r["query_id"], r["doc_id"], r["relevance"]) for r in rows] == [
        ("1", "184", 3), ("1", "29", 4), ("1", "12", 1), ("2", "12", 0)]
    assert set(read_smart_qrels(path, "binary")["relevance"].to_pylist()) == {1}
    assert read_smart_qrels(path, "as-is")["relevance"].to_pylist() == [2, 1, 4, -1]


def test_bad_lines_are_named_with_file_and_line(tmp_path):
    with pytest.raises(FormatError) as info:
        read_smart_qrels(write(tmp_path, "bad", "1 184 2\n1 29\n1 30 x\n1 31 7\n1 184 3\n"))
    text = str(info.value)
    for line in (2, 3, 4, 5):
        assert f"bad:{line}:" in text
    with pytest.raises(FormatError, match=r"docs:1: text outside a field"):
        read_smart_documents(write(tmp_path, "docs", "stray\n.I 1\n.W\nx\n"))
    with pytest.raises(FormatError, match="duplicate document id '1'"):
        read_smart_documents(write(tmp_path, "dup", ".I 1\n.W\na\n.I 1\n.W\nb\n"))


def test_the_real_cranfield_collection(shared_dir):
    base = shared_dir / "data/cranfield"
    docs = read_smart_documents(base / "cran.all.1400")
    topics = read_smart_topics(base / "cran.qry")
    qrels = read_smart_qrels(base / "cranqrel")
    assert docs.num_rows == 1400 and topics.num_rows == 225
    assert topics.to_pylist()[2]["extra"] == '{"smart_id":"004"}'  # .I 004 is query 3
    query_ids = {str(i) for i in range(1, 226)}
    assert set(qrels["query_id"].to_pylist()) == query_ids
    assert set(qrels["doc_id"].to_pylist()) <= set(docs["doc_id"].to_pylist())
    assert sorted(set(qrels["relevance"].to_pylist())) == [0, 1, 2, 3, 4]


def test_cranfield_imports_through_the_cli(shared_dir, tmp_path):
    from typer.testing import CliRunner

    from pooling.cli import app
    from pooling.store import Store

    base = shared_dir / "data/cranfield"
    store = tmp_path / "cran.duckdb"
    runner = CliRunner()
    for args in (["init", store], ["import", "docs", store, base / "cran.all.1400"],
                 ["import", "topics", store, base / "cran.qry"],
                 ["import", "qrels", store, base / "cranqrel", "--format", "smart", "--name", "cran"]):
        result = runner.invoke(app, [str(a) for a in args])
        assert result.exit_code == 0, result.output
    with Store(store, read_only=True) as s:
        assert s.one("n", "SELECT count(*) FROM documents") == (1400,)
        assert s.one("t", "SELECT title FROM topics WHERE query_id = '3'")[0].startswith(
            "what problems of heat conduction")
        assert s.one("q", "SELECT n_topics FROM qrels_versions WHERE name = 'cran'") == (225,)


# -- qrels told from their lines ---------------------------------------------------------------


def test_a_smart_relevance_file_is_told_from_its_lines_and_read_with_cranfield_grades(tmp_path):
    reading = read_qrels(write(tmp_path, "cranqrel", "1 184 2 \n1 29 1\n1 12 4\n2 12 -1\n"))
    assert (reading.format, reading.grades) == ("smart", "cranfield")
    assert reading.table.select(["query_id", "doc_id", "relevance"]).to_pylist() == [
        {"query_id": "1", "doc_id": "184", "relevance": 3},
        {"query_id": "1", "doc_id": "29", "relevance": 4},
        {"query_id": "1", "doc_id": "12", "relevance": 1},
        {"query_id": "2", "doc_id": "12", "relevance": 0}]


def test_grades_map_a_smart_file_told_from_its_lines_as_they_do_a_named_one(tmp_path):
    path = write(tmp_path, "cranqrel", "1 184 2\n1 29 1\n2 12 -1\n")
    for grades in ("binary", "as-is"):
        told, named = read_qrels(path, grades=grades), read_qrels(path, "smart", grades)
        assert told.table.equals(named.table) and told.grades == grades
    assert read_qrels(path, grades="binary").table["relevance"].to_pylist() == [1, 1, 1]


def test_trec_and_letor_qrels_are_still_told_as_such(tmp_path):
    trec = read_qrels(write(tmp_path, "qrels.txt", "# a comment\n301 0 FBIS3-10082 1\n301 0 d2 0\n"))
    assert (trec.format, trec.grades, trec.table.num_rows) == ("trec", None, 2)
    letor = read_qrels(write(tmp_path, "train.txt", "2 qid:1 1:0.5 # D1\n"))
    assert (letor.format, letor.table["relevance"].to_pylist()) == ("letor", [2])


def test_a_two_column_smart_file_asks_for_binary_grades(tmp_path):
    path = write(tmp_path, "qrels.text", "1 28\n1 35\n2 12\n")
    with pytest.raises(FormatError) as info:
        read_qrels(path)
    text = str(info.value)
    assert f"{path}:1: expected at least 3 fields (query doc grade), found 2" in text
    assert "--grades binary" in text and "--format trec" in text
    assert read_qrels(path, grades="binary").table.num_rows == 3


def test_lines_of_three_fields_among_trec_lines_suggest_format_smart(tmp_path):
    path = write(tmp_path, "mixed", "1 0 d1 1\n1 0 d2 0\n1 184 2\n")
    with pytest.raises(FormatError) as info:
        read_qrels(path)
    text = str(info.value)
    assert f"{path}:3: expected 4 fields (query_id iter doc_id relevance), found 3" in text
    assert text.endswith("if this is a SMART relevance file (query doc grade), import it with "
                         "--format smart.")
    with pytest.raises(FormatError) as named:  # a format given is not second-guessed
        read_qrels(path, "trec")
    assert "--format smart" not in str(named.value)


def test_grades_for_a_file_read_as_trec_are_refused_naming_format_smart(tmp_path):
    path = write(tmp_path, "q.txt", "1 0 d1 1\n")
    with pytest.raises(FormatError, match="read as trec qrels\nDrop --grades, or read the file as "
                       "SMART with --format smart"):
        read_qrels(path, grades="binary")


def test_the_real_cranqrel_imports_without_naming_its_format(shared_dir, tmp_path):
    from typer.testing import CliRunner

    from pooling.cli import app
    from pooling.store import Store

    cranqrel = shared_dir / "data/cranfield/cranqrel"
    store = tmp_path / "cran.duckdb"
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(store)]).exit_code == 0
    result = runner.invoke(app, ["import", "qrels", str(store), str(cranqrel)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith("grades 0, 1, 2, 3, 4; read as a SMART relevance file, "
                                          "--grades cranfield)")
    with Store(store, read_only=True) as s:
        assert s.qrels_info("cranqrel")["n_topics"] == 225
        stored = {tuple(r.values()) for r in s.qrels_table("cranqrel").to_pylist()}
        (details,) = s.one("d", "SELECT details FROM imports WHERE target = 'cranqrel'")
    assert json.loads(details) == {"format": "smart", "grades": "cranfield"}
    assert stored == {tuple(r.values()) for r in read_smart_qrels(cranqrel).to_pylist()}
