"""The release loads in the libraries people run experiments with, each the real library
from PyPI: BEIR, Hugging Face datasets, ir_datasets, ir_measures, pytrec_eval, PyTerrier."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pooling.store import Store


def store_qrels(store: Path, version: str) -> dict[str, dict[str, int]]:
    with Store(store, read_only=True) as s:
        table = s.qrels_table(version)
    out: dict[str, dict[str, int]] = {}
    for q, d, r in zip(*(table[c].to_pylist() for c in ("query_id", "doc_id", "relevance")),
                       strict=True):
        out.setdefault(q, {})[d] = r
    return out


def test_beir_generic_data_loader_reads_corpus_queries_and_every_qrels_version(
        demo_release, demo_store):
    from beir.datasets.data_loader import GenericDataLoader

    for version in ("truth", "round1-majority"):
        corpus, queries, qrels = GenericDataLoader(
            data_folder=str(demo_release / "beir")).load(split=version)
        assert len(queries) == 50 and queries["101"] == "Electric Vehicles Costs"
        assert qrels == store_qrels(demo_store, version)
        assert {d for docs in qrels.values() for d in docs} <= set(corpus)


def test_hugging_face_datasets_loads_each_config_offline(demo_release, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    qrels = datasets.load_dataset(str(demo_release), "qrels", split="test",
                                  cache_dir=str(tmp_path / "cache"))
    assert qrels.num_rows == 24_058 + 4_998
    assert set(qrels.column_names) == {"version", "query_id", "doc_id", "relevance"}
    runs = datasets.load_dataset(str(demo_release), "runs", split="test",
                                 cache_dir=str(tmp_path / "cache"))
    assert runs.num_rows == 96_000  # the rows of the 20 stored runs
    topics = datasets.load_dataset(str(demo_release), "topics", split="test",
                                   cache_dir=str(tmp_path / "cache"))
    assert topics[0]["query_id"] == "101"


def test_ir_datasets_builds_a_local_dataset_from_the_release(demo_release, demo_store):
    import ir_datasets

    dataset = ir_datasets.create_dataset(
        docs_tsv=str(demo_release / "ir_datasets" / "docs.tsv"),
        queries_tsv=str(demo_release / "ir_datasets" / "queries.tsv"),
        qrels_trec=str(demo_release / "qrels" / "truth.qrels"))
    queries = {q.query_id: q.text for q in dataset.queries_iter()}
    assert len(queries) == 50 and queries["101"] == "Electric Vehicles Costs"
    qrels: dict[str, dict[str, int]] = {}
    for q in dataset.qrels_iter():
        qrels.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    assert qrels == store_qrels(demo_store, "truth")
    assert sum(1 for _ in dataset.docs_iter()) == 3064


def test_ir_measures_and_pytrec_eval_read_every_qrels_file(demo_release, demo_store):
    import ir_measures
    import pytrec_eval

    manifest = json.loads((demo_release / "release.json").read_text())
    for version in manifest["qrels_versions"]:
        path = demo_release / version["file"]
        expected = store_qrels(demo_store, version["name"])
        read: dict[str, dict[str, int]] = {}
        for q in ir_measures.read_trec_qrels(str(path)):
            read.setdefault(q.query_id, {})[q.doc_id] = q.relevance
        assert read == expected
        with open(path) as fh:
            assert pytrec_eval.parse_qrel(fh) == expected


def test_pytrec_eval_scores_a_released_run_as_pooling_does(demo_release, demo_store):
    import pytrec_eval

    from pooling.store.evaluate import evaluate_store

    with open(demo_release / "qrels" / "truth.qrels") as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    with open(demo_release / "runs" / "sysA_neural.run") as fh:
        run = pytrec_eval.parse_run(fh)
    per_topic = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    with Store(demo_store) as s:
        result = evaluate_store(s, qrels="truth", runs=["sysA_neural"], measures=["map"])
    ours = {r["query_id"]: r["value"] for r in result.per_query.to_pylist()}
    assert ours == pytest.approx({q: v["map"] for q, v in per_topic.items()}, abs=5e-5)


def test_pyterrier_reads_the_qrels_and_the_trec_topics(demo_release, demo_store):
    import pyterrier as pt

    qrels = pt.io.read_qrels(str(demo_release / "qrels" / "truth.qrels"))
    assert len(qrels) == 24_058 and list(qrels.columns) == ["qid", "docno", "label"]
    topics = pt.io.read_topics(str(demo_release / "topics" / "topics.trec"))
    assert len(topics) == 50
    assert topics.set_index("qid").loc["101", "query"] == "Electric Vehicles Costs"


def test_a_release_of_qrels_and_runs_only_shows_every_reader_the_same_documents(tmp_path):
    """A store without document rows (qrels and runs only): the judged documents are the
    corpus, for Hugging Face, BEIR, ir_datasets and the datasheet alike; and every config the
    card lists loads (a table without rows is no config: `datasets` refuses an empty split)."""
    import datasets
    import yaml
    from release_data import cli, documents_seen

    (tmp_path / "topics.tsv").write_text("1\tfirst\n2\tsecond\n")
    (tmp_path / "truth.qrels").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n2 0 d1 0\n")
    (tmp_path / "a.run").write_text("1 Q0 d1 1 2 A\n1 Q0 d9 2 1 A\n2 Q0 d3 1 5 A\n")
    store = tmp_path / "s.duckdb"
    cli("init", store)
    cli("import", "runs", store, tmp_path / "a.run")
    cli("import", "qrels", store, tmp_path / "truth.qrels", "--name", "truth")
    bare = tmp_path / "bare"  # before the topics: a table without rows
    cli("release", store, bare)
    cli("import", "topics", store, tmp_path / "topics.tsv")
    release = tmp_path / "release"
    cli("release", store, release)
    assert documents_seen(release, tmp_path / "cache") == {
        "datasets": 3, "beir": 3, "ir_datasets": 3, "datasheet": 3}
    front = yaml.safe_load((bare / "README.md").read_text().split("---\n")[1])
    configs = [c["config_name"] for c in front["configs"]]
    assert "topics" not in configs and "documents" in configs  # no topics: no empty split
    for config in configs:
        assert datasets.load_dataset(str(bare), config, split="test",
                                     cache_dir=str(tmp_path / "cache" / "datasets")).num_rows
