"""The 17 TREC 2003 Robust runs score exactly as trec_eval 10.0 scored them (4 decimals)."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

from pooling.evaluation import evaluate
from pooling.evaluation.qrels_index import QrelsIndex
from pooling.evaluation.trec_format import format_value
from pooling.evaluation.trec_input import read_qrels

MEASURES = [
    "num_ret", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "ndcg",
    "P.5,10,15,20,30,100,1000", "ndcg_cut.10,20",
]  # fmt: skip


def _rows(path: Path) -> list[dict[str, str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


@pytest.fixture(scope="module")
def robust03(robust_dir: Path):
    """Every run evaluated once (one shared qrels index), keyed by run tag."""
    qrels = QrelsIndex(read_qrels(robust_dir / "qrels" / "robust03_qrels.txt.gz"))
    runs = sorted((robust_dir / "runs").glob("input.*.gz"))
    result = evaluate(qrels, runs, MEASURES)
    return {run.run_id: run for run in result.runs}


@pytest.mark.shared
def test_all_seventeen_runs_are_evaluated(robust03):
    assert len(robust03) == 17


@pytest.mark.shared
def test_summary_matches_trec_eval_reference(robust03, robust_dir: Path):
    wrong = []
    for row in _rows(robust_dir / "reference" / "trec_eval_summary.tsv"):
        run = robust03[row["run"]]
        kind = next(c.kind for c in run.columns if c.name == row["measure"])
        ours = format_value(run.summary[row["measure"]], kind).strip()
        if ours != row["value"]:
            wrong.append((row["run"], row["measure"], ours, row["value"]))
    assert wrong == []


@pytest.mark.shared
def test_per_topic_values_match_trec_eval_reference(robust03, robust_dir: Path):
    wrong = []
    rows = _rows(robust_dir / "reference" / "trec_eval_per_topic.tsv.gz")
    for row in rows:
        run = robust03[row["run"]]
        t = run.query_ids.index(row["qid"])
        kind = next(c.kind for c in run.columns if c.name == row["measure"])
        ours = format_value(run.per_query[row["measure"]][t], kind).strip()
        if ours != row["value"]:
            wrong.append((row["run"], row["qid"], row["measure"], ours, row["value"]))
    assert len(rows) == 17 * 100 * 16
    assert wrong[:10] == []
