"""A judge (a second assessor, a model) scored as a classifier of the primary assessor's
relevance at a threshold: hard-label rates, and ROC-AUC / PR-AUC / log loss for probabilities.

Undefined rates (a zero denominator, one class only) are nan rather than 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pooling.agreement.errors import AgreementError
from pooling.agreement.judgments import align, keyed_values

_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class ClassificationScores:
    """Judge vs primary at grade >= threshold; `n` pairs judged by both."""

    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float
    accuracy: float
    fallout: float


@dataclass(frozen=True)
class ProbabilityScores:
    """Judge's probabilities of relevance vs primary's grades at a threshold.

    n: pairs with both; primary_only / probability_only: pairs with just one of them (skipped).
    """

    n: int
    n_relevant: int
    primary_only: int
    probability_only: int
    roc_auc: float
    pr_auc: float
    log_loss: float


def classification_scores(
    judgments: Any, *, primary: str, judge: str, threshold: int = 1
) -> ClassificationScores:
    """Precision, recall, F1, accuracy and fallout of `judge` against `primary` as truth."""
    x, y, _ = align(judgments, [primary, judge]).pair(primary, judge)
    return binary_rates(x >= threshold, y >= threshold)


def binary_rates(truth: np.ndarray, predicted: np.ndarray) -> ClassificationScores:
    """Confusion counts and rates of boolean predictions against boolean truth."""
    truth, predicted = np.asarray(truth, bool), np.asarray(predicted, bool)
    tp = int(np.sum(truth & predicted))
    fp = int(np.sum(~truth & predicted))
    fn = int(np.sum(truth & ~predicted))
    tn = int(np.sum(~truth & ~predicted))
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    return ClassificationScores(
        n=len(truth), tp=tp, fp=fp, fn=fn, tn=tn,
        precision=precision,
        recall=recall,
        f1=_ratio(2 * tp, 2 * tp + fp + fn),
        accuracy=_ratio(tp + tn, len(truth)),
        fallout=_ratio(fp, fp + tn),
    )


def probability_scores(
    judgments: Any,
    probabilities: Any,
    *,
    primary: str | None = None,
    threshold: int = 1,
) -> ProbabilityScores:
    """ROC-AUC, PR-AUC and log loss of probabilities of relevance against `primary`'s grades.

    probabilities: columns query_id, doc_id, probability (table, DataFrame, or a
    {(query_id, doc_id): probability} dict); matched to the judgments by key.
    """
    alignment = align(judgments, None if primary is None else [primary])
    if len(alignment.assessors) != 1:
        raise AgreementError(
            f"the judgments name {len(alignment.assessors)} assessors "
            f"({', '.join(alignment.assessors)}); pass primary= to choose whose grades are truth"
        )
    truth = {
        (q, d): g
        for q, d, g in zip(alignment.query_id, alignment.doc_id, alignment.grades[:, 0],
                           strict=True)
    }
    probs = keyed_values(probabilities, "probability")
    keys = sorted(set(truth) & set(probs))
    y = np.array([truth[k] >= threshold for k in keys], dtype=bool)
    p = np.array([probs[k] for k in keys], dtype=np.float64)
    if ((p < 0) | (p > 1)).any():
        raise AgreementError("probabilities must lie in [0, 1]; rescale the judge's scores first")
    return ProbabilityScores(
        n=len(keys),
        n_relevant=int(y.sum()),
        primary_only=len(truth) - len(keys),
        probability_only=len(probs) - len(keys),
        roc_auc=roc_auc(y, p),
        pr_auc=pr_auc(y, p),
        log_loss=log_loss(y, p),
    )


def roc_auc(truth: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve: P(relevant scored above non-relevant), ties counting 1/2."""
    truth, score = np.asarray(truth, bool), np.asarray(score, np.float64)
    n_pos, n_neg = int(truth.sum()), int((~truth).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    _, inverse, counts = np.unique(score, return_inverse=True, return_counts=True)
    below = np.concatenate([[0], np.cumsum(counts)[:-1]])
    ranks = (below + (counts + 1) / 2.0)[inverse]
    return (float(ranks[truth].sum()) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def pr_auc(truth: np.ndarray, score: np.ndarray) -> float:
    """Average precision as scikit-learn defines it: Σ_k (R_k − R_{k−1}) P_k over the distinct
    score thresholds, from the highest down (no interpolation). nan with no relevant pair."""
    truth, score = np.asarray(truth, bool), np.asarray(score, np.float64)
    n_pos = int(truth.sum())
    if n_pos == 0:
        return float("nan")
    order = np.argsort(-score, kind="stable")
    s, t = score[order], truth[order]
    last_of_group = np.r_[s[1:] != s[:-1], True]
    tp = np.cumsum(t)[last_of_group]
    seen = (np.flatnonzero(last_of_group) + 1).astype(np.float64)
    precision = tp / seen
    recall = tp / n_pos
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def log_loss(truth: np.ndarray, probability: np.ndarray) -> float:
    """Mean negative log-likelihood; like scikit-learn, the probability of the true class
    (p or 1 − p) is clipped to [eps, 1 − eps] so a confident mistake costs ~36, not infinity."""
    truth = np.asarray(truth, bool)
    p = np.asarray(probability, np.float64)
    if len(p) == 0:
        return float("nan")
    likelihood = np.clip(np.where(truth, p, 1.0 - p), _EPS, 1 - _EPS)
    return float(-np.mean(np.log(likelihood)))


def _ratio(num: int, den: int) -> float:
    return num / den if den else float("nan")
