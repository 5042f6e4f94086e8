"""Fixing runs in place: remove, replace and rename, each recorded with the old content's
checksum, qrels and judgments untouched, cached values dropped, a pooled run refused without
--force; and a run file imported again under other options refused with what differs."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.errors import FormatError, StoreError
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import Judgment, record
from pooling.judging.rounds import create_round
from pooling.store import Store
from pooling.store.evaluate import evaluate_store
from pooling.store.run_changes import PooledRunError

DEMO = Path(__file__).resolve().parents[2] / "collections" / "demo"
BM25 = DEMO / "runs" / "sysA_bm25.run"
QL = DEMO / "runs" / "sysB_ql.run"


def pooling(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, check=False, timeout=120, env={**os.environ, "COLUMNS": "300"})


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def demo(tmp_path) -> Path:
    """The demo collection's topics, qrels and two runs, evaluated once (values cached)."""
    path = tmp_path / "demo.duckdb"
    with Store.create(path) as s:
        s.import_topics(DEMO / "topics.jsonl")
        s.import_runs([BM25, QL])
        s.import_qrels(DEMO / "truth.qrels", name="truth")
        evaluate_store(s, measures=["P@5"])
    return path


def topic_map(tmp_path: Path, pairs: dict[str, str]) -> Path:
    path = tmp_path / "map.tsv"
    path.write_text("".join(f"{w}\t{c}\n" for w, c in pairs.items()))
    return path


def counts(s: Store, table: str, run_id: str) -> int:
    return s.one("count", f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id])[0]


def test_removing_a_run_drops_its_rows_and_cached_values_and_records_the_old_checksum(demo):
    with Store(demo) as s:
        assert counts(s, "eval_results", "sysA_bm25") > 0
        qrels_before = s.table_digest("qrels")
        change = s.remove_run("sysA_bm25", by="organiser", reason="wrong file")
        assert s.run_ids() == ["sysB_ql"]
        assert counts(s, "run_results", "sysA_bm25") == 0
        assert counts(s, "eval_results", "sysA_bm25") == 0
        assert counts(s, "eval_results", "sysB_ql") > 0  # another run's values stay
        assert s.table_digest("qrels") == qrels_before
        (recorded,) = s.run_changes()
    assert recorded == change
    assert (recorded.action, recorded.run_id, recorded.new_run_id) == ("remove", "sysA_bm25", None)
    assert (recorded.old_sha256, recorded.old_rows) == (sha256(BM25), 5000)
    assert (recorded.changed_by, recorded.reason, recorded.forced) == ("organiser", "wrong file",
                                                                       False)


def test_a_removed_runs_file_imports_again_as_new(demo):
    with Store(demo) as s:
        s.remove_run("sysA_bm25")
        (again,) = s.import_runs([BM25]).items
    assert (again.status, again.run_id, again.n_rows) == ("imported", "sysA_bm25", 5000)


def test_the_same_file_with_the_same_options_is_still_already_imported(demo):
    done = pooling("import", "runs", demo, BM25)
    assert done.returncode == 0, done.stderr
    assert f"{BM25}: already imported as run sysA_bm25" in done.stdout


def test_the_same_file_with_a_topic_map_is_refused_naming_runs_replace(demo, tmp_path):
    mapping = topic_map(tmp_path, {"101": "101-en", "102": "102-en", "9999": "x"})
    done = pooling("import", "runs", demo, BM25, "--topic-map", mapping)
    assert done.returncode == 1
    assert (f"{BM25} was imported as run 'sysA_bm25' from {BM25} at " in done.stderr)
    assert (f"it was read without a topic map; --topic-map {mapping} changes 2 of its topic "
            "id(s) (e.g. 101 -> 101-en, 102 -> 102-en)") in done.stderr
    assert f"`pooling runs replace {demo} sysA_bm25 {BM25}` with these options" in done.stderr
    with Store(demo, read_only=True) as s:  # nothing changed
        assert s.one("topics", "SELECT count(*) FROM run_results WHERE run_id = 'sysA_bm25' "
                     "AND query_id LIKE '%-en'")[0] == 0


def test_a_map_that_changes_none_of_the_files_topics_is_no_difference(demo, tmp_path):
    mapping = topic_map(tmp_path, {"9999": "x", "101": "101"})
    with Store(demo) as s:
        from pooling.formats.topic_map import read_topic_map

        (again,) = s.import_runs([BM25], topic_map=read_topic_map(mapping)).items
    assert again.status == "already imported"


