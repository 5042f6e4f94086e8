"""Import rules of the store: naming, conflicts, metadata, duplicates, topics, qrels versions."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.errors import FormatError, SchemaError, StoreError
from pooling.formats.trec_run import parse_trec_run, read_trec_run
from pooling.store import Store
from pooling.store.runs import read_run_meta


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def store(tmp_path):
    s = Store.create(tmp_path / "c.duckdb")
    yield s
    s.close()


RUN_A = "1 Q0 d1 1 3.0 alpha\n1 Q0 d2 2 2.0 alpha\n2 Q0 d3 1 1.5 alpha\n"


def test_run_id_defaults_to_the_tag_and_counts_are_recorded(store, tmp_path):
    report = store.import_runs([write(tmp_path / "a.run", RUN_A)])
    (item,) = report.items
    assert (item.run_id, item.n_rows, item.n_topics) == ("alpha", 3, 2)
    row = store.one("r", "SELECT tag, source, sha256, dedupe FROM runs WHERE run_id = 'alpha'")
    assert row[0] == "alpha" and row[1].endswith("a.run") and len(row[2]) == 64 and row[3] == "error"


def test_two_files_with_the_same_tag_in_one_call_name_both_files(store, tmp_path):
    a = write(tmp_path / "a.run", RUN_A)
    b = write(tmp_path / "b.run", RUN_A.replace("3.0", "4.0"))
    with pytest.raises(StoreError) as info:
        store.import_runs([a, b])
    message = str(info.value)
    assert str(a) in message and str(b) in message and "--meta" in message
    assert store.run_ids() == []


def test_an_existing_run_id_is_refused_with_a_hint_to_name_it(store, tmp_path):
    store.import_runs([write(tmp_path / "a.run", RUN_A)])
    b = write(tmp_path / "b.run", RUN_A.replace("3.0", "4.0"))
    with pytest.raises(StoreError, match="--name"):
        store.import_runs([b])
    store.import_runs([b], name="alpha2")
    assert store.run_ids() == ["alpha", "alpha2"]


def test_meta_file_gives_run_ids_teams_and_pooled_flags(store, tmp_path):
    (tmp_path / "runs").mkdir()
    a = write(tmp_path / "runs/a.run", RUN_A)
    b = write(tmp_path / "runs/b.run", RUN_A.replace("3.0", "4.0"))
    meta = write(
        tmp_path / "runs.tsv",
        "file\trun_id\tteam\tdescription\tpooled\n"
        "runs/a.run\tA1\tteamX\tfirst try\tyes\nruns/b.run\tB1\tteamY\tsecond\tno\n",
    )
    store.import_runs([a, b], meta=read_run_meta(meta))
    rows = store.con.execute("SELECT run_id, tag, team, description, pooled FROM runs ORDER BY 1").fetchall()
    assert rows == [("A1", "alpha", "teamX", "first try", True), ("B1", "alpha", "teamY", "second", False)]


def test_a_meta_file_with_a_bad_pooled_value_names_its_line(tmp_path):
    meta = write(tmp_path / "m.tsv", "file\trun_id\tteam\tdescription\tpooled\na.run\tA\tt\td\tmaybe\n")
    with pytest.raises(FormatError, match=r"m.tsv:2: pooled must be yes or no"):
        read_run_meta(meta)


def test_dedupe_first_keeps_the_first_occurrence_and_the_store_records_it(store, tmp_path):
    text = "1 Q0 d1 1 3.0 t\n1 Q0 d2 2 2.0 t\n1 Q0 d1 3 9.0 t\n"
    path = write(tmp_path / "dup.run", text)
    with pytest.raises(FormatError, match=r"dup.run:3: doc 'd1' repeated for query '1' \(first at line 1\)"):
        store.import_runs([path])
    report = store.import_runs([path], dedupe="first")
    assert report.items[0].duplicates_dropped == 1
    assert store.run_table("t").to_pylist() == [
        {"query_id": "1", "doc_id": "d1", "rank": 1, "score": 3.0},
        {"query_id": "1", "doc_id": "d2", "rank": 2, "score": 2.0},
    ]
    assert store.one("r", "SELECT dedupe, duplicates_dropped FROM runs") == ("first", 1)


def test_a_refused_import_of_several_files_names_the_problems_of_every_bad_file(store, tmp_path):
    good = write(tmp_path / "a.run", RUN_A)
    repeats = write(tmp_path / "b.run", "".join(f"1 Q0 d{i} {i} 1.0 beta\n" for i in range(1, 8))
                    + "".join(f"1 Q0 d{i} {i + 7} 0.5 beta\n" for i in range(1, 8)))
    broken = write(tmp_path / "c.run", "1 Q0 d1 1 2.0 gamma\n" + "1 Q0 dx\n" * 7)
    with pytest.raises(FormatError) as info:
        store.import_runs([good, repeats, broken])
    lines = str(info.value).splitlines()
    # The first five problems of each bad file, its count, how many more, then its hint (once).
    assert lines[:5] == [f"{repeats}:{i + 7}: doc 'd{i}' repeated for query '1' (first at line {i})"
                         for i in range(1, 6)]
    assert lines[5] == f"{repeats}: 7 repeated (query_id, doc_id) line(s) in 7 pair(s)"
    assert lines[6].startswith(f"{repeats}: Use --dedupe first")
    assert lines[7:12] == [f"{broken}:{n}: expected at least 6 fields (query_id q0 doc_id rank "
                           "score tag), found 3" for n in range(2, 7)]
    assert lines[12] == f"{broken}: and 2 more problem(s)"
    assert lines[-1] == "Nothing was imported: 2 of 3 files have problems; fix them and import again."
    assert not any(line.startswith(str(good)) for line in lines)
    assert store.run_ids() == []
    assert store.one("imports", "SELECT count(*) FROM imports") == (0,)


def test_every_file_with_repeated_documents_has_its_count_when_many_files_are_refused(
        store, tmp_path):
    # Files with the same count once shared one line: only the first file had its count.
    paths = []
    for k in range(25):
        text = "".join(f"1 Q0 d{i} {i} 1.0 t{k}\n" for i in range(1, 4)) + "1 Q0 d1 4 0.5 " + f"t{k}\n"
        if k % 2:
            path = tmp_path / f"r{k}.run.gz"
            path.write_bytes(gzip.compress(text.encode()))
        else:
            path = write(tmp_path / f"r{k}.run", text)
        paths.append(path)
    with pytest.raises(FormatError) as info:
        store.import_runs(paths)
    text = str(info.value)
    for path in paths:
        assert f"{path}: 1 repeated (query_id, doc_id) line(s) in 1 pair(s)" in text
    assert text.count("Use --dedupe first") == 1


def test_a_file_whose_tag_cannot_be_read_does_not_hide_the_next_bad_file(store, tmp_path):
    unreadable = write(tmp_path / "a.run", "1 Q0 d1\n1 Q0 d2 2 1.0 alpha\n")
    repeats = write(tmp_path / "b.run", "1 Q0 d1 1 2.0 beta\n1 Q0 d1 2 1.0 beta\n")
    with pytest.raises(FormatError) as info:
        store.import_runs([unreadable, repeats])
    text = str(info.value)
    assert f"{unreadable}:1: expected at least 6 fields" in text
    assert f"{repeats}:2: doc 'd1' repeated for query '1' (first at line 1)" in text
    assert store.run_ids() == []


def test_unknown_topics_warn_by_default_and_fail_with_strict(store, tmp_path):
    store.import_topics(write(tmp_path / "t.tsv", "1\tfirst topic\n"))
    path = write(tmp_path / "a.run", RUN_A)
    with pytest.raises(StoreError, match="unknown to the store: 2"):
        store.import_runs([path], strict=True)
    assert store.run_ids() == []
    report = store.import_runs([path])
    assert report.warnings[0] == "run 'alpha' has 1 topic(s) unknown to the store: 2"
    assert "map them with --topic-map FILE" in report.warnings[1]  # ids written another way


def test_several_tags_are_an_error_unless_split_by_tag(store, tmp_path):
    path = write(tmp_path / "two.run", RUN_A + "1 Q0 d9 1 1.0 beta\n")
    with pytest.raises(FormatError, match="(?s)2 different run tags.*--split-by-tag"):
        store.import_runs([path])
    report = store.import_runs([path], split_by_tag=True)
    assert sorted(i.run_id for i in report.items) == ["alpha", "beta"]


def test_trec_eval_tolerances_are_accepted(store, tmp_path):
    text = (
        "# a comment line\n"
        "1\tq0  d1 1 3.0 t   trailing junk fields\n"
        "\n"
        "  1 Q0 d2 2 2.5e0 t\r\n"
        "2 0 d3 1 -1 t\n"
    )
    path = tmp_path / "messy.run.gz"
    path.write_bytes(gzip.compress(text.encode()))
    store.import_runs([path])
    assert store.run_table("t").to_pylist() == [
        {"query_id": "1", "doc_id": "d1", "rank": 1, "score": 3.0},
        {"query_id": "1", "doc_id": "d2", "rank": 2, "score": 2.5},
        {"query_id": "2", "doc_id": "d3", "rank": 1, "score": -1.0},
    ]


def test_the_truncated_golden_run_with_extra_fields_reads(shared_dir):
    (run,) = read_trec_run(shared_dir / "golden/trec_eval/results.trunc")
    assert run.table.num_rows > 0 and run.tag == "STANDARD"


def test_every_problem_is_reported_at_once_with_its_line():
    bad = b"1 Q0 d1 1 x t\n1 Q0 d2\n1 X0 d3 1 1 t\n1 Q0 d4 1.5 1 t\n1 Q0 d5 1 inf t\n"
    with pytest.raises(FormatError) as info:
        parse_trec_run(bad, "r.txt")
    text = str(info.value)
    for expected in [
        "r.txt:1: score must be a finite number, found 'x'",
        "r.txt:2: expected at least 6 fields",
        "r.txt:4: rank must be an integer, found '1.5'",
        "r.txt:5: score must be a finite number, found 'inf'",
    ]:
        assert expected in text


def test_an_empty_run_file_is_an_error(store, tmp_path):
    with pytest.raises(FormatError, match="empty"):
        store.import_runs([write(tmp_path / "e.run", "")])


def test_qrels_versions_are_immutable_and_record_their_grade_scale(store, tmp_path):
    q = write(tmp_path / "q.txt", "1 0 d1 2\n1 0 d2 0\n2 0 d3 -1\n")
    r = store.import_qrels(q, name="v1")
    assert r.grades == (-1, 0, 2)
    with pytest.raises(StoreError, match="immutable"):
        store.import_qrels(write(tmp_path / "q2.txt", "1 0 d1 1\n"), name="v1")
    assert store.import_qrels(q, name="v1").status == "already imported"


def test_qrels_with_a_repeated_pair_or_bad_grade_name_the_lines(store, tmp_path):
    q = write(tmp_path / "q.txt", "1 0 d1 1\n1 0 d2 high\n1 0 d1 0\n")
    with pytest.raises(FormatError, match=r"q.txt:2: relevance must be an integer"):
        store.import_qrels(q)
    q = write(tmp_path / "q.txt", "1 0 d1 1\n1 0 d1 0\n")
    with pytest.raises(FormatError, match=r"q.txt:2: doc 'd1' judged again for query '1' \(first at line 1\)"):
        store.import_qrels(q)
    assert store.qrels_versions() == []


def test_runs_and_qrels_import_from_dataframes(store):
    import pandas as pd

    df = pd.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "score": [2.0, 1.0]})
    store.import_run(df, "frame")
    assert store.run_table("frame")["doc_id"].to_pylist() == ["a", "b"]
    store.import_qrels(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}), name="q")
    assert store.qrels_table("q").num_rows == 1


def test_a_store_from_a_newer_pooling_is_refused(tmp_path):
    path = tmp_path / "new.duckdb"
    Store.create(path).close()
    import duckdb

    con = duckdb.connect(str(path))
    con.execute("UPDATE store_meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(SchemaError, match="upgrade pooling"):
        Store(path)


def test_cli_errors_are_one_line_without_traceback(tmp_path):
    store = tmp_path / "s.duckdb"
    bad = write(tmp_path / "bad.run", "1 Q0 d1 1 x t\n")
    run = [sys.executable, "-m", "pooling"]
    assert subprocess.run([*run, "init", str(store)], capture_output=True).returncode == 0
    proc = subprocess.run([*run, "import", "runs", str(store), str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert f"{bad}:1: score must be a finite number" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    verbose = subprocess.run([*run, "--verbose", "import", "runs", str(store), str(bad)],
                             capture_output=True, text=True)
    assert "Traceback" in verbose.stderr


def test_runs_and_qrels_import_from_parquet_and_csv(store, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 2.0],
                             "rank": [2, 1]}), tmp_path / "r.parquet")
    store.import_run(tmp_path / "r.parquet", "pq")
    assert store.run_table("pq")["doc_id"].to_pylist() == ["b", "a"]
    write(tmp_path / "q.csv", "qid,docno,rel\n1,a,2\n1,b,0\n")
    store.import_qrels(tmp_path / "q.csv", name="csvq")
    assert store.qrels_info("csvq")["grades"] == [0, 2]


def test_letor_labels_become_qrels_and_features_become_runs(tmp_path):
    letor = write(
        tmp_path / "train.txt",
        "2 qid:10 1:0.5 2:3.0 # docid = D1\n0 qid:10 1:0.9 2:1.0 # docid = D2\n"
        "1 qid:11 1:0.1 2:2.0 # docid = D3\n",
    )
    store_path = tmp_path / "l.duckdb"
    run = [sys.executable, "-m", "pooling"]
    subprocess.run([*run, "init", str(store_path)], check=True, capture_output=True)
    proc = subprocess.run([*run, "import", "letor", str(store_path), str(letor), "--name", "lt",
                           "--feature-runs", "all"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with Store(store_path, read_only=True) as s:
        assert s.qrels_table("lt").to_pylist() == [
            {"query_id": "10", "doc_id": "D1", "relevance": 2},
            {"query_id": "10", "doc_id": "D2", "relevance": 0},
            {"query_id": "11", "doc_id": "D3", "relevance": 1},
        ]
        assert s.run_ids() == ["lt_f1", "lt_f2"]
        ranked = s.run_table("lt_f1").to_pylist()
        assert [r["doc_id"] for r in ranked if r["query_id"] == "10"] == ["D2", "D1"]
