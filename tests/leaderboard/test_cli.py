"""The leaderboard commands on a small inline collection: output formats, errors, help."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.store import Store

QRELS = """\
1 0 d1 1
1 0 d2 0
1 0 d3 1
2 0 d1 0
2 0 d4 2
2 0 d5 1
3 0 d2 1
3 0 d6 1
4 0 d7 1
4 0 d8 0
"""

RUNS = {
    "alpha": ["1 Q0 d1 1 3 alpha", "1 Q0 d3 2 2 alpha", "1 Q0 d2 3 1 alpha",
              "2 Q0 d4 1 3 alpha", "2 Q0 d5 2 2 alpha", "3 Q0 d6 1 2 alpha",
              "3 Q0 d2 2 1 alpha", "4 Q0 d7 1 1 alpha"],
    "beta": ["1 Q0 d2 1 3 beta", "1 Q0 d1 2 2 beta", "2 Q0 d1 1 3 beta",
             "2 Q0 d4 2 2 beta", "3 Q0 d9 1 2 beta", "3 Q0 d6 2 1 beta",
             "4 Q0 d8 1 2 beta", "4 Q0 d7 2 1 beta"],
    "gamma": ["1 Q0 d9 1 3 gamma", "1 Q0 d1 2 2 gamma", "2 Q0 d9 1 3 gamma",
              "2 Q0 d5 2 1 gamma", "3 Q0 d9 1 2 gamma", "3 Q0 d8 2 1 gamma",
              "4 Q0 d9 1 2 gamma", "4 Q0 d8 2 1 gamma"],
}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "q.txt").write_text(QRELS)
    files = []
    for name, lines in RUNS.items():
        files.append(tmp / f"{name}.run")
        files[-1].write_text("\n".join(lines) + "\n")
    path = tmp / "tiny.duckdb"
    with Store.create(path) as s:
        s.import_runs(files)
        s.import_qrels(tmp / "q.txt", name="truth")
    return path


def pooling(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pooling", *args], capture_output=True,
                          text=True, check=False)


def test_leaderboard_csv_has_one_row_per_run_and_canonical_columns(store_path):
    result = pooling("leaderboard", str(store_path), "-m", "AP", "-m", "P@5",
                     "--test", "randomization", "--permutations", "500", "--format", "csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["run_id"] for r in rows] == ["alpha", "beta", "gamma"]
    assert list(rows[0])[:4] == ["run_id", "team", "map", "P_5"]
    assert list(rows[0])[12] == "Judged@10"
    assert float(rows[0]["map"]) == pytest.approx((1 + 1 + 1 + 1) / 4)


def test_errors_are_one_line_with_the_fix_and_exit_1(store_path):
    result = pooling("leaderboard", str(store_path), "--test", "tukey", "--correction", "bh")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "Error: Tukey HSD already controls the family-wise error rate; use --correction none"]
    unknown = pooling("leaderboard", str(store_path), "--topics", "7-9,12")
    assert unknown.returncode == 1 and "unknown topic(s) 12" in unknown.stderr


def test_topic_subsets_are_stored_and_selectable(store_path):
    made = pooling("topics", "subset", str(store_path), "early", "1-2")
    assert made.returncode == 0, made.stderr
    assert "subset early: 2 topic(s) (1, 2)" in made.stdout
    listed = pooling("topics", "list", str(store_path))
    assert "early\t2\t1, 2" in listed.stdout
    board = pooling("leaderboard", str(store_path), "-m", "map", "--topics", "early",
                    "--format", "csv")
    assert {r["n_topics"] for r in csv.DictReader(io.StringIO(board.stdout))} == {"2"}


def test_html_report_is_written_and_its_path_printed(store_path, tmp_path):
    out = tmp_path / "report.html"
    result = pooling("leaderboard", str(store_path), "-m", "map", "-m", "P_5",
                     "--format", "html", "-o", str(out), "--pool-depth", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out.resolve())
    text = out.read_text()
    assert text.count('<tr data-run="') == 3 and "<svg" in text


@pytest.mark.parametrize(
    ("args", "header"),
    [
        (["compare", "-m", "map", "-m", "P_5"], "a,b,kendall_tau,tau_ap,spearman_rho,swaps,n_runs"),
        (["topic-report", "-m", "map", "--run", "beta"], "run_id,query_id,measure,value,best,median,worst"),
        (["pool-bias", "--depth", "1", "--leave-out", "team"], "run_id,team,unit,pooled,judged_at_k"),
        (["folds", "-k", "2", "-m", "map"], "fold,n_train,n_test,chosen,train_score,test_score"),
    ],
)
def test_report_commands_write_csv(store_path, args, header):
    result = pooling(args[0], str(store_path), *args[1:], "--format", "csv")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(header)


def test_every_leaderboard_command_has_help():
    from typer.main import get_command

    from pooling.cli import app

    root = get_command(app)
    names = ["leaderboard", "compare", "topic-report", "pool-bias", "folds", "topics"]
    for name in names:
        command = root.commands[name]
        assert (command.help or "").strip(), name
    for sub in ("subset", "list", "remove"):
        assert (root.commands["topics"].commands[sub].help or "").strip(), sub


def test_leaderboard_opens_a_store_path_and_compares_a_rounds_pool(store_path, tmp_path):
    import shutil

    from pooling.judging.rounds import create_round
    from pooling.leaderboard import board_specs, compare_leaderboards, leaderboard

    board = leaderboard(store_path, measures=["map"])
    assert board.run_ids == ["alpha", "beta", "gamma"]
    copy = tmp_path / "copy.duckdb"
    shutil.copy(store_path, copy)
    with Store(copy) as s:
        create_round(s, "top1", "depth", strategy_params={"depth": 1}, runs="all")
        result = compare_leaderboards(s, board_specs(["map"], rounds=["top1"]))
    assert result.pairs["b"].to_pylist() == ["map round=top1"]
    # Cut to the top-1 pool, alpha (a relevant document first everywhere) still leads.
    assert max(result.scores["map round=top1"], key=result.scores["map round=top1"].get) == "alpha"


def test_the_terminal_and_markdown_leaderboards_explain_their_rank_column(store_path):
    table = subprocess.run([sys.executable, "-m", "pooling", "leaderboard", str(store_path),
                            "-m", "map"], capture_output=True, text=True, check=False,
                           env={**os.environ, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    # alpha 1, then beta and gamma both 2: one run is significantly better than each.
    last = table.stdout.rstrip().splitlines()[-1]
    assert last.startswith("Rank = 1 + the number of runs significantly better, so ranks "
                           "repeat and skip by the tests (e.g. 1, 1, 2, 6, 6, 9)")
    md = pooling("leaderboard", str(store_path), "-m", "map", "--format", "md")
    assert md.stdout.rstrip().splitlines()[-1] == last


def test_leaderboard_help_shows_whole_sentences_on_an_80_column_terminal():
    done = subprocess.run([sys.executable, "-m", "pooling", "leaderboard", "--help"],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    description = done.stdout.split("Usage:")[1].split("╭")[0].splitlines()[2:]
    paragraphs = "\n".join(line.strip() for line in description).strip().split("\n\n")
    assert len(paragraphs) == 2
    assert paragraphs[1].startswith("Runs that no test separates share a rank")
    # The paragraph is wrapped at the width only: every line but its last fills the width.
    lines = paragraphs[1].splitlines()
    assert len(lines) >= 4 and all(len(line) > 60 for line in lines[:-1]), lines


def test_help_text_is_made_of_whole_paragraphs():
    from pooling.cli.app import whole_paragraphs

    text = """First line
    goes on.

    A second paragraph
    in two lines.

    \b
    kept
      as written
    \f
    for the code only"""
    assert whole_paragraphs(text) == ("First line goes on.\n\nA second paragraph in two "
                                      "lines.\n\n\b\nkept\n  as written\f\n    for the code only")


def test_a_leaderboard_compared_with_itself_correlates_exactly_one(store_path):
    # map and AP are two names of one measure: the same ordering.
    result = pooling("compare", str(store_path), "-m", "map", "-m", "AP", "--format", "csv")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == "map,AP,1.0,1.0,1.0,0,3"
    twice = pooling("compare", str(store_path), "-m", "map", "-m", "map")
    assert twice.returncode == 1 and "leaderboard 'map' is given twice" in twice.stderr
