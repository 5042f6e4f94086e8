"""Judgments are aligned by (query_id, doc_id), whatever the row order or input type."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from agreement_data import rating_matrix, to_rows
from sklearn.metrics import cohen_kappa_score

from pooling.agreement import AgreementError, align, as_judgments, cohen_kappa
from pooling.errors import PoolingError

ROWS = [
    ("q1", "d1", "ann", 1), ("q1", "d1", "bob", 1), ("q1", "d1", "cat", 0),
    ("q1", "d2", "ann", 0), ("q1", "d2", "bob", 1),
    ("q2", "d1", "ann", 2),
    ("q2", "d3", "bob", 0),
    ("q2", "d4", "cat", 2), ("q2", "d4", "ann", 2),
]


def test_alignment_counts_shared_single_and_complete_pairs():
    a = align(ROWS)
    assert a.assessors == ("ann", "bob", "cat")
    assert (a.n_shared, a.n_single, a.n_complete) == (3, 2, 1)
    assert list(zip(a.query_id, a.doc_id, strict=True)) == [
        ("q1", "d1"), ("q1", "d2"), ("q2", "d1"), ("q2", "d3"), ("q2", "d4")]


def test_pair_takes_only_pairs_both_judged():
    x, y, qids = align(ROWS).pair("ann", "bob")
    assert x.tolist() == [1, 0] and y.tolist() == [1, 1] and qids.tolist() == ["q1", "q1"]


def test_restricting_assessors_recounts_single_pairs():
    a = align(ROWS, ["ann", "cat"])
    assert (a.n_shared, a.n_single) == (2, 2)
    assert align(align(ROWS), ["ann", "cat"]).n_single == 2


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_shuffling_one_assessors_rows_does_not_change_kappa(seed, weights):
    m = rating_matrix(seed + 10, 80, 4, 0.6, None)
    rows = to_rows(m, ["a", "b"], seed=0)
    a_rows = [r for r in rows if r[2] == "a"]
    b_rows = [r for r in rows if r[2] == "b"]
    shuffled = [b_rows[i] for i in np.random.default_rng(seed).permutation(len(b_rows))]
    expected = cohen_kappa_score(m[:, 0], m[:, 1], weights=weights)
    for data in (a_rows + b_rows, a_rows + shuffled, shuffled + a_rows):
        frame = pd.DataFrame(data, columns=["query_id", "doc_id", "assessor", "grade"])
        for given in (data, frame, pa.Table.from_pandas(frame)):
            assert cohen_kappa(given, weights=weights) == pytest.approx(expected, abs=1e-12)
    # The shuffle is real: read by position, the same rows would give another kappa.
    positional = cohen_kappa_score([r[3] for r in a_rows], [r[3] for r in shuffled],
                                   weights=weights)
    assert positional != pytest.approx(expected, abs=1e-6)


def test_store_column_names_are_accepted():
    frame = pd.DataFrame(ROWS, columns=["query_id", "doc_id", "assessor_id", "relevance"])
    assert as_judgments(frame).equals(as_judgments(ROWS))


def test_missing_columns_are_named():
    with pytest.raises(AgreementError, match="lack column.*assessor"):
        as_judgments(pa.table({"query_id": ["q"], "doc_id": ["d"], "grade": [1]}))


def test_null_grades_and_assessors_are_all_reported():
    table = pa.table({"query_id": ["q", "q"], "doc_id": ["d", "e"],
                      "assessor": [None, "x"], "grade": pa.array([1, None], pa.int64())})
    with pytest.raises(AgreementError, match="1 row.*no assessor.*1 row.*no grade.*drop rows"):
        as_judgments(table)


def test_fractional_grades_are_refused():
    frame = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "assessor": ["x"], "grade": [0.5]})
    with pytest.raises(AgreementError, match="grade"):
        as_judgments(frame)


def test_repeated_judgment_is_an_error_unless_last_wins():
    rows = ROWS + [("q1", "d1", "ann", 0), ("q1", "d1", "ann", 2)]
    with pytest.raises(AgreementError, match=r"1 \(query_id, doc_id\) pair.*q1.*d1.*'ann'"):
        align(rows)
    a = align(rows, on_duplicate="last")
    assert a.grades[0, a.index("ann")] == 2
    assert align(rows[::-1], on_duplicate="last").grades[0, a.index("ann")] == 1


def test_unknown_assessor_names_who_is_there():
    with pytest.raises(AgreementError, match="'zed'.*'ann', 'bob', 'cat'"):
        align(ROWS, ["ann", "zed"])


def test_pairwise_statistic_needs_two_named_assessors_among_three():
    with pytest.raises(AgreementError, match="3 assessors.*assessors=\\(a, b\\)"):
        cohen_kappa(ROWS)


def test_agreement_error_is_a_pooling_error():
    assert issubclass(AgreementError, PoolingError)


def test_unreadable_input_says_what_to_pass():
    with pytest.raises(AgreementError, match="Arrow table.*DataFrame"):
        as_judgments(42)


def test_fractional_grade_in_tuples_is_reported_not_crashed_on():
    with pytest.raises(AgreementError, match="grade.*whole numbers"):
        as_judgments([("q", "d", "a", 0.5)])


def test_whole_float_and_text_grades_are_read_as_integers():
    assert as_judgments([("q", "d", "a", 2.0)]).column("grade").to_pylist() == [2]
    assert as_judgments([("q", "d", 7, "1")]).column("assessor").to_pylist() == ["7"]


def test_empty_judgments_align_to_nothing():
    a = align([])
    assert (a.assessors, a.n_shared, a.n_single) == ((), 0, 0)
