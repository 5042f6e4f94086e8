"""Agreement between two label sets of a store: a judge against the people (or a qrels
version), two qrels versions against each other, down to the leaderboard the runs make
under each; and the `pooling agreement` command's forms and formats."""

from __future__ import annotations

import csv
import io
import json
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from agreement_data import perturbed, same
from scipy.stats import kendalltau, rankdata, spearmanr
from sklearn.metrics import cohen_kappa_score, confusion_matrix, roc_auc_score
from typer.testing import CliRunner

from pooling.agreement import AgreementError, compare_labels
from pooling.cli.app import app
from pooling.errors import StoreError
from pooling.judges.model_judges import add_judge, judge_pairs, round_pairs
from pooling.judging.assessors import add_assessor
from pooling.judging.judgments import Judgment, append_judgments
from pooling.judging.rounds import create_round
from pooling.judging.rules import derive_qrels
from pooling.label_sets.agreement import (
    ON_SHARED,
    ON_VERSIONS,
    judge_agreement,
    qrels_agreement,
)
from pooling.label_sets.sources import judge_labels, people_labels
from pooling.leaderboard import leaderboard
from pooling.store import Store

WORD_JUDGE = Path(__file__).resolve().parent.parent / "judging" / "word_judge.py"
TOPICS = {"1": "wind turbines", "2": "solar panels"}
DOCS = 8  # per topic; every third is about the topic (the word judge says 1 for those)

# The people's judgments (round r1): (assessor, query_id, doc_id, grade). q1d006 is judged
# 1 and 2 by two people (a tie: the lower, 1, counts); q2d004 by three (2 wins over 0).
# Three pooled pairs are left to the judge alone.
PEOPLE = [
    ("ann", "1", "q1d000", 2), ("ann", "1", "q1d001", 0), ("ann", "1", "q1d002", 1),
    ("ann", "1", "q1d003", 1), ("ann", "1", "q1d004", 0), ("ann", "1", "q1d006", 1),
    ("cat", "1", "q1d006", 2),
    ("bob", "2", "q2d000", 1), ("bob", "2", "q2d001", 0), ("bob", "2", "q2d002", 0),
    ("bob", "2", "q2d003", 2), ("bob", "2", "q2d004", 0), ("ann", "2", "q2d004", 2),
    ("cat", "2", "q2d004", 2), ("bob", "2", "q2d005", 1),
]
PEOPLE_GRADES = {
    ("1", "q1d000"): 2, ("1", "q1d001"): 0, ("1", "q1d002"): 1, ("1", "q1d003"): 1,
    ("1", "q1d004"): 0, ("1", "q1d006"): 1, ("2", "q2d000"): 1, ("2", "q2d001"): 0,
    ("2", "q2d002"): 0, ("2", "q2d003"): 2, ("2", "q2d004"): 2, ("2", "q2d005"): 1,
}


def about(doc: int) -> bool:
    return doc % 3 == 0


def judge_grades() -> dict[tuple[str, str], tuple[int, float]]:
    """What the word judge says of every pooled pair: its grade and its probability."""
    return {(q, f"q{q}d{i:03d}"): (1, 0.9) if about(i) else (0, 0.2)
            for q in TOPICS for i in range(DOCS)}


