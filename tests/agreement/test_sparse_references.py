"""Agreement against a reference that lists mostly relevant pairs (Cranfield's qrels, a qrels
version of the relevant pairs only): the pairs graded by one side only are counted and shown
first, `unjudged` (--unjudged) compares them with the missing grade filled in, and Cohen's
kappa at the relevance threshold (binary) stands beside the multi-grade ones."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from agreement_data import same
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from test_label_agreement_in_the_store import (
    DOCS,
    PEOPLE_GRADES,
    build,
    check_systems,
    judge_grades,
    trec_map,
)
from typer.testing import CliRunner

from pooling.agreement import compare_labels
from pooling.cli.app import app
from pooling.label_sets.agreement import (
    ON_SHARED,
    ON_VERSIONS,
    judge_agreement,
    qrels_agreement,
)
from pooling.store import Store


def labels(rows: dict[tuple[str, str], int]) -> pa.Table:
    return pa.table({"query_id": [q for q, _ in rows], "doc_id": [d for _, d in rows],
                     "grade": list(rows.values())})


def filled(a: dict, b: dict, grade: int) -> tuple[np.ndarray, np.ndarray]:
    """Both sides' grades on every pair either graded, the missing one `grade` (a pandas
    outer join, not our alignment)."""
    left = pd.DataFrame([(q, d, g) for (q, d), g in a.items()], columns=["q", "d", "a"])
    right = pd.DataFrame([(q, d, g) for (q, d), g in b.items()], columns=["q", "d", "b"])
    both = left.merge(right, on=["q", "d"], how="outer").fillna(grade)
    return both["a"].to_numpy(dtype=int), both["b"].to_numpy(dtype=int)


# A reference listing its relevant pairs only, and a judge that graded a pool of 12 pairs.
SPARSE = {("1", "d1"): 2, ("1", "d2"): 1, ("2", "d7"): 2}
POOL = {("1", f"d{i}"): g for i, g in enumerate([0, 2, 1, 0, 1, 0])} | {
    ("2", f"d{i}"): g for i, g in zip(range(6, 12), [0, 1, 0, 0, 2, 0], strict=True)}


def test_a_sparse_reference_leaves_most_pairs_out_and_the_note_says_how_to_keep_them():
    c = compare_labels(labels(SPARSE), labels(POOL))
    assert (c.n_shared, c.only_a, c.only_b, c.n_compared, c.left_out) == (3, 0, 9, 3, 9)
    assert c.scores.n == 3
    note = c.note()
    assert note.startswith("9 of 12 pair(s) (75.0%) are graded by one side only and left out")
    assert "--unjudged 0" in note and "unjudged=0" in note


def test_unjudged_zero_compares_every_pair_either_side_graded_with_the_missing_grade_zero():
    c = compare_labels(labels(SPARSE), labels(POOL), unjudged=0)
    x, y = filled(SPARSE, POOL, 0)
    assert (c.n_shared, c.only_a, c.only_b, c.n_compared, c.left_out) == (3, 0, 9, 12, 0)
    assert c.confusion.tolist() == confusion_matrix(x, y, labels=[0, 1, 2]).tolist()
    assert same(c.kappa, cohen_kappa_score(x, y))
    assert same(c.kappa_quadratic, cohen_kappa_score(x, y, weights="quadratic"))
    assert c.scores.n == 12 and c.scores.tn == int(((x < 1) & (y < 1)).sum())
    assert c.note() == ("9 pair(s) graded by one side only are compared with grade 0 for the "
                        "missing side (0 only A graded, 9 only B)")
    # A pair only the reference lists counts as the other side's grade 0 too.
    more = compare_labels(labels(SPARSE | {("3", "d20"): 1}), labels(POOL), unjudged=0)
    assert (more.only_a, more.n_compared, more.scores.fn) == (1, 13, c.scores.fn + 1)
    # A few pairs left out: counted, without the suggestion.
    few = compare_labels(labels(POOL), labels(POOL | {("2", "d30"): 1}))
    assert few.note() == ("1 of 13 pair(s) (7.7%) are graded by one side only and left out "
                          "of every statistic (0 only A graded, 1 only B)")
    assert compare_labels(labels(POOL), labels(POOL)).note() is None


@pytest.mark.parametrize("threshold", [1, 2])
def test_binary_kappa_is_cohens_kappa_of_the_relevant_flags_at_the_threshold(threshold):
    for unjudged in (None, 0):
        c = compare_labels(labels(SPARSE), labels(POOL), threshold=threshold, unjudged=unjudged)
        x, y = filled(SPARSE, POOL, 0) if unjudged == 0 else (
            np.array([SPARSE[k] for k in SPARSE]), np.array([POOL[k] for k in SPARSE]))
        assert same(c.kappa_binary, cohen_kappa_score(x >= threshold, y >= threshold))


@pytest.mark.shared
def test_cranfield_official_qrels_against_a_word_judge_over_every_abstract(shared_dir):
    """Cranfield's qrels list 1,836 pairs for 225 queries, nearly all relevant; a judge of
    all 1,400 abstracts of ten queries shares few pairs with them unless a missing grade
    counts as not relevant."""
    from pooling.formats.smart import read_smart_documents, read_smart_qrels, read_smart_topics

    cranfield = shared_dir / "data" / "cranfield"
    official = read_smart_qrels(cranfield / "cranqrel")
    topics = read_smart_topics(cranfield / "cran.qry").to_pylist()[:10]
    docs = read_smart_documents(cranfield / "cran.all.1400").to_pylist()
    judged = {}
    for topic in topics:  # the word judge's rule: 1 when a long word of the query is there
        words = {w for w in topic["title"].split() if len(w) > 6}
        for doc in docs:
            judged[(topic["query_id"], doc["doc_id"])] = int(bool(
                words & set(f"{doc['title']} {doc['text']}".split())))
    reference = {(r["query_id"], r["doc_id"]): r["relevance"] for r in official.to_pylist()}
    left = compare_labels(official, labels(judged))
    assert left.n_shared < 200 and left.only_b > 13_000 and left.only_a > 1_600
    assert "--unjudged 0" in left.note()
    kept = compare_labels(official, labels(judged), unjudged=0)
    x, y = filled(reference, judged, 0)
    assert kept.n_compared == len(x) == len(set(reference) | set(judged))
    assert kept.confusion.tolist() == confusion_matrix(x, y, labels=kept.grades).tolist()
    assert same(kept.kappa, cohen_kappa_score(x, y))
    assert same(kept.kappa_binary, cohen_kappa_score(x >= 1, y >= 1))


# -- in a store, and on the command line -----------------------------------------------------


@pytest.fixture(scope="module")
def sparse_store(tmp_path_factory) -> Path:
    """The agreement tests' store (people, the word judge on 16 pairs) with a qrels version
    `relevant` listing only the people's grade-2 pairs, as a sparse official qrels would."""
    tmp = tmp_path_factory.mktemp("sparse")
    path = build(tmp)
    top = {k: g for k, g in PEOPLE_GRADES.items() if g == 2}
    (tmp / "relevant.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in top.items()))
    with Store(path) as s:
        s.import_qrels(tmp / "relevant.qrels", name="relevant")
    return path


def test_a_judge_against_sparse_qrels_scores_the_runs_on_every_pair_with_unjudged(sparse_store):
    top = {k: g for k, g in PEOPLE_GRADES.items() if g == 2}
    judge = {k: grade for k, (grade, _) in judge_grades().items()}
    with Store(sparse_store) as s:
        left = judge_agreement(s, "words", against="relevant")
        assert (left.labels.n_shared, left.labels.only_b) == (3, 2 * DOCS - 3)
        assert left.scored_on == ON_SHARED
        result = judge_agreement(s, "words", against="relevant", unjudged=0)
        assert result.labels.n_compared == 2 * DOCS and result.labels.unjudged == 0
        assert result.scored_on == ("every run scored on qrels made of each side's grades of "
                                    "the pairs either graded, a missing grade counting as 0")
        check_systems(result, trec_map({k: top.get(k, 0) for k in judge}, s), trec_map(judge, s))


def test_two_qrels_versions_with_unjudged_compare_every_pair_and_score_runs_as_stored(
        sparse_store, tmp_path):
    from pooling.judging.rules import derive_qrels

    path = tmp_path / "c.duckdb"
    path.write_bytes(sparse_store.read_bytes())
    with Store(path) as s:
        derive_qrels(s, "majority", "people", round_id="r1")
        left = qrels_agreement(s, "relevant", "people")
        kept = qrels_agreement(s, "relevant", "people", unjudged=0)
        assert (left.labels.n_compared, kept.labels.n_compared) == (3, len(PEOPLE_GRADES))
        x, y = filled({k: g for k, g in PEOPLE_GRADES.items() if g == 2}, PEOPLE_GRADES, 0)
        assert kept.labels.confusion.tolist() == confusion_matrix(x, y, labels=[0, 1, 2]).tolist()
        # Runs are scored on each version as stored either way: a missing pair is not relevant.
        assert kept.scored_on == left.scored_on == ON_VERSIONS
        assert kept.scores_a == left.scores_a and kept.scores_b == left.scores_b


def invoke(*args):
    return CliRunner().invoke(app, ["agreement", *map(str, args)], env={"COLUMNS": "200"})


def test_the_table_puts_the_pairs_left_out_first_and_prints_the_binary_kappa(sparse_store):
    result = invoke(sparse_store, "--judge", "words", "--against", "relevant")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == ("B = judge words against A = qrels relevant: 3 pair(s) graded by both, "
                        f"0 only by A, {2 * DOCS - 3} only by B; 3 compared")
    assert lines[1].startswith(f"note: {2 * DOCS - 3} of {2 * DOCS} pair(s) (81.2%) are graded "
                               "by one side only and left out of every statistic")
    assert "--unjudged 0" in lines[1]
    assert "binary at grade >= 1" in result.output
    kept = invoke(sparse_store, "--judge", "words", "--against", "relevant", "--unjudged", "0")
    assert kept.exit_code == 0, kept.output
    assert f"; {2 * DOCS} compared" in kept.output.splitlines()[0]
    assert kept.output.splitlines()[1] == (f"note: {2 * DOCS - 3} pair(s) graded by one side "
                                           "only are compared with grade 0 for the missing side "
                                           f"(0 only A graded, {2 * DOCS - 3} only B)")


def test_json_csv_and_html_carry_the_pairs_left_out_the_note_and_the_binary_kappa(sparse_store,
                                                                                  tmp_path):
    with Store(sparse_store) as s:
        expected = judge_agreement(s, "words", against="relevant")
        kept = judge_agreement(s, "words", against="relevant", unjudged=0)
    data = json.loads(invoke(sparse_store, "--judge", "words", "--against", "relevant",
                             "--format", "json").output)
    assert data["pairs"] == {"shared": 3, "only_a": 0, "only_b": 2 * DOCS - 3, "compared": 3,
                             "left_out": 2 * DOCS - 3, "unjudged": None}
    assert data["note"] == expected.labels.note() and "--unjudged 0" in data["note"]
    assert data["kappa"]["binary"] == expected.labels.kappa_binary
    data = json.loads(invoke(sparse_store, "--judge", "words", "--against", "relevant",
                             "--unjudged", "0", "--format", "json").output)
    assert data["pairs"]["compared"] == 2 * DOCS and data["pairs"]["unjudged"] == 0
    assert data["kappa"]["binary"] == kept.labels.kappa_binary
    assert sum(map(sum, data["confusion"]["counts"])) == 2 * DOCS
    out = tmp_path / "a.csv"
    assert invoke(sparse_store, "--judge", "words", "--against", "relevant", "--format", "csv",
                  "-o", out).exit_code == 0
    values = dict(list(csv.reader(io.StringIO(out.read_text())))[1:])
    assert int(values["pairs.left_out"]) == 2 * DOCS - 3 and "--unjudged 0" in values["note"]
    assert float(values["kappa.binary"]) == expected.labels.kappa_binary
    page = tmp_path / "a.html"
    assert invoke(sparse_store, "--judge", "words", "--against", "relevant", "--format", "html",
                  "-o", page).exit_code == 0
    html = page.read_text()
    assert '<p class="warning" id="agreement-pairs-note">' in html and "--unjudged 0" in html
    assert html.index('id="agreement-pairs-note"') < html.index('id="agreement-statistics"')
    assert "Cohen&#x27;s kappa (binary, grade ≥ 1)" in html or "kappa (binary, grade ≥ 1)" in html


def test_unjudged_goes_with_two_label_sets_not_with_a_round_alone(sparse_store):
    done = subprocess.run([sys.executable, "-m", "pooling", "agreement", str(sparse_store),
                           "--round", "r1", "--unjudged", "0"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "--unjudged goes with --qrels or --judge" in done.stderr
