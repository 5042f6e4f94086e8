"""The primary measure: every command that ranks runs ranks, tests and charts by the first -m
as given (or --primary), while `pooling eval` and `pooling evaluate` keep trec_eval's output
order. Checked on the demo collection, whose runs order differently by nDCG@10 and P@10 and
by alpha-nDCG@20 and ERR-IA@20, so ranking by trec_eval's first measure would show."""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.errors import MeasureError
from pooling.leaderboard import leaderboard
from pooling.leaderboard.per_topic import topic_report
from pooling.measures.primary import primary_first, ranked_measures
from pooling.store import Store
from pooling.store.evaluate import evaluate_store

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = REPO_ROOT / "collections" / "demo"


def pooling(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pooling", *map(str, args)],
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(REPO_ROOT)})


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The demo collection's 20 runs (teams from runs.tsv), its graded qrels `truth` and its
    subtopic qrels `div`."""
    from pooling.store.runs import read_run_meta

    path = tmp_path_factory.mktemp("primary") / "demo.duckdb"
    with Store.create(path) as s:
        s.import_runs(sorted((DEMO / "runs").glob("*.run")), meta=read_run_meta(DEMO / "runs.tsv"))
        s.import_qrels(DEMO / "truth.qrels", name="truth")
        s.import_qrels(DEMO / "subtopics.qrels", name="div", format="subtopic")
    return path


def _means(store: Path, qrels: str, measure: str) -> dict[str, float]:
    with Store(store) as s:
        result = evaluate_store(s, qrels=qrels, measures=[measure])
    return {r["run_id"]: r["value"] for r in result.means.to_pylist()}


def _order(means: dict[str, float]) -> list[str]:
    return sorted(means, key=lambda r: (-means[r], r))


@pytest.fixture(scope="module")
def orders(demo) -> dict[str, list[str]]:
    """Each measure's run order; the pairs the tests use must order the runs differently."""
    out = {m: _order(_means(demo, "truth", m)) for m in ("ndcg_cut_10", "P_10", "map")}
    out |= {m: _order(_means(demo, "div", m)) for m in ("alpha-nDCG@20", "ERR-IA@20")}
    assert out["ndcg_cut_10"] != out["P_10"] and out["map"] != out["ndcg_cut_10"]
    assert out["alpha-nDCG@20"] != out["ERR-IA@20"]
    return out


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


# -- the rule -------------------------------------------------------------------------------


def test_the_first_measure_as_given_is_primary_whatever_trec_evals_order():
    assert ranked_measures(["ndcg_cut_10", "P_10"]).primary == "ndcg_cut_10"
    assert ranked_measures(["alpha-nDCG@20", "ERR-IA@20"]).columns == ["alpha-nDCG@20",
                                                                       "ERR-IA@20"]
    assert ranked_measures(["nDCG@10", "AP"]).columns == ["ndcg_cut_10", "map"]


def test_a_primary_not_among_the_measures_is_added_first_and_one_among_them_keeps_its_place():
    assert ranked_measures(["P_10", "ndcg_cut_10"], "map").columns == ["map", "P_10",
                                                                       "ndcg_cut_10"]
    kept = ranked_measures(["P_10", "ndcg_cut_10"], "nDCG@10")
    assert (kept.columns, kept.primary) == (["P_10", "ndcg_cut_10"], "ndcg_cut_10")
    assert primary_first(["P_10", "map"], "AP") == ["AP", "P_10"]


def test_compare_boards_put_the_primary_first_so_it_is_the_reference():
    from pooling.leaderboard.compare import board_specs

    assert [s.measure for s in board_specs(["P_10", "map"])] == ["P_10", "map"]
    assert [s.measure for s in board_specs(["P_10", "map"], primary="map")] == ["map", "P_10"]
    assert [s.measure for s in board_specs(["P_10"], primary="AP")] == ["AP", "P_10"]


def test_the_sampled_leaderboard_reads_its_estimators_by_the_same_rule():
    kept = ranked_measures(["infNDCG", "xinfAP"], sampled=True)
    assert (kept.columns, kept.primary) == (["infNDCG", "infAP"], "infNDCG")
    assert ranked_measures(["infNDCG"], "statAP", sampled=True).columns == ["statAP", "infNDCG"]


