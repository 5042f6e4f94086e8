"""A judge scored against the primary assessor, checked against scikit-learn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from agreement_data import CASES, rating_matrix, same, to_rows
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    f1_score,
    log_loss,
    precision_score,
    recall_score,
    roc_auc_score,
)
from sklearn.metrics import confusion_matrix as sk_confusion_matrix

from pooling.agreement import AgreementError, classification_scores, probability_scores


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("threshold", [1, 2])
def test_hard_label_rates_match_sklearn(case, threshold):
    seed, n, k, agree, p = case
    m = rating_matrix(seed, n, k, agree, p)
    ours = classification_scores(to_rows(m, ["primary", "judge"], seed=seed),
                                 primary="primary", judge="judge", threshold=threshold)
    y, yhat = m[:, 0] >= threshold, m[:, 1] >= threshold
    tn, fp, fn, tp = sk_confusion_matrix(y, yhat, labels=[False, True]).ravel()
    assert (ours.n, ours.tp, ours.fp, ours.fn, ours.tn) == (n, tp, fp, fn, tn)
    assert same(ours.precision, precision_score(y, yhat, zero_division=np.nan))
    assert same(ours.recall, recall_score(y, yhat, zero_division=np.nan))
    assert same(ours.f1, f1_score(y, yhat, zero_division=np.nan))
    assert same(ours.accuracy, accuracy_score(y, yhat))
    assert same(ours.fallout, fp / (fp + tn) if fp + tn else float("nan"))


def _judge(seed, n, p_rel, decimals=None):
    rng = np.random.default_rng(seed)
    grades = (rng.random(n) < p_rel).astype(int) * rng.integers(1, 3, n)
    prob = np.clip(0.5 * (grades > 0) + 0.6 * rng.random(n), 0, 1)
    if decimals is not None:
        prob = np.round(prob, decimals)  # ties between scores
    prob[: min(2, n)] = [0.0, 1.0][: min(2, n)]  # exact 0 and 1 exercise the clipping
    rows = [(f"q{i % 4}", f"d{i}", "primary", int(g)) for i, g in enumerate(grades)]
    probs = pd.DataFrame({"query_id": [f"q{i % 4}" for i in range(n)],
                          "doc_id": [f"d{i}" for i in range(n)], "probability": prob})
    return rows, probs.sample(frac=1.0, random_state=seed), grades, prob


@pytest.mark.parametrize("n", [2, 3, 10, 100, 2000])
@pytest.mark.parametrize("p_rel", [0.5, 0.05])
@pytest.mark.parametrize("decimals", [None, 1])
@pytest.mark.parametrize("threshold", [1, 2])
def test_probability_scores_match_sklearn(n, p_rel, decimals, threshold):
    rows, probs, grades, prob = _judge(n + int(100 * p_rel), n, p_rel, decimals)
    ours = probability_scores(rows, probs, threshold=threshold)
    y = grades >= threshold
    assert (ours.n, ours.n_relevant) == (n, int(y.sum()))
    assert same(ours.log_loss, log_loss(y, prob, labels=[False, True]))
    if 0 < y.sum() < n:
        assert same(ours.roc_auc, roc_auc_score(y, prob))
        assert same(ours.pr_auc, average_precision_score(y, prob))
    else:  # one class only: sklearn raises or warns; we say undefined
        assert np.isnan(ours.roc_auc)


def test_probabilities_are_matched_by_key_and_unmatched_pairs_are_counted():
    rows = [("q", "d1", "p", 1), ("q", "d2", "p", 0), ("q", "d3", "p", 1)]
    probs = {("q", "d2"): 0.2, ("q", "d1"): 0.9, ("q", "d9"): 0.5}
    ours = probability_scores(rows, probs)
    assert (ours.n, ours.primary_only, ours.probability_only) == (2, 1, 1)
    assert ours.roc_auc == 1.0


def test_primary_must_be_named_among_several_assessors():
    rows = [("q", "d1", "p", 1), ("q", "d1", "j", 0)]
    with pytest.raises(AgreementError, match="primary="):
        probability_scores(rows, {("q", "d1"): 0.3})
    assert probability_scores(rows, {("q", "d1"): 0.3}, primary="p").n == 1


def test_probabilities_outside_unit_interval_are_refused():
    with pytest.raises(AgreementError, match=r"\[0, 1\]"):
        probability_scores([("q", "d", "p", 1)], {("q", "d"): 1.5})
