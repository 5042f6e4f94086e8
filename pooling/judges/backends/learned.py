"""A built-in, offline judge learned from the human judgments so far: per topic, TF-IDF
features and logistic regression, as in continuous active learning (CAL/BMI, Cormack &
Grossman).

Training rows: query_id, doc_id, grade, doc_title, doc_text; a grade >= `relevant_from` is
relevant. The judge works on a binary scale: its probability is P(relevant) and its grade is
1 when that is 0.5 or more, else 0 (the classes are weighted as balanced, so 0.5 is a fair
cut even when relevant documents are rare). A topic with fewer than `min_per_class`
judgments of either class is refused: its pairs fail and say how many it has and needs.
scikit-learn is the optional extra `learned`, imported on first use.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from pooling.judges.backends.base import JudgeError, Pair, Verdict, at_least, failed, ok
from pooling.strategies import text_classifier
from pooling.strategies.text_classifier import SEED, document_text, sklearn_parts

TRAINING_COLUMNS = ("query_id", "doc_id", "grade", "doc_title", "doc_text")


def _sklearn() -> Any:
    return sklearn_parts(JudgeError)


def model() -> Any:
    """An unfitted per-topic classifier (`pooling.strategies.text_classifier.model`)."""
    return text_classifier.model(JudgeError)


def training_by_topic(training: pa.Table, relevant_from: int) -> dict[str, tuple[list[str], np.ndarray]]:
    """Per topic, the judged documents' texts and whether each is relevant (rows without a
    grade are left out)."""
    missing = [c for c in TRAINING_COLUMNS if c not in training.column_names]
    if missing:
        raise JudgeError(f"the learned judge's training table lacks column(s) {', '.join(missing)}; "
                         f"it needs {', '.join(TRAINING_COLUMNS)}")
    out: dict[str, tuple[list[str], list[bool]]] = {}
    columns = [training[c].to_pylist() for c in ("query_id", "grade", "doc_title", "doc_text")]
    for query_id, grade, title, text in zip(*columns, strict=True):
        if grade is None:
            continue
        texts, labels = out.setdefault(str(query_id), ([], []))
        texts.append(document_text(title, text))
        labels.append(grade >= relevant_from)
    return {q: (texts, np.array(labels, dtype=bool)) for q, (texts, labels) in out.items()}


def refusal(query_id: str, labels: np.ndarray | None, min_per_class: int,
            relevant_from: int, who: str = "the learned judge") -> str | None:
    """Why the topic's judgments are too few to learn from, or None when they suffice."""
    if labels is None or len(labels) == 0:
        return (f"topic {query_id!r} has no human judgments to learn from; judge at least "
                f"{min_per_class} relevant and {min_per_class} non-relevant documents first")
    relevant = int(labels.sum())
    other = len(labels) - relevant
    if relevant >= min_per_class and other >= min_per_class:
        return None
    return (f"topic {query_id!r} has {relevant} relevant and {other} non-relevant judgment(s) "
            f"(grade >= {relevant_from} is relevant) and {who} needs at least "
            f"{min_per_class} of each; judge more of it first")