def test_a_primary_with_several_values_per_run_is_refused_naming_a_cutoff_to_pick():
    with pytest.raises(MeasureError, match=r"'P' gives 9 values per run.*e\.g\. P_10"):
        ranked_measures(["map"], "P")


# -- the leaderboard ------------------------------------------------------------------------


def test_the_leaderboard_ranks_by_the_first_measure_given(demo, orders):
    with Store(demo) as s:
        board = leaderboard(s, qrels="truth", measures=["ndcg_cut_10", "P_10"], resamples=100)
    assert board.primary == "ndcg_cut_10" and board.measures == ["ndcg_cut_10", "P_10"]
    assert board.run_ids == orders["ndcg_cut_10"]


def test_the_cli_leaderboard_ranks_by_the_first_m_and_by_primary(demo, orders):
    shown = pooling("leaderboard", demo, "--qrels", "truth", "-m", "ndcg_cut_10", "-m", "P_10",
                    "--format", "csv", "--resamples", "100")
    assert shown.returncode == 0, shown.stderr
    rows = _csv_rows(shown.stdout)
    assert list(rows[0])[:4] == ["run_id", "team", "ndcg_cut_10", "P_10"]
    assert [r["run_id"] for r in rows] == orders["ndcg_cut_10"]
    by_map = pooling("leaderboard", demo, "--qrels", "truth", "-m", "ndcg_cut_10", "-m", "P_10",
                     "--primary", "map", "--format", "md", "--resamples", "100")
    assert by_map.returncode == 0, by_map.stderr
    assert "ranked by map" in by_map.stdout
    shown_runs = re.findall(r"^\| \d+ \| \w+ \| (\S+) \|", by_map.stdout, re.M)
    assert shown_runs == orders["map"]


def test_the_leaderboard_ranks_diversity_runs_by_the_first_measure_given(demo, orders):
    shown = pooling("leaderboard", demo, "--qrels", "div", "-m", "alpha-nDCG@20", "-m",
                    "ERR-IA@20", "--format", "csv", "--resamples", "100")
    assert shown.returncode == 0, shown.stderr
    assert [r["run_id"] for r in _csv_rows(shown.stdout)] == orders["alpha-nDCG@20"]


def test_a_primary_that_gives_several_values_is_one_line_saying_what_to_do(demo):
    refused = pooling("leaderboard", demo, "--qrels", "truth", "-m", "map", "--primary", "P")
    assert refused.returncode == 1
    assert "name one cutoff, e.g. P_10" in refused.stderr and "Traceback" not in refused.stderr


# -- pooling eval and pooling evaluate keep trec_eval's order -----------------------------------


def test_eval_and_evaluate_keep_trec_evals_output_order(demo):
    run = DEMO / "runs" / "sysA_bm25.run"
    printed = pooling("eval", "-m", "ndcg_cut_10", "-m", "P_10", DEMO / "truth.qrels", run)
    assert printed.returncode == 0, printed.stderr
    assert [line.split()[0] for line in printed.stdout.splitlines()] == ["P_10", "ndcg_cut_10"]
    stored = pooling("evaluate", demo, "--qrels", "truth", "-m", "ndcg_cut_10", "-m", "P_10",
                     "--run", "sysA_bm25", "--format", "csv")
    assert stored.returncode == 0, stored.stderr
    measures = list(dict.fromkeys(r["measure"] for r in _csv_rows(stored.stdout)))
    assert measures == ["P_10", "ndcg_cut_10"]


# -- report runs ------------------------------------------------------------------------------


def _index_order(folder: Path) -> tuple[str, list[str]]:
    """The index's primary column header and its runs, top to bottom."""
    text = (folder / "index.html").read_text(encoding="utf-8")
    header = re.search(r'<th class="team">team</th><th>([^<]+)</th>', text).group(1)
    return header, re.findall(r'<tr data-run="([^"]+)">', text)