def build(tmp_path: Path, n_runs: int = 6) -> Path:
    """Two topics of 8 documents, n_runs runs ordering them differently (seeded), round r1
    pooling all of them (grades 0-2), the people's judgments and judge `words` on the pool."""
    path = tmp_path / "c.duckdb"
    rng = np.random.default_rng(11)
    docs, files = [], []
    for q, title in TOPICS.items():
        for i in range(DOCS):
            text = f"a page on {title}" if about(i) else "something else entirely"
            docs.append({"doc_id": f"q{q}d{i:03d}", "title": "", "text": text})
    for k in range(n_runs):
        lines = []
        for q in TOPICS:
            order = rng.permutation(DOCS)
            lines += [f"{q} Q0 q{q}d{i:03d} {r + 1} {DOCS - r} run{k}\n"
                      for r, i in enumerate(order)]
        files.append(tmp_path / f"run{k}.txt")
        files[-1].write_text("".join(lines))
    (tmp_path / "topics.jsonl").write_text("".join(
        json.dumps({"query_id": q, "title": t}) + "\n" for q, t in TOPICS.items()))
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    with Store.create(path) as s:
        s.import_runs(files)
        s.import_topics(tmp_path / "topics.jsonl")
        s.import_documents(tmp_path / "docs.jsonl")
        create_round(s, "r1", "depth", strategy_params={"depth": DOCS}, runs="all",
                     grades=[0, 1, 2])
        for name in ("ann", "bob", "cat"):
            add_assessor(s, name)
        append_judgments(s, [Judgment("r1", a, q, d, g) for a, q, d, g in PEOPLE])
        command = " ".join(shlex.quote(p) for p in (sys.executable, str(WORD_JUDGE)))
        add_judge(s, "words", "command", {"command": command})
        judge_pairs(s, "words", round_pairs(s, "r1"), round_id="r1")
    return path


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("agreement"))


def trec_map(grades: dict[tuple[str, str], int], store: Store) -> dict[str, float]:
    """MAP of every stored run under these grades, by pytrec_eval (trec_eval's own code)."""
    qrel: dict[str, dict[str, int]] = {}
    for (q, d), g in grades.items():
        qrel.setdefault(q, {})[d] = g
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, {"map"})
    out = {}
    for run_id in store.run_ids():
        run: dict[str, dict[str, float]] = {}
        for r in store.run_table(run_id).to_pylist():
            run.setdefault(r["query_id"], {})[r["doc_id"]] = float(r["score"])
        per_topic = evaluator.evaluate(run)
        out[run_id] = sum(per_topic[q]["map"] for q in qrel) / len(qrel)
    return out


def check_systems(result, scores_a: dict[str, float], scores_b: dict[str, float]) -> None:
    assert set(result.scores_a) == set(scores_a)
    for run_id in scores_a:
        assert same(result.scores_a[run_id], scores_a[run_id], 1e-12)
        assert same(result.scores_b[run_id], scores_b[run_id], 1e-12)
    names = sorted(scores_a)
    x, y = [scores_a[n] for n in names], [scores_b[n] for n in names]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same(result.systems.kendall_tau, kendalltau(x, y).statistic, 1e-12)
        assert same(result.systems.spearman_rho, spearmanr(x, y).statistic, 1e-12)
    assert result.systems.n_runs == len(names)


def test_people_labels_take_the_majority_ties_lower_and_leave_judges_out(store_path):
    with Store(store_path) as s:
        people = people_labels(s, "r1").to_pylist()
    assert {(r["query_id"], r["doc_id"]): r["grade"] for r in people} == PEOPLE_GRADES


def test_judge_labels_carry_the_probability_of_the_judges_current_grade(store_path, tmp_path):
    path = tmp_path / "c.duckdb"
    path.write_bytes(store_path.read_bytes())
    with Store(path) as s:
        assert {(r["query_id"], r["doc_id"]): (r["grade"], r["probability"])
                for r in judge_labels(s, "words", "r1").to_pylist()} == judge_grades()
        # A later judgment by the judge of one pair replaces its grade and its probability.
        append_judgments(s, [Judgment("r1", "words", "1", "q1d000", 0, probability=0.35)])
        now = {(r["query_id"], r["doc_id"]): (r["grade"], r["probability"])
               for r in judge_labels(s, "words").to_pylist()}
    assert now[("1", "q1d000")] == (0, 0.35) and len(now) == 2 * DOCS


