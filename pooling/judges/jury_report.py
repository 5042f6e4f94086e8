"""The jury report: how a round's jurors (`pooling.judges.juries`) agree with one another,
each against the round's people and against gold, and how the aggregation rules over the jury
score under k-fold cross-validation over the gold (each gold pair labelled by a model seeded
with the other folds' gold only): does the jury beat its best member?
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pyarrow as pa

from pooling.agreement.aggregation import accuracy, cross_validated_labels, gold_weights
from pooling.agreement.alpha import alpha_from_counts
from pooling.agreement.errors import AgreementError
from pooling.agreement.kappa import contingency, kappa_from_confusion
from pooling.crowds.model_rules import crowd_labels, gold_grades
from pooling.errors import StoreError
from pooling.judges.juries import JURY_RULES, jury_labels, round_jurors
from pooling.store.core import Store


@dataclass(frozen=True)
class JurorFigures:
    """One juror against the gold and against the round's people."""

    juror: str
    pairs: int  # pairs it judged in the round
    gold_pairs: int  # of those, gold pairs
    gold_accuracy: float  # on every gold pair the jury judged (a pair it did not: wrong)
    gold_binary_accuracy: float
    gold_kappa: float
    people_pairs: int  # pairs it shares with the people's majority
    people_accuracy: float
    people_kappa: float
    weight: float  # its weight in the gold-weighted rule fitted on all the gold


@dataclass(frozen=True)
class RuleFigures:
    """An aggregation rule over the jury, scored under cross-validation over the gold."""

    rule: str
    accuracy: float
    binary_accuracy: float


@dataclass
class JuryReport:
    """Agreement among a round's jurors, each against people and gold, and the aggregation
    rules under k-fold cross-validation over the gold (`jury_report`)."""

    round_id: str
    gold: str
    folds: int
    relevance_level: int
    jurors: list[JurorFigures]
    pairwise: list[tuple[str, str, int, float]]  # (juror, juror, shared pairs, kappa)
    alpha_nominal: float
    alpha_ordinal: float
    gold_pairs: int  # gold pairs the jury judged: the ones every accuracy is measured on
    rules: list[RuleFigures] = field(default_factory=list)

    @property
    def best_juror(self) -> JurorFigures:
        return max(self.jurors, key=lambda j: (j.gold_accuracy, j.gold_binary_accuracy))

    @property
    def verdict(self) -> str:
        """One sentence: does the gold-weighted jury beat its best member under CV?"""
        best = self.best_juror
        rule = next(r for r in self.rules if r.rule == "gold-weighted")
        if rule.accuracy > best.gold_accuracy:
            how = "beats"
        elif rule.accuracy == best.gold_accuracy:
            how = "equals"
        else:
            how = "falls below"
        return (f"the gold-weighted jury ({rule.accuracy:.3f}, {self.folds}-fold CV over "
                f"{self.gold_pairs:,} gold pairs) {how} its best member {best.juror} "
                f"({best.gold_accuracy:.3f})")

    def as_dict(self) -> dict[str, Any]:
        return {"round": self.round_id, "gold": self.gold, "folds": self.folds,
                "relevance_level": self.relevance_level, "gold_pairs": self.gold_pairs,
                "jurors": [asdict(j) for j in self.jurors],
                "pairwise": [{"a": a, "b": b, "pairs": n, "kappa": k}
                             for a, b, n, k in self.pairwise],
                "alpha_nominal": self.alpha_nominal, "alpha_ordinal": self.alpha_ordinal,
                "rules": [asdict(r) for r in self.rules], "best_juror": self.best_juror.juror,
                "verdict": self.verdict}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, default=_nan_none)


def _nan_none(value: Any) -> Any:
    return None