class LearnedBackend:
    """Grades pairs with a classifier per topic, trained on that topic's judgments."""

    name = "learned"

    def __init__(self, training: pa.Table | None, *, relevant_from: int = 1,
                 min_per_class: int = 2):
        if training is None:
            raise JudgeError("the learned judge needs the human judgments so far as training; "
                             "pass them as a table of " + ", ".join(TRAINING_COLUMNS))
        at_least(self.name, "min_per_class", min_per_class, 1)
        _sklearn()
        self.relevant_from = relevant_from
        self.min_per_class = min_per_class
        self.training = training_by_topic(training, relevant_from)
        self._models: dict[str, Any] = {}

    def judge(self, pairs: Sequence[Pair]) -> Iterator[Verdict]:
        """Verdicts topic by topic (topics in the order they first appear)."""
        by_topic: dict[str, list[Pair]] = {}
        for pair in pairs:
            by_topic.setdefault(pair.query_id, []).append(pair)
        for query_id, topic_pairs in by_topic.items():
            start = time.monotonic()
            texts, labels = self.training.get(query_id, ([], None))
            reason = refusal(query_id, labels, self.min_per_class, self.relevant_from)
            if reason is None and query_id not in self._models:
                try:
                    self._models[query_id] = model().fit(texts, labels)
                except ValueError:  # no word in any judged document: an empty vocabulary
                    reason = (f"the judged documents of topic {query_id!r} have no words to "
                              "learn from; check that the documents' text was imported")
            if reason is not None:
                for pair in topic_pairs:
                    yield failed(pair, reason)
                continue
            fitted = self._models[query_id]
            probabilities = fitted.predict_proba(
                [document_text(p.doc_title, p.doc_text) for p in topic_pairs])[:, 1]
            seconds = (time.monotonic() - start) / len(topic_pairs)
            for pair, probability in zip(topic_pairs, probabilities, strict=True):
                p = float(probability)
                yield ok(pair, int(p >= 0.5), probability=p, seconds=seconds)

    def close(self) -> None:
        self._models.clear()


def cross_validated(training: pa.Table, folds: int = 5, *, relevant_from: int = 1) -> dict[str, Any]:
    """How well the learned judge agrees with the human judgments, by k-fold cross-validation
    within each topic (stratified, seeded): Cohen's kappa of its grades and ROC-AUC of its
    probabilities, per topic and overall.

    Returns {"folds", "relevant_from", "topics": {query_id: {"n", "relevant", "kappa",
    "roc_auc"}}, "skipped": {query_id: why}, "overall": {"topics", "n", "relevant", "kappa",
    "roc_auc" (over all topics' held-out predictions pooled), "mean_kappa", "mean_roc_auc"
    (means of the per-topic values)}}. A topic needs `folds` judgments of each class.
    """
    if folds < 2:
        raise JudgeError(f"cross-validation needs at least 2 folds, got {folds}")
    _sklearn()
    from sklearn.metrics import cohen_kappa_score, roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    topics: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    all_truth: list[np.ndarray] = []
    all_probability: list[np.ndarray] = []
    for query_id, (texts, labels) in sorted(training_by_topic(training, relevant_from).items()):
        reason = refusal(query_id, labels, folds, relevant_from, f"{folds}-fold cross-validation")
        if reason is not None:
            skipped[query_id] = reason
            continue
        documents = np.array(texts, dtype=object)
        probability = np.empty(len(labels))
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=SEED)
        for train, test in splitter.split(documents, labels):
            fitted = model().fit(list(documents[train]), labels[train])
            probability[test] = fitted.predict_proba(list(documents[test]))[:, 1]
        topics[query_id] = {
            "n": len(labels), "relevant": int(labels.sum()),
            "kappa": float(cohen_kappa_score(labels, probability >= 0.5)),
            "roc_auc": float(roc_auc_score(labels, probability)),
        }
        all_truth.append(labels)
        all_probability.append(probability)
    overall: dict[str, Any] = {"topics": len(topics), "n": 0, "relevant": 0,
                               "kappa": float("nan"), "roc_auc": float("nan"),
                               "mean_kappa": float("nan"), "mean_roc_auc": float("nan")}
    if topics:
        truth, probability = np.concatenate(all_truth), np.concatenate(all_probability)
        overall.update(
            n=len(truth), relevant=int(truth.sum()),
            kappa=float(cohen_kappa_score(truth, probability >= 0.5)),
            roc_auc=float(roc_auc_score(truth, probability)),
            mean_kappa=float(np.mean([t["kappa"] for t in topics.values()])),
            mean_roc_auc=float(np.mean([t["roc_auc"] for t in topics.values()])))
    return {"folds": folds, "relevant_from": relevant_from, "topics": topics,
            "skipped": skipped, "overall": overall}