def test_a_run_imported_with_a_map_and_again_without_it_is_refused(tmp_path):
    mapping = topic_map(tmp_path, {"101": "101-en"})
    from pooling.formats.topic_map import read_topic_map

    with Store.create(tmp_path / "s.duckdb") as s:
        s.import_runs([BM25], topic_map=read_topic_map(mapping))
        (same,) = s.import_runs([BM25], topic_map=read_topic_map(mapping)).items
        assert same.status == "already imported"
        with pytest.raises(StoreError) as info:
            s.import_runs([BM25])
    assert (f"it was read with topic map {mapping} (which changed 1 topic id(s)); this import "
            "maps none") in str(info.value)


def test_replacing_a_run_with_a_topic_map_applies_it_keeps_its_description_and_records_both_checksums(
        demo, tmp_path):
    mapping = topic_map(tmp_path, {str(q): f"{q}-en" for q in range(101, 151)})
    with Store(demo) as s:
        s.sql("describe", "UPDATE runs SET team = 'teamA', description = 'BM25' "
              "WHERE run_id = 'sysA_bm25'")
    done = pooling("runs", "replace", demo, "sysA_bm25", BM25, "--topic-map", mapping,
                   "--reason", "topic ids")
    assert done.returncode == 0, done.stderr
    assert "replaced run sysA_bm25: 5,000 rows" in done.stdout
    with Store(demo, read_only=True) as s:
        topics = {r[0] for r in s.sql("t", "SELECT DISTINCT query_id FROM run_results "
                                      "WHERE run_id = 'sysA_bm25'").fetchall()}
        assert topics == {f"{q}-en" for q in range(101, 151)}
        assert s.one("meta", "SELECT team, description FROM runs WHERE run_id = 'sysA_bm25'") == (
            "teamA", "BM25")
        assert counts(s, "eval_results", "sysA_bm25") == 0
        (change,) = s.run_changes("sysA_bm25")
    assert (change.action, change.old_sha256, change.new_sha256) == ("replace", sha256(BM25),
                                                                     sha256(BM25))
    # The file under the new options is now what the store holds: "already imported".
    again = pooling("import", "runs", demo, BM25, "--topic-map", mapping)
    assert again.returncode == 0 and "already imported as run sysA_bm25" in again.stdout, again.stderr


