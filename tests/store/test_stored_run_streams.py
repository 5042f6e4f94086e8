"""Stored runs handed to the evaluator by one reader: each stream gives its own run's rows,
whatever order the streams are read in and however often."""

from __future__ import annotations

import threading
from pathlib import Path

import pyarrow as pa
import pytest

from pooling.errors import StoreError
from pooling.evaluation import evaluate
from pooling.store import Store
from pooling.store.evaluate import evaluate_store
from pooling.store.streams import StoredRuns

RUNS = {
    # topic 1's lines are apart: the C kernel declines the run after reading part of it,
    # and the evaluator's general path reads it again from the start
    "apart": ["1 Q0 d1 1 3 apart", "2 Q0 d4 1 3 apart", "1 Q0 d2 2 2 apart"],
    "b": ["1 Q0 d2 1 3 b", "1 Q0 d1 2 3 b", "2 Q0 d5 1 1 b", "2 Q0 d4 2 0.5 b"],
    "c": ["1 Q0 d3 1 1 c", "2 Q0 d4 1 1 c"],
}
QRELS = "1 0 d1 1\n1 0 d2 2\n1 0 d3 0\n2 0 d4 1\n2 0 d5 0\n"


@pytest.fixture
def collection(tmp_path: Path):
    files = []
    for name, lines in RUNS.items():
        path = tmp_path / f"{name}.run"
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    (tmp_path / "q.qrels").write_text(QRELS)
    with Store.create(tmp_path / "s.duckdb") as store:
        store.import_runs(files, run_names="file")
        store.import_qrels(tmp_path / "q.qrels", name="q")
    return tmp_path


def _rows(stream) -> list[tuple]:
    table = pa.Table.from_batches(list(stream.batches()))
    return sorted(zip(*(table[c].to_pylist() for c in ("query_id", "doc_id", "score")),
                      strict=True))


def _expected(name: str) -> list[tuple]:
    return sorted((q, d, float(s)) for q, _, d, _, s, _ in (line.split() for line in RUNS[name]))


def test_streams_read_in_turn_out_of_turn_and_again_each_give_their_own_run(collection):
    with Store(collection / "s.duckdb") as store, StoredRuns(store, ["apart", "b", "c"]) as runs:
        apart, b, c = runs.streams
        first = next(iter(apart.batches()))  # read in part, then left
        assert first.num_rows <= len(RUNS["apart"])
        assert _rows(c) == _expected("c")  # out of turn: its own query
        assert _rows(b) == _expected("b")  # the shared reader skips what "apart" left
        assert _rows(apart) == _expected("apart")  # read again: its own query
        assert [s.rows for s in runs.streams] == [3, 4, 2]


def test_leaving_the_streams_stops_their_reader(collection):
    before = {t.name for t in threading.enumerate()}
    with Store(collection / "s.duckdb") as store:
        with StoredRuns(store, ["b", "c"]) as runs:
            next(iter(runs.streams[0].batches()))
        assert "stored-runs" not in {t.name for t in threading.enumerate()} - before


def test_an_unknown_run_is_refused_before_anything_is_read(collection):
    with Store(collection / "s.duckdb") as store, pytest.raises(
            StoreError, match="no run 'd'.*known runs: apart, b, c"):
        StoredRuns(store, ["b", "d"])


def test_stored_runs_score_as_their_files_when_one_of_them_is_declined_by_the_kernel(collection):
    with Store(collection / "s.duckdb") as store:
        stored = evaluate_store(store, measures=["map", "P.2", "ndcg", "recip_rank"])
    files = evaluate(collection / "q.qrels", [collection / f"{n}.run" for n in RUNS],
                     ["map", "P.2", "ndcg", "recip_rank"], missing_topics="zero")
    means = {(r["run_id"], r["measure"]): r["value"] for r in stored.means.to_pylist()}
    assert means == {(r["run_id"], r["measure"]): r["value"] for r in files.means.to_pylist()}
    per_topic = sorted(tuple(r.values()) for r in stored.per_query.to_pylist())
    assert per_topic == sorted(tuple(r.values()) for r in files.per_query.to_pylist())


def test_a_stream_resumed_after_a_later_run_was_read_refuses_to_go_on(collection):
    with Store(collection / "s.duckdb") as store, StoredRuns(store, ["b", "c"]) as runs:
        left = runs.streams[0].batches()
        next(left)
        assert _rows(runs.streams[1]) == _expected("c")
        with pytest.raises(StoreError, match="run 'b' was resumed after a later run"):
            list(left)
        assert _rows(runs.streams[0]) == _expected("b")  # read again: its own query


@pytest.mark.parametrize("kernel", ["on", "off"])
def test_runs_imported_in_an_open_transaction_are_scored_in_it(tmp_path, monkeypatch, kernel):
    """Another cursor would not see the transaction's rows: the streams read on the store's own."""
    monkeypatch.setenv("POOLING_KERNEL", kernel)
    (tmp_path / "q.qrels").write_text(QRELS)
    (tmp_path / "b.run").write_text("\n".join(RUNS["b"]) + "\n")
    with Store.create(tmp_path / "s.duckdb") as store:
        store.import_qrels(tmp_path / "q.qrels", name="q")
        with store.transaction():
            store.import_runs([tmp_path / "b.run"])
            stored = evaluate_store(store, measures=["map", "num_ret"])
    files = evaluate(tmp_path / "q.qrels", [tmp_path / "b.run"], ["map", "num_ret"],
                     missing_topics="zero")
    assert stored.means.to_pylist() == files.means.sort_by("measure").to_pylist()


def test_runs_scored_before_a_failing_one_keep_their_values(tmp_path):
    from pooling.evaluation.results import NoTopicsError

    (tmp_path / "q.qrels").write_text(QRELS)
    files = []
    for name, lines in (("r0", RUNS["b"]), ("r1", RUNS["c"]), ("r2", ["9 Q0 d1 1 1 r2"]),
                        ("r3", RUNS["b"])):
        files.append(tmp_path / f"{name}.run")
        files[-1].write_text("\n".join(lines) + "\n")
    with Store.create(tmp_path / "s.duckdb") as store:
        store.import_runs(files, run_names="file")
        store.import_qrels(tmp_path / "q.qrels", name="q")
        with pytest.raises(NoTopicsError, match="r2"):
            evaluate_store(store, measures=["map"], missing_topics="skip")
        kept = store.con.execute("SELECT DISTINCT run_id FROM eval_results ORDER BY 1").fetchall()
        assert kept == [("r0",), ("r1",)]
        again = evaluate_store(store, runs=["r0", "r1"], measures=["map"], missing_topics="skip")
        assert again.computed == []