def test_report_runs_ranks_by_the_first_m_and_by_primary(demo, orders, tmp_path):
    first = pooling("report", "runs", demo, tmp_path / "a", "--qrels", "truth", "-m",
                    "ndcg_cut_10", "-m", "P_10", "-m", "map", "--no-pdf")
    assert first.returncode == 0, first.stderr
    assert _index_order(tmp_path / "a") == ("ndcg_cut_10", orders["ndcg_cut_10"])
    chosen = pooling("report", "runs", demo, tmp_path / "b", "--qrels", "truth", "-m",
                     "ndcg_cut_10", "-m", "P_10", "-m", "map", "--primary", "map", "--no-pdf")
    assert chosen.returncode == 0, chosen.stderr
    assert _index_order(tmp_path / "b") == ("map", orders["map"])


# -- the other ranking commands ---------------------------------------------------------------


def test_compare_takes_the_first_m_as_reference_unless_primary_names_another(demo):
    first = _csv_rows(pooling("compare", demo, "--qrels", "truth", "-m", "P_10", "-m", "map",
                              "--format", "csv").stdout)
    assert (first[0]["a"], first[0]["b"]) == ("P_10 qrels=truth", "map qrels=truth")
    chosen = _csv_rows(pooling("compare", demo, "--qrels", "truth", "-m", "P_10", "-m", "map",
                               "--primary", "map", "--format", "csv").stdout)
    assert (chosen[0]["a"], chosen[0]["b"]) == ("map qrels=truth", "P_10 qrels=truth")
    # tau_ap is asymmetric: the reference changes it
    assert chosen[0]["tau_ap"] != first[0]["tau_ap"]


def test_topic_report_lists_runs_best_first_by_the_primary_and_measures_as_given(demo, orders):
    with Store(demo) as s:
        table = topic_report(s, qrels="truth", measures=["P_10", "map"])
        chosen = topic_report(s, qrels="truth", measures=["P_10", "map"], primary="map")
    assert list(dict.fromkeys(table["run_id"].to_pylist())) == orders["P_10"]
    assert table["measure"].to_pylist()[:2] == ["P_10", "map"]
    assert list(dict.fromkeys(chosen["run_id"].to_pylist())) == orders["map"]
    shown = pooling("topic-report", demo, "--qrels", "truth", "-m", "P_10", "-m", "map",
                    "--primary", "map")
    assert shown.returncode == 0, shown.stderr
    assert list(dict.fromkeys(r["run_id"] for r in _csv_rows(shown.stdout))) == orders["map"]


@pytest.mark.parametrize("command", [["pool-bias", "--depth", "10"], ["folds"]])
def test_one_measure_analyses_take_the_primary_and_say_which_measures_they_leave(demo, command):
    first = pooling(*command[:1], demo, *command[1:], "--qrels", "truth", "-m", "P_10", "-m",
                    "map", "--format", "csv")
    assert first.returncode == 0, first.stderr
    assert "analysing P_10 (the primary measure)" in first.stderr
    assert "map is not used" in first.stderr
    chosen = pooling(*command[:1], demo, *command[1:], "--qrels", "truth", "-m", "P_10", "-m",
                     "map", "--primary", "map", "--format", "csv")
    assert chosen.returncode == 0, chosen.stderr
    assert "analysing map" in chosen.stderr and first.stdout != chosen.stdout
    alone = pooling(*command[:1], demo, *command[1:], "--qrels", "truth", "--primary", "map",
                    "--format", "csv")
    assert alone.stdout == chosen.stdout and "not used" not in alone.stderr


def test_agreement_ranks_runs_by_the_primary_measure(demo, tmp_path):
    import shutil

    store = shutil.copy(demo, tmp_path / "copy.duckdb")
    lines = (DEMO / "truth.qrels").read_text().splitlines()
    (tmp_path / "half.qrels").write_text("\n".join(lines[::2]) + "\n")
    with Store(store) as s:
        s.import_qrels(tmp_path / "half.qrels", name="half")
    both = ["agreement", store, "--qrels", "truth", "--qrels", "half", "--format", "json"]
    first = pooling(*both, "-m", "P_10", "-m", "map")
    chosen = pooling(*both, "-m", "P_10", "-m", "map", "--primary", "map")
    alone = pooling(*both, "-m", "map")
    assert first.returncode == chosen.returncode == 0, first.stderr + chosen.stderr
    assert "analysing P_10" in first.stderr and "analysing map" in chosen.stderr
    assert chosen.stdout == alone.stdout != first.stdout