def jury_report(store: Store, round_id: str, gold: str, *, jurors: Sequence[str] | None = None,
                folds: int = 5, seed: int = 0, relevance_level: int = 1) -> JuryReport:
    """The jury of a round measured: pairwise Cohen's kappa and Krippendorff's alpha among
    the jurors; each juror's accuracy and kappa against the gold and against the people's
    majority of the round (ties to the lower grade); and each rule of JURY_RULES scored on
    the gold pairs the jury judged, each pair labelled by a model seeded with the gold of
    the other folds only (`cross_validated_labels`), never with its own."""
    ids = round_jurors(store, round_id, jurors)
    labels = jury_labels(store, round_id, ids)
    gold_map = gold_grades(store, gold)
    tasks_judged = set(labels["task"].to_pylist())
    judged_gold = {t: g for t, g in gold_map.items() if t in tasks_judged}
    if len(judged_gold) < max(folds, 2):
        raise StoreError(f"the jury of round {round_id!r} judged {len(judged_gold)} pair(s) of "
                         f"gold version {gold!r}; {folds}-fold cross-validation needs {folds} or "
                         "more: put gold pairs in the round (or lower --folds)")
    by_juror = _labels_by_worker(labels)
    people = _people_majority(store, round_id)
    weights = {w: x for w, x in zip(*(gold_weights(labels, judged_gold).column(c).to_pylist()
                                      for c in ("worker", "weight")), strict=True)}
    figures = []
    for juror in ids:
        mine = by_juror.get(juror, {})
        g = _compare(mine, judged_gold)
        p = _compare(mine, people)
        figures.append(JurorFigures(
            juror, len(mine), g[0], accuracy(mine, judged_gold),
            accuracy(mine, judged_gold, binary_threshold=relevance_level), g[2], p[0], p[1], p[2],
            weights.get(juror, 0.0)))
    pairwise = []
    for a, b in combinations(ids, 2):
        n, _, kappa = _compare(by_juror.get(a, {}), by_juror.get(b, {}))
        pairwise.append((a, b, n, kappa))
    nominal, ordinal = _alphas(by_juror)
    report = JuryReport(round_id, store.resolve_qrels(gold), folds, relevance_level, figures,
                        pairwise, nominal, ordinal, len(judged_gold))
    for rule in JURY_RULES:
        try:
            predicted = cross_validated_labels(labels, rule, judged_gold, folds=folds, seed=seed)
        except AgreementError as exc:
            raise StoreError(f"rule {rule!r}: {exc}") from exc
        report.rules.append(RuleFigures(
            rule, accuracy(predicted, judged_gold),
            accuracy(predicted, judged_gold, binary_threshold=relevance_level)))
    return report


def _labels_by_worker(labels: pa.Table) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for w, t, g in zip(*(labels[c].to_pylist() for c in ("worker", "task", "label")), strict=True):
        out.setdefault(w, {})[t] = g
    return out


def _people_majority(store: Store, round_id: str) -> dict[str, int]:
    """The people's majority grade per task of the round (ties to the lower grade)."""
    votes: dict[str, list[int]] = {}
    people = crowd_labels(store, round_id)
    for t, g in zip(people["task"].to_pylist(), people["label"].to_pylist(), strict=True):
        votes.setdefault(t, []).append(g)
    out = {}
    for t, grades in votes.items():
        counts = {g: grades.count(g) for g in grades}
        top = max(counts.values())
        out[t] = min(g for g, c in counts.items() if c == top)
    return out


def _compare(mine: Mapping[str, int], theirs: Mapping[str, int]) -> tuple[int, float, float]:
    """(shared tasks, share equal, Cohen's kappa) of two label sets on the tasks both have."""
    shared = sorted(set(mine) & set(theirs))
    if not shared:
        return 0, math.nan, math.nan
    x = np.array([mine[t] for t in shared], dtype=np.int64)
    y = np.array([theirs[t] for t in shared], dtype=np.int64)
    scale = np.unique(np.concatenate([x, y]))
    kappa = kappa_from_confusion(contingency(x, y, scale)) if len(scale) > 1 else math.nan
    return len(shared), float((x == y).mean()), float(kappa)


def _alphas(by_juror: Mapping[str, Mapping[str, int]]) -> tuple[float, float]:
    """Krippendorff's alpha (nominal, ordinal) over the tasks two jurors or more judged."""
    tasks = sorted({t for labels in by_juror.values() for t in labels})
    scale = np.unique([g for labels in by_juror.values() for g in labels.values()])
    if len(scale) < 2:
        return math.nan, math.nan
    counts = np.zeros((len(tasks), len(scale)), dtype=np.int64)
    index = {t: i for i, t in enumerate(tasks)}
    for labels in by_juror.values():
        for t, g in labels.items():
            counts[index[t], np.searchsorted(scale, g)] += 1
    counts = counts[counts.sum(axis=1) >= 2]
    if len(counts) == 0:
        return math.nan, math.nan
    return (float(alpha_from_counts(counts, scale, level="nominal")),
            float(alpha_from_counts(counts, scale, level="ordinal")))
