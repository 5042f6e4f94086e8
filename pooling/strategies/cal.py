"""`cal`: continuous active learning (Cormack & Grossman's CAL/BMI, served one document at a
time as HiCAL does).

Per topic, a classifier (the learned judge's TF-IDF + logistic regression,
`pooling.strategies.text_classifier.model`) is trained on the topic's judgments so far, and the
unjudged candidate it finds most likely relevant is judged next. Training is batched as in
BMI: a model trained on n judgments serves the next max(1, ceil(growth * n)) documents before
the next training, so trainings grow with the log of the judgments (growth=0: retrain after
every judgment). The schedule counts judgments, so the next document is a function of the
judgments in order: a round rebuilt from its judgments serves what a live selector would.

Cold start: until the topic has a relevant and a non-relevant judgment of a document with
text, another strategy chooses (`cold`, by default `mixfuse`, the default strategy of
`pooling pool`; `take` gives reciprocal-rank fusion); it sees every judgment. Ties between
equal classifier scores go to the earlier document in round-robin order (rank 1 of every run,
then rank 2, ...). Needs the documents' text (input `texts`); a candidate without text is read
as empty, and a judged document without text is not learned from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from pooling.strategies.base import (
    Param,
    Selector,
    Strategy,
    StrategyError,
    TopicRuns,
    get_strategy,
    register,
)
from pooling.strategies.depth import round_robin


class CALSelector:
    """One topic's CAL: the cold-start strategy's choice while cold, then the classifier's
    most probable document first."""

    def __init__(self, topic: TopicRuns, texts: Mapping[str, str], cold: Selector, growth: float,
                 relevant_from: int):
        from pooling.strategies.text_classifier import model

        self._model = model
        # Each document is tokenised once, by the learned judge's own analyser, rather than at
        # every training: the features are the same.
        self._analyse = model().steps[0][1].build_analyzer()
        self.cold = cold
        self.docs = round_robin(topic)
        self.position = {d: i for i, d in enumerate(self.docs)}
        self.texts = texts
        self.candidate_tokens = [self._analyse(texts.get(d) or "") for d in self.docs]
        self.tokens: dict[str, list[str]] = {}
        self.open = np.ones(len(self.docs), dtype=bool)
        self.growth = growth
        self.relevant_from = relevant_from
        self.seen: set[str] = set()
        self.labelled: list[tuple[str, bool]] = []  # judged documents with text, in order
        self.boundary: int | None = None  # labels the current model is trained on
        self.next_boundary: int | None = None
        self.order: np.ndarray | None = None  # candidate indexes, most probable first
        self.trainings = 0

    def next(self) -> str | None:
        if not self.open.any():
            return None
        order = self._ranking()
        if order is None:
            doc = self.cold.next()
            if doc is not None and doc in self.position and self.open[self.position[doc]]:
                return doc
            order = np.arange(len(self.docs))  # the cold strategy has nothing left to offer
        for i in order:
            if self.open[i]:
                return self.docs[int(i)]
        return None  # pragma: no cover  (open.any() above)

    def observe(self, doc_id: str, grade: int) -> None:
        if doc_id in self.seen:
            return
        self.seen.add(doc_id)
        self.cold.observe(doc_id, grade)
        i = self.position.get(doc_id)
        if i is not None:
            self.open[i] = False
        text = self.texts.get(doc_id)
        if text:
            i = self.position.get(doc_id)
            self.tokens[doc_id] = self.candidate_tokens[i] if i is not None else self._analyse(text)
            self.labelled.append((doc_id, int(grade) >= self.relevant_from))

    def _warm_at(self) -> int | None:
        """How many labels the topic had when it first had both classes (None: not yet)."""
        seen_classes: set[bool] = set()
        for n, (_, relevant) in enumerate(self.labelled, start=1):
            seen_classes.add(relevant)
            if len(seen_classes) == 2:
                return n
        return None

    def _ranking(self) -> np.ndarray | None:
        """The candidates by the model of the latest training due, or None while cold."""
        n = len(self.labelled)
        if self.boundary is None:
            warm = self._warm_at()
            if warm is None:
                return None
            self.boundary, self.next_boundary = None, warm
        assert self.next_boundary is not None
        due = self.boundary
        while self.next_boundary <= n:
            due = self.next_boundary
            self.next_boundary = due + max(1, math.ceil(self.growth * due))
        if due != self.boundary:
            self.boundary = due
            self.order = self._train(self.labelled[:due])
        return self.order

    def _train(self, labelled: list[tuple[str, bool]]) -> np.ndarray | None:
        tokens = [self.tokens[d] for d, _ in labelled]
        labels = np.array([r for _, r in labelled], dtype=bool)
        classifier = self._model()
        classifier.set_params(**{f"{classifier.steps[0][0]}__analyzer": _tokenised})
        try:
            fitted = classifier.fit(tokens, labels)
        except ValueError:  # no word in any judged document: the cold start goes on
            return None
        self.trainings += 1
        probability = fitted.predict_proba(self.candidate_tokens)[:, 1]
        return np.lexsort((np.arange(len(self.docs)), -probability))


def _tokenised(tokens: list[str]) -> list[str]:
    """The analyser of documents tokenised already."""
    return tokens


@register
class CAL(Strategy):
    name = "cal"
    adaptive = True
    needs = ("texts",)
    summary = ("continuous active learning: a per-topic TF-IDF + logistic regression on the "
               "judgments so far picks the next document (CAL/BMI, HiCAL); needs document text")
    params = (
        Param("growth", float, 0.1, "a model trained on n judgments serves ceil(growth * n) "
              "documents (at least 1) before retraining; 0 retrains after every judgment"),
        Param("cold", str, "mixfuse", "the strategy that chooses until the topic has a relevant "
              "and a non-relevant judgment (any that reads only the runs; take: RRF)"),
        Param("relevant_from", int, 1, "the lowest grade the classifier learns as relevant"),
    )

    def selector(self, topic: TopicRuns, seed: int) -> Selector:
        o = self.options
        if o["growth"] < 0:
            raise StrategyError(f"cal needs growth >= 0, got {o['growth']}")
        cold = get_strategy(o["cold"])
        if cold.needs or isinstance(cold, CAL):
            raise StrategyError(f"cal's cold start needs a strategy that reads only the runs, "
                                f"not {o['cold']!r}")
        texts: Mapping[str, Any] = self.input("texts")
        return CALSelector(topic, texts, cold.selector(topic, seed), o["growth"],
                           o["relevant_from"])
