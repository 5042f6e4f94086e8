"""Fixtures for the leaderboard tests: the 17 TREC 2003 Robust runs in one shared store."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from pooling.store import Store
from pooling.store.runs import read_run_meta


@pytest.fixture(scope="session")
def robust_dir(shared_dir: Path) -> Path:
    return shared_dir / "data" / "trec2003-robust"


@pytest.fixture(scope="session")
def nist_summary(robust_dir: Path) -> dict[str, dict[str, str]]:
    """NIST's official summary rows of the runs in this dataset, keyed by run id."""
    with open(robust_dir / "reference/nist_official_summary.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return {r["run_id"]: r for r in rows if r["in_this_dataset"] == "yes"}


@pytest.fixture(scope="session")
def robust_store(robust_dir: Path, nist_summary, tmp_path_factory) -> Store:
    """Runs (with their NIST team as `team`), official qrels, subsets `old` and `new`."""
    tmp = tmp_path_factory.mktemp("leaderboard")
    meta = tmp / "runs.tsv"
    lines = ["file\trun_id\tteam\tdescription\n"] + [
        f"input.{run_id}.gz\t{run_id}\t{row['participant']}\tTREC 2003 Robust\n"
        for run_id, row in nist_summary.items()
    ]
    meta.write_text("".join(lines), encoding="utf-8")
    store = Store.create(tmp / "robust.duckdb")
    store.import_runs(sorted((robust_dir / "runs").glob("input.*.gz")), meta=read_run_meta(meta))
    store.import_qrels(robust_dir / "qrels/robust03_qrels.txt.gz", name="official")
    from pooling.store.topic_selection import save_topic_subset

    save_topic_subset(store, "old", ["301-450"])
    save_topic_subset(store, "new", ["601-650"])
    yield store
    store.close()


@pytest.fixture(scope="session")
def forty_run_store(tmp_path_factory) -> Path:
    """A generated campaign of 40 runs on 50 topics whose quality climbs steadily run by run.

    Each topic has 200 documents, 10 to 40 of them relevant; run k scores a document
    `relevance × strength_k + noise` with strength rising from 0.1 to 2.5, a topic-wide
    difficulty shift, and keeps its top 100. MAP spreads from about 0.1 to 0.6: neighbours
    are hard to tell apart, the ends are not. Returns the store's path (qrels "truth").
    """
    import numpy as np

    rng = np.random.default_rng(2003)
    tmp = tmp_path_factory.mktemp("forty")
    n_topics, n_docs, n_runs = 50, 200, 40
    relevant = {q: rng.permutation(n_docs)[: rng.integers(10, 41)] for q in range(n_topics)}
    lines = []
    grades = {}
    for q in range(n_topics):
        grades[q] = np.zeros(n_docs, dtype=int)
        grades[q][relevant[q]] = 1
        lines += [f"{q + 1} 0 d{q + 1}-{doc} {grades[q][doc]}" for doc in range(n_docs)]
    (tmp / "truth.qrels").write_text("\n".join(lines) + "\n")
    difficulty = rng.normal(0.0, 0.5, n_topics)
    kinds = ["bm25", "rm3qe", "dense", "colbert", "splade"]
    files = []
    for k, strength in enumerate(np.linspace(0.0, 1.2, n_runs)):
        run_id = f"sys{k:02d}{kinds[k % len(kinds)]}"
        rows = []
        for q in range(n_topics):
            score = grades[q] * max(strength + difficulty[q], 0.0) + rng.standard_normal(n_docs)
            for rank, doc in enumerate(np.argsort(-score, kind="stable")[:100], start=1):
                rows.append(f"{q + 1} Q0 d{q + 1}-{doc} {rank} {score[doc]:.6f} {run_id}")
        files.append(tmp / f"{run_id}.run")
        files[-1].write_text("\n".join(rows) + "\n")
    path = tmp / "forty.duckdb"
    with Store.create(path) as store:
        store.import_runs(files)
        store.import_qrels(tmp / "truth.qrels", name="truth")
    return path
