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
    from pooling.leaderboard.topics import save_topic_subset

    save_topic_subset(store, "old", ["301-450"])
    save_topic_subset(store, "new", ["601-650"])
    yield store
    store.close()