def test_a_judge_against_the_people_on_the_pairs_both_graded(store_path):
    with Store(store_path) as s:
        result = judge_agreement(s, "words", round_id="r1", threshold=1)
        judge = judge_grades()
        shared = sorted(PEOPLE_GRADES)
        x = np.array([PEOPLE_GRADES[k] for k in shared])
        y = np.array([judge[k][0] for k in shared])
        c = result.labels
        assert (c.n_shared, c.only_a, c.only_b) == (12, 0, 2 * DOCS - 12)
        assert c.confusion.tolist() == confusion_matrix(x, y, labels=[0, 1, 2]).tolist()
        assert same(c.kappa_quadratic, cohen_kappa_score(x, y, weights="quadratic"))
        assert same(c.probability.roc_auc,
                    roc_auc_score(x >= 1, [judge[k][1] for k in shared]))
        assert c.probability.n == 12
        # The leaderboard: each side's grades of the shared pairs as qrels, MAP per run.
        assert result.scored_on == ON_SHARED and result.measure == "map"
        check_systems(result, trec_map(PEOPLE_GRADES, s),
                      trec_map({k: judge[k][0] for k in shared}, s))
        assert result.a == "people (round r1)" and result.b == "judge words (round r1)"
        # Over all rounds the same here: every judgment is in r1.
        assert judge_agreement(s, "words").labels.confusion.tolist() == c.confusion.tolist()


def test_two_qrels_versions_rank_the_runs_as_the_leaderboard_does(store_path, tmp_path):
    path = tmp_path / "c.duckdb"
    path.write_bytes(store_path.read_bytes())
    with Store(path) as s:
        derive_qrels(s, "majority", "people", round_id="r1")
        derive_qrels(s, "judge-only", "words-only", round_id="r1", judge="words")
        result = qrels_agreement(s, "people", "words-only", measure="map", top=3)
        expected = compare_labels(s.qrels_table("people"), s.qrels_table("words-only"))
        assert result.labels.confusion.tolist() == expected.confusion.tolist()
        assert (result.labels.n_shared, result.labels.only_b) == (12, 4)
        assert result.labels.probability is None  # qrels carry no probabilities
        assert result.scored_on == ON_VERSIONS
        check_systems(result, leaderboard(s, qrels="people", measures=["map"]).means(),
                      leaderboard(s, qrels="words-only", measures=["map"]).means())
        assert len(result.systems.changes) <= 3
        # A judge against a qrels version: the version is the reference. `people` names the
        # people, so a version called people is given as qrels:people.
        against = judge_agreement(s, "words", against="qrels:people")
        assert against.a == "qrels people"
        assert against.labels.confusion.tolist() == result.labels.confusion.tolist()
        assert judge_agreement(s, "words", against="people").a == "people"
        derive_qrels(s, "latest", "so-far", round_id="r1")
        assert judge_agreement(s, "words", against="so-far").a == "qrels so-far"
        with pytest.raises(AgreementError, match="given twice"):
            qrels_agreement(s, "people", "people")
        with pytest.raises(StoreError, match="no qrels version 'nope'"):
            qrels_agreement(s, "people", "nope")


def test_a_store_without_runs_compares_the_labels_and_ranks_nothing(tmp_path):
    with Store.create(tmp_path / "e.duckdb") as s:
        (tmp_path / "a.qrels").write_text("1 0 d1 1\n1 0 d2 0\n")
        (tmp_path / "b.qrels").write_text("1 0 d1 1\n1 0 d2 1\n")
        s.import_qrels(tmp_path / "a.qrels", name="a")
        s.import_qrels(tmp_path / "b.qrels", name="b")
        result = qrels_agreement(s, "a", "b")
    assert result.systems is None and result.labels.n_shared == 2
    assert result.to_dict()["leaderboard"]["n_runs"] == 0


def test_the_judge_must_be_an_automatic_judge_and_the_threshold_a_relevance_level(store_path):
    with Store(store_path) as s:
        with pytest.raises(StoreError, match="is a person"):
            judge_agreement(s, "ann")
        with pytest.raises(StoreError, match="no judge 'nobody'"):
            judge_agreement(s, "nobody")
        with pytest.raises(AgreementError, match="at least 1"):
            judge_agreement(s, "words", threshold=0)


