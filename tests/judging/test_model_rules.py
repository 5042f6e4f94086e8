"""`pooling qrels derive --rule wawa|dawid-skene` on a real DuckDB store: a round judged by a
simulated crowd of five (two reliable people, three careless ones), every pair by all five."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from pooling.crowds.model_rules import qrels_posteriors, worker_confusion
from pooling.errors import StoreError
from pooling.judging.assessors import add_assessor
from pooling.judging.judgments import Judgment, append_judgments
from pooling.judging.rounds import create_round
from pooling.judging.rules import derive_qrels
from pooling.store import Store

N_DOCS = 150
CROWD = {  # P(answer | truth), truth and answer in 0..2
    "ann": 0.9, "bob": 0.85, "cy": 0.4, "dee": 0.4, "eve": 0.35}


def _answer(rng: np.random.Generator, truth: int, right: float) -> int:
    others = [g for g in range(3) if g != truth]
    return truth if rng.random() < right else int(rng.choice(others))


@pytest.fixture
def crowd_store(tmp_path):
    """(store path, true grade per (query_id, doc_id))."""
    rng = np.random.default_rng(11)
    lines = [f"{q} Q0 d{q}-{i} {i + 1} {N_DOCS - i} A" for q in ("1", "2")
             for i in range(N_DOCS)]
    (tmp_path / "a.run").write_text("\n".join(lines) + "\n")
    path = tmp_path / "c.duckdb"
    truth = {}
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run"])
        create_round(s, "r1", "depth", strategy_params={"depth": N_DOCS})
        for name in CROWD:
            add_assessor(s, name)
        add_assessor(s, "org", role="organiser")
        judgments = []
        for q in ("1", "2"):
            for i in range(N_DOCS):
                d = f"d{q}-{i}"
                truth[(q, d)] = int(rng.choice(3, p=[0.5, 0.3, 0.2]))
                judgments += [Judgment("r1", a, q, d, _answer(rng, truth[(q, d)], p))
                              for a, p in CROWD.items()]
        # an organiser's grade is an adjudication, not a crowd label: the models leave it out
        judgments.append(Judgment("r1", "org", "1", "d1-0", (truth[("1", "d1-0")] + 1) % 3))
        append_judgments(s, judgments)
    return path, truth


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pooling", *args], capture_output=True,
                          text=True)


def _accuracy(store: Store, version: str, truth: dict) -> float:
    rows = store.qrels_table(version).to_pylist()
    return sum(truth[(r["query_id"], r["doc_id"])] == r["relevance"] for r in rows) / len(rows)


def test_cli_derives_a_dawid_skene_version_with_posteriors_and_worker_matrices(crowd_store):
    path, truth = crowd_store
    proc = _cli("qrels", "derive", str(path), "--rule", "dawid-skene", "--round", "r1",
                "--name", "ds")
    assert proc.returncode == 0, proc.stderr
    assert "qrels version ds: 300 judgments on 2 topics (rule dawid-skene)" in proc.stdout
    assert _cli("qrels", "derive", str(path), "--rule", "majority", "--round", "r1",
                "--name", "maj").returncode == 0
    with Store(path, read_only=True) as s:
        assert _accuracy(s, "ds", truth) > _accuracy(s, "maj", truth) + 0.05
        info = s.qrels_info("ds")
        assert info["method"] == "derived:dawid-skene"
        params = json.loads(info["params"])
        assert params["rule"] == "dawid-skene" and params["round"] == "r1"
        assert params["gold"] is None
        assert params["model"] == {"binary_threshold": None, "gold_tasks": 0, "n_iter": 100,
                                   "tol": 1e-5}
        posteriors = qrels_posteriors(s, "ds")
        assert posteriors.num_rows == 300
        assert all(0.3 < p <= 1.0 for p in posteriors["posterior"].to_pylist())
        assert qrels_posteriors(s, "maj")["posterior"].null_count == 300
        matrix = worker_confusion(s, "ds").to_pylist()
    assert {r["assessor_id"] for r in matrix} == set(CROWD)  # the organiser is no worker
    diagonal = {r["assessor_id"]: r["probability"] for r in matrix
                if r["true_grade"] == r["grade"] == 0}
    assert abs(diagonal["ann"] - 0.9) < 0.1 and abs(diagonal["eve"] - 0.35) < 0.15
    shown = _cli("qrels", "workers", str(path), "ds")
    assert shown.returncode == 0, shown.stderr
    assert "P(grade | true grade)" in shown.stdout and "ann" in shown.stdout


def test_wawa_is_a_rule_too(crowd_store):
    path, truth = crowd_store
    with Store(path) as s:
        derive_qrels(s, "wawa", "w", round_id="r1")
        derive_qrels(s, "majority", "maj", round_id="r1")
        assert _accuracy(s, "w", truth) >= _accuracy(s, "maj", truth)
        assert worker_confusion(s, "w").num_rows == len(CROWD) * 9


def test_gold_seeds_the_model_and_never_enters_the_derived_version(crowd_store):
    path, truth = crowd_store
    gold_pairs = sorted(truth)[::5]
    gold = pa.table({"query_id": [q for q, _ in gold_pairs], "doc_id": [d for _, d in gold_pairs],
                     "relevance": pa.array([truth[p] for p in gold_pairs], pa.int64())})
    with Store(path) as s:
        s.import_qrels(gold, name="gold")
    proc = _cli("qrels", "derive", str(path), "--rule", "dawid-skene", "--round", "r1",
                "--name", "seeded", "--gold", "gold")
    assert proc.returncode == 0, proc.stderr
    assert "(rule dawid-skene, gold gold)" in proc.stdout
    with Store(path, read_only=True) as s:
        derived = {(r["query_id"], r["doc_id"]) for r in s.qrels_table("seeded").to_pylist()}
        assert derived == set(truth) - set(gold_pairs)
        params = json.loads(s.qrels_info("seeded")["params"])
        assert params["gold"] == "gold" and params["model"]["gold_tasks"] == len(gold_pairs)
        assert qrels_posteriors(s, "seeded").num_rows == len(derived)


def test_refusals_say_what_to_do_and_leave_nothing_behind(crowd_store):
    path, _ = crowd_store
    with Store(path) as s:
        derive_qrels(s, "majority", "maj", round_id="r1")
        with pytest.raises(StoreError, match="--gold seeds an aggregation model"):
            derive_qrels(s, "majority", "m2", round_id="r1", gold="maj")
        with pytest.raises(StoreError, match="holds no worker estimates; derive one with "
                                             "--rule wawa or --rule dawid-skene"):
            worker_confusion(s, "maj")
        with pytest.raises(StoreError, match="already exists"):
            derive_qrels(s, "dawid-skene", "maj", round_id="r1")
        assert s.one("n", "SELECT count(*) FROM qrels_posteriors")[0] == 0
        assert s.one("n", "SELECT count(*) FROM qrels_workers")[0] == 0
    proc = _cli("qrels", "workers", str(path), "maj")
    assert proc.returncode != 0 and "derive one with --rule wawa" in proc.stderr


def test_a_round_without_judgments_has_nothing_to_aggregate(tmp_path):
    (tmp_path / "a.run").write_text("1 Q0 d1 1 9 A\n")
    with Store.create(tmp_path / "c.duckdb") as s:
        s.import_runs([tmp_path / "a.run"])
        create_round(s, "r1", "depth", strategy_params={"depth": 1})
        with pytest.raises(StoreError, match="no judgments to derive qrels from"):
            derive_qrels(s, "dawid-skene", "ds", round_id="r1")