def test_a_replacement_that_cannot_be_imported_leaves_the_old_run(demo, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("101 Q0 D1 1 1.0 x\n101 Q0 D2 two 0.5 x\n")
    with Store(demo) as s:
        before = s.table_digest("run_results")
        with pytest.raises(FormatError, match="bad.run:2: rank must be an integer, found 'two'"):
            s.replace_run("sysA_bm25", bad)
        assert s.table_digest("run_results") == before
        assert s.run_ids() == ["sysA_bm25", "sysB_ql"] and s.run_changes() == []


def test_renaming_a_run_moves_its_rows_and_keeps_its_file_recognised(demo):
    done = pooling("runs", "rename", demo, "sysA_bm25", "bm25")
    assert done.returncode == 0, done.stderr
    assert "renamed run sysA_bm25 to bm25" in done.stdout
    with Store(demo) as s:
        assert s.run_ids() == ["bm25", "sysB_ql"]
        assert counts(s, "run_results", "bm25") == 5000
        assert counts(s, "eval_results", "sysA_bm25") == 0
        (again,) = s.import_runs([BM25]).items
        assert (again.status, again.run_id) == ("already imported", "bm25")
        with pytest.raises(StoreError, match="run 'sysB_ql' exists already"):
            s.rename_run("bm25", "sysB_ql")
    history = pooling("runs", "history", demo, "bm25")
    assert history.returncode == 0 and "rename" in history.stdout and "sysA_bm25" in history.stdout


@pytest.mark.parametrize(("name", "why"), [
    ("", "is empty"), (" bm25", "whitespace"), ("bm\x0125", "control character"),
    ("r" * 300, "at most 200 bytes"),
])
def test_a_new_name_that_breaks_the_id_rule_is_refused_and_the_run_keeps_its_own(demo, name, why):
    with Store(demo) as s:
        with pytest.raises(StoreError, match=why):
            s.rename_run("sysA_bm25", name)
        assert s.run_ids() == ["sysA_bm25", "sysB_ql"] and s.run_changes() == []


@pytest.fixture
def pooled(demo) -> Path:
    """The demo store with round r1 pooling both runs and a judgment made in it."""
    with Store(demo) as s:
        create_round(s, "r1", "depth", strategy_params={"depth": 2}, runs=["sysA_bm25", "sysB_ql"])
        add_assessor(s, "ann")
        assign(s, "r1", ["ann"])
        q, d = s.one("a pooled pair", "SELECT query_id, doc_id FROM pool_entries LIMIT 1")
        record(s, [Judgment("r1", "ann", q, d, 1)])
    return demo


@pytest.mark.parametrize("args", [["remove", "sysA_bm25"], ["rename", "sysA_bm25", "bm25"],
                                  ["replace", "sysA_bm25", str(QL), "--allow-copy"]])
def test_a_pooled_run_is_refused_without_force_and_changed_with_it(pooled, args):
    with Store(pooled, read_only=True) as s:
        before = {t: s.table_digest(t) for t in ("runs", "run_results", "judgments", "qrels",
                                                  "pool_entries")}
    refused = pooling("runs", *args[:1], pooled, *args[1:])
    assert refused.returncode == 1
    assert ("run 'sysA_bm25' was pooled (it built the pool of round(s) r1): its pool and the "
            "judgments made from it stay as they are") in refused.stderr
    assert "pass --force" in refused.stderr
    done = pooling("runs", *args[:1], pooled, *args[1:], "--force")
    assert done.returncode == 0, done.stderr
    with Store(pooled, read_only=True) as s:
        for table in ("judgments", "qrels", "pool_entries"):
            assert s.table_digest(table) == before[table], table
        (change,) = s.run_changes()
        assert change.pooled_in == ("r1",) and change.forced
        pooled_runs = s.one("r1", "SELECT pooled_runs FROM rounds WHERE round_id = 'r1'")[0]
    assert pooled_runs == (["bm25", "sysB_ql"] if args[0] == "rename" else
                           ["sysA_bm25", "sysB_ql"])


def test_a_run_marked_pooled_is_refused_without_force(demo):
    with Store(demo) as s:
        s.sql("mark", "UPDATE runs SET pooled = true WHERE run_id = 'sysB_ql'")
        with pytest.raises(PooledRunError, match="it is marked pooled"):
            s.remove_run("sysB_ql")


def test_an_unknown_run_is_named_with_the_known_ones(demo):
    done = pooling("runs", "remove", demo, "nope")
    assert done.returncode == 1 and "no run 'nope'" in done.stderr and "sysA_bm25" in done.stderr


def test_unknown_topics_are_listed_in_natural_order_with_the_topic_map_hint(tmp_path):
    run = tmp_path / "r.run"
    run.write_text("".join(f"{q} Q0 d{q} 1 1.0 t\n" for q in ("10", "2", "1", "x")))
    topics = tmp_path / "topics.tsv"
    topics.write_text("1\tone\n")
    with Store.create(tmp_path / "s.duckdb") as s:
        s.import_topics(topics)
        warnings = s.import_runs([run]).warnings
    assert warnings[0] == "run 't' has 3 topic(s) unknown to the store: 2, 10, x"
    assert "map them with --topic-map FILE" in warnings[1]
    assert "`pooling runs replace STORE RUN_ID FILE --topic-map FILE`" in warnings[1]


def test_a_run_read_with_dedupe_first_and_again_without_it_is_refused(tmp_path):
    run = tmp_path / "r.run"
    run.write_text("1 Q0 d1 1 2.0 t\n1 Q0 d1 2 1.0 t\n1 Q0 d2 3 0.5 t\n")
    with Store.create(tmp_path / "s.duckdb") as s:
        s.import_runs([run], dedupe="first")
        (same,) = s.import_runs([run], dedupe="first").items
        assert same.status == "already imported"
        with pytest.raises(StoreError, match="run 't' was read with --dedupe first \\(1 repeated "
                           "line\\(s\\) dropped\\); without it the file is refused"):
            s.import_runs([run])


def test_a_meta_row_giving_another_team_is_refused_naming_both(tmp_path):
    from pooling.store.runs import read_run_meta

    run = tmp_path / "r.run"
    run.write_text("1 Q0 d1 1 2.0 t\n")
    meta = tmp_path / "runs.tsv"
    meta.write_text("file\trun_id\tteam\tdescription\nr.run\tt\tlab-a\tfirst\n")
    with Store.create(tmp_path / "s.duckdb") as s:
        s.import_runs([run], meta=read_run_meta(meta))
        assert s.import_runs([run], meta=read_run_meta(meta)).items[0].status == "already imported"
        meta.write_text("file\trun_id\tteam\tdescription\nr.run\tt\tlab-b\tfirst\n")
        with pytest.raises(StoreError, match="the --meta file gives run 't' team 'lab-b', the "
                           "stored run has 'lab-a'"):
            s.import_runs([run], meta=read_run_meta(meta))
        change, _ = s.replace_run("t", run, meta=read_run_meta(meta)["r.run"])
        assert s.one("team", "SELECT team, description FROM runs") == ("lab-b", "first")
        assert change.action == "replace"