def test_the_leaderboard_report_includes_the_agreement_section_when_given(store_path, tmp_path):
    from pooling.leaderboard.report import html_report

    path = tmp_path / "c.duckdb"
    path.write_bytes(store_path.read_bytes())
    with Store(path) as s:
        derive_qrels(s, "majority", "majority", round_id="r1")
        board = leaderboard(s, qrels="majority", measures=["map"], resamples=10)
        result = judge_agreement(s, "words", against="majority")
    page = html_report(board, agreement=result)
    assert '<section id="agreement">' in page and '<figure id="fig-confusion"><svg' in page
    assert page.index('id="leaderboard"') < page.index('<section id="agreement">')
    assert '<section id="agreement">' not in html_report(board)


# -- the command ---------------------------------------------------------------------------


def invoke(*args):
    return CliRunner().invoke(app, ["agreement", *map(str, args)], env={"COLUMNS": "200"})


def test_the_table_shows_pairs_confusion_statistics_and_the_leaderboard(store_path):
    result = invoke(store_path, "--judge", "words", "--round", "r1")
    assert result.exit_code == 0, result.output
    text = result.output
    assert ("B = judge words (round r1) against A = people (round r1): 12 pair(s) graded by "
            "both, 0 only by A, 4 only by B") in text
    assert "confusion matrix (rows: A's grade, columns: B's)" in text
    assert "Cohen's kappa" in text and "Krippendorff's alpha nominal" in text
    assert "precision" in text and "fallout" in text and "ROC-AUC" in text
    assert "leaderboard (map, 6 runs;" in text and "Kendall tau" in text
    assert "(A as reference)" in text and "Spearman" in text
    assert "largest rank changes" in text


