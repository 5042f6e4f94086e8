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
