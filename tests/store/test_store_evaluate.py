"""Evaluating stored runs: the same numbers as files, cached per run, qrels version and options."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from pooling.store import Store
from pooling.store.evaluate import evaluate_store


@pytest.fixture(scope="module")
def robust(shared_dir: Path, tmp_path_factory):
    root = shared_dir / "data/trec2003-robust"
    store = Store.create(tmp_path_factory.mktemp("ev") / "r.duckdb")
    store.import_runs(sorted((root / "runs").glob("input.*.gz")))
    store.import_qrels(root / "qrels/robust03_qrels.txt.gz", name="official")
    yield store, root
    store.close()


def test_stored_runs_match_trec_eval_reference_and_are_cached(robust):
    store, root = robust
    first = evaluate_store(store, measures=["map", "P.100", "ndcg_cut.10", "bpref"])
    assert len(first.computed) == 17
    with open(root / "reference/trec_eval_summary.tsv", encoding="utf-8") as fh:
        ref = {(r["run"], r["measure"]): float(r["value"]) for r in csv.DictReader(fh, delimiter="\t")}
    means = {(r["run_id"], r["measure"]): r["value"] for r in first.means.to_pylist()}
    for (run, measure), value in ref.items():
        if measure in ("map", "P_100", "ndcg_cut_10", "bpref"):
            assert f"{means[(run, measure)]:.4f}" == f"{value:.4f}", (run, measure)
    again = evaluate_store(store, measures=["map", "P.100", "ndcg_cut.10", "bpref"])
    assert again.computed == []
    assert again.means.equals(first.means)


def test_options_are_part_of_the_cache_key_and_recorded(robust):
    store, _ = robust
    old = sorted({q for q in store.qrels_table("official")["query_id"].to_pylist() if int(q) < 600})
    a = evaluate_store(store, runs=["InexpC2"], measures=["map"], topics=old)
    b = evaluate_store(store, runs=["InexpC2"], measures=["map"], relevance_level=2)
    assert a.computed == ["InexpC2"] and b.computed == ["InexpC2"]
    assert a.options["topics"] == old and b.options["relevance_level"] == 2
    assert a.means["value"][0].as_py() != b.means["value"][0].as_py()
    assert set(a.per_query["query_id"].to_pylist()) <= set(old)


def test_the_official_measures_with_num_q_are_cached_too(tmp_path):
    """`num_q` has no per-topic values: it is kept as the summary row only."""
    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 2 a\n1 Q0 d2 2 1 a\n2 Q0 d3 1 1 a\n")
    qrels = tmp_path / "q.qrels"
    qrels.write_text("1 0 d1 1\n2 0 d4 1\n")
    with Store.create(tmp_path / "s.duckdb") as store:
        store.import_runs([run])
        store.import_qrels(qrels, name="q")
        first = evaluate_store(store, measures=["official"])
        means = {r["measure"]: r["value"] for r in first.means.to_pylist()}
        assert means["num_q"] == 2 and means["map"] == 0.5
        again = evaluate_store(store, measures=["official"])
        assert again.computed == [] and again.means.equals(first.means)


def _two_runs(tmp_path: Path) -> Store:
    (tmp_path / "a.run").write_text("1 Q0 d1 1 2 a\n1 Q0 d2 2 1 a\n2 Q0 d3 1 1 a\n")
    (tmp_path / "b.run").write_text("1 Q0 d2 1 2 b\n1 Q0 d1 2 1 b\n2 Q0 d4 1 1 b\n")
    (tmp_path / "q.qrels").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d4 1\n")
    store = Store.create(tmp_path / "s.duckdb")
    store.import_runs([tmp_path / "a.run", tmp_path / "b.run"])
    store.import_qrels(tmp_path / "q.qrels", name="q")
    return store


def test_only_the_runs_missing_from_the_cache_are_computed_and_each_value_is_kept_once(tmp_path):
    with _two_runs(tmp_path) as store:
        first = evaluate_store(store, runs=["a"], measures=["map", "P.5"])
        both = evaluate_store(store, runs=["b", "a", "b"], measures=["map", "P.5"])
        assert first.computed == ["a"] and both.computed == ["b"]
        means = {(r["run_id"], r["measure"]): r["value"] for r in both.means.to_pylist()}
        assert means == {("a", "map"): 0.5, ("a", "P_5"): 0.1,
                         ("b", "map"): 0.75, ("b", "P_5"): 0.2}
        (rows, distinct) = store.one("kept", "SELECT count(*), count(DISTINCT (run_id, measure, "
                                     "query_id)) FROM eval_results")
        assert rows == distinct == 2 * 2 * 3  # 2 runs x 2 measures x (2 topics + all)
        # a measure more: the runs are computed again, and no value is kept twice
        more = evaluate_store(store, measures=["map", "P.5", "recip_rank"])
        assert more.computed == ["a", "b"]
        (rows, distinct) = store.one("kept", "SELECT count(*), count(DISTINCT (run_id, measure, "
                                     "query_id)) FROM eval_results")
        assert rows == distinct == 2 * 3 * 3


def test_text_measures_alone_compute_and_keep_nothing(tmp_path):
    with _two_runs(tmp_path) as store:
        result = evaluate_store(store, measures=["runid"])
        assert result.computed == [] and result.text_measures == ["runid"]
        assert store.one("kept", "SELECT count(*) FROM eval_results") == (0,)


def test_an_unknown_run_is_named_with_the_runs_there_are(tmp_path):
    from pooling.errors import StoreError

    with _two_runs(tmp_path) as store, pytest.raises(StoreError, match="no run 'c'.*known runs: a, b"):
        evaluate_store(store, runs=["a", "c"], measures=["map"])


class _Recorded:
    """A Progress that keeps what it heard."""

    def __init__(self) -> None:
        self.heard: list[tuple] = []

    def start(self, description: str, total: int | None = None) -> None:
        self.heard.append(("start", total))

    def advance(self, amount: int = 1) -> None:
        self.heard.append(("advance", amount))

    def finish(self) -> None:
        self.heard.append(("finish",))


def test_progress_hears_of_each_run_scored_and_not_of_cached_ones(tmp_path):
    with _two_runs(tmp_path) as store:
        first, again = _Recorded(), _Recorded()
        evaluate_store(store, runs=["a"], measures=["map"], progress=first)
        evaluate_store(store, measures=["map"], progress=again)
        assert first.heard == [("start", 1), ("advance", 1), ("finish",)]
        assert again.heard == [("start", 1), ("advance", 1), ("finish",)]  # b only


def test_values_are_written_a_group_of_runs_at_a_time_and_each_kept_once(tmp_path, monkeypatch):
    import pooling.store.evaluate as store_evaluate

    writes: list[list[str]] = []
    save = store_evaluate._save

    def recorded(store, runs, version, key):
        writes.append([r.run_id for r in runs])
        save(store, runs, version, key)

    monkeypatch.setattr(store_evaluate, "RUNS_PER_WRITE", 1)
    monkeypatch.setattr(store_evaluate, "_save", recorded)
    with _two_runs(tmp_path) as store:
        result = evaluate_store(store, measures=["map"])
        assert [w for w in writes if w] == [["a"], ["b"]]
        assert store.one("kept", "SELECT count(*), count(DISTINCT (run_id, query_id)) "
                         "FROM eval_results") == (6, 6)
        assert {r["run_id"]: r["value"] for r in result.means.to_pylist()} == {"a": 0.5, "b": 0.75}