def test_json_holds_everything_including_the_confusion_matrix(store_path):
    result = invoke(store_path, "--judge", "words", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    with Store(store_path) as s:
        expected = judge_agreement(s, "words")
    assert data["confusion"]["grades"] == [0, 1, 2]
    assert data["confusion"]["counts"] == expected.labels.confusion.tolist()
    assert data["pairs"] == {"shared": 12, "only_a": 0, "only_b": 4, "compared": 12,
                             "left_out": 4, "unjudged": None}
    assert data["kappa"]["quadratic"] == expected.labels.kappa_quadratic
    assert data["probability"]["roc_auc"] == expected.labels.probability.roc_auc
    board = data["leaderboard"]
    assert board["n_runs"] == 6 and board["kendall_tau"] == expected.systems.kendall_tau
    assert {"tau_ap_a", "tau_ap_b", "tau_ap_symmetric", "spearman_rho"} <= set(board)
    assert len(board["runs"]) == 6 and len(board["changes"]) == len(expected.systems.changes)


def test_csv_is_one_row_per_statistic(store_path, tmp_path):
    out = tmp_path / "agreement.csv"
    result = invoke(store_path, "--judge", "words", "--format", "csv", "-o", out)
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert rows[0] == ["statistic", "value"]
    values = dict(rows[1:])
    assert len(values) == len(rows) - 1  # no statistic twice
    with Store(store_path) as s:
        expected = judge_agreement(s, "words")
    assert int(values["pairs.shared"]) == 12
    assert int(values["confusion.a=2.b=1"]) == int(expected.labels.confusion[2, 1])
    assert float(values["kappa.linear"]) == expected.labels.kappa_linear
    assert float(values["leaderboard.kendall_tau"]) == expected.systems.kendall_tau
    assert float(values["probability.log_loss"]) == expected.labels.probability.log_loss


def test_html_is_a_page_with_the_confusion_matrix_drawn(store_path, tmp_path):
    out = tmp_path / "agreement.html"
    result = invoke(store_path, "--judge", "words", "--format", "html", "-o", out)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and '<section id="agreement">' in page
    assert '<figure id="fig-confusion"><svg' in page
    assert '<table id="agreement-correlation">' in page and "Kendall τ" in page
    assert "http://" not in page.replace("http://www.w3.org", "")  # nothing fetched


def test_two_qrels_versions_on_the_command_line(store_path, tmp_path):
    path = tmp_path / "c.duckdb"
    path.write_bytes(store_path.read_bytes())
    with Store(path) as s:
        derive_qrels(s, "majority", "people", round_id="r1")
        derive_qrels(s, "human-first", "mixed", round_id="r1", judge="words")
    result = invoke(path, "--qrels", "people", "--qrels", "mixed", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["a"], data["b"]) == ("qrels people", "qrels mixed")
    assert data["pairs"] == {"shared": 12, "only_a": 0, "only_b": 4, "compared": 12,
                             "left_out": 4, "unjudged": None}
    assert data["kappa"]["unweighted"] == 1.0  # human-first keeps the people's grades


def test_round_alone_still_reports_agreement_among_the_rounds_assessors(store_path):
    result = invoke(store_path, "--round", "r1")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("round r1: 2 pair(s) judged by two or more assessors, "
                                    "10 by one")
    assert "Fleiss' kappa" in result.output


@pytest.mark.parametrize(("args", "message"), [
    ([], "name what to compare"),
    (["--qrels", "a"], "give it twice"),
    (["--judge", "words", "--qrels", "a", "--qrels", "b"], "--judge and --qrels"),
    (["--judge", "words", "--format", "xml"], "--format must be table, csv, json or html"),
    (["--round", "r1", "--format", "json"], "--round alone prints a table"),
])
def test_an_unclear_request_is_one_line_naming_the_forms(store_path, args, message):
    done = subprocess.run([sys.executable, "-m", "pooling", "agreement", str(store_path), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and message in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.shared
@pytest.mark.slow
def test_robust03_official_against_a_perturbed_version_on_the_17_runs(robust_dir, robust03_qrels,
                                                                      tmp_path):
    from pooling.formats.trec_qrels import write_trec_qrels

    changed = perturbed(robust03_qrels).select(["query_id", "doc_id", "grade"])
    write_trec_qrels(changed.rename_columns(["query_id", "doc_id", "relevance"]),
                     tmp_path / "perturbed.qrels")
    with Store.create(tmp_path / "robust.duckdb") as s:
        s.import_runs(sorted((robust_dir / "runs").glob("input.*.gz")))
        s.import_qrels(robust_dir / "qrels/robust03_qrels.txt.gz", name="official")
        s.import_qrels(tmp_path / "perturbed.qrels", name="perturbed")
        result = qrels_agreement(s, "official", "perturbed", measure="map")
        expected = compare_labels(robust03_qrels, changed)
        official = leaderboard(s, qrels="official", measures=["map"], resamples=1).means()
        noisy = leaderboard(s, qrels="perturbed", measures=["map"], resamples=1).means()
    assert result.labels.confusion.tolist() == expected.confusion.tolist()
    assert result.labels.kappa == expected.kappa
    check_systems(result, official, noisy)
    assert 0 < result.systems.kendall_tau < 1
    names = sorted(official)
    rank_a = dict(zip(names, rankdata([-official[n] for n in names], method="min"), strict=True))
    rank_b = dict(zip(names, rankdata([-noisy[n] for n in names], method="min"), strict=True))
    moves = sorted((abs(rank_a[n] - rank_b[n]) for n in names if rank_a[n] != rank_b[n]),
                   reverse=True)
    assert [abs(c.change) for c in result.systems.changes] == moves[:5]


def test_undefined_values_are_n_a_in_the_table_and_null_in_json(store_path):
    # At threshold 2 the word judge (grades 0 and 1) calls nothing relevant: precision is 0/0.
    table = invoke(store_path, "--judge", "words", "--threshold", "2")
    assert table.exit_code == 0, table.output
    assert "precision n/a" in table.output and "(n/a: undefined here" in table.output
    data = json.loads(invoke(store_path, "--judge", "words", "--threshold", "2",
                             "--format", "json").output)
    assert data["classification"]["precision"] is None
    assert data["classification"]["recall"] == 0.0
