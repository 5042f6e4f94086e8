"""The gold-weighted model: a vote weighted by each worker's log-odds accuracy on gold, for
juries of unequal model judges. Theory: with jurors of accuracy 0.9, 0.7 and 0.55 on a binary
task, a plain vote is right with probability 0.817 (below its best member), while the
log-odds weights (2.20, 0.85, 0.20) let the best juror decide alone, so the rule keeps the
best member's accuracy; a juror who beats the others together always wins."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pooling.agreement.aggregation import (
    accuracy,
    aggregate,
    cross_validated_labels,
    gold_weights,
)
from pooling.agreement.errors import AgreementError

ACCURACY = {"good": 0.9, "fair": 0.7, "poor": 0.55}


def jury(seed: int = 3, n_tasks: int = 1500) -> tuple[pd.DataFrame, dict[str, int]]:
    """Every juror labels every binary task, right with its accuracy."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, size=n_tasks)
    rows = []
    for name, p in ACCURACY.items():
        right = rng.random(n_tasks) < p
        rows += [(name, f"t{t}", int(truth[t] if right[t] else 1 - truth[t]))
                 for t in range(n_tasks)]
    return (pd.DataFrame(rows, columns=["worker", "task", "label"]),
            {f"t{t}": int(g) for t, g in enumerate(truth)})


def test_under_cross_validation_votes_fall_below_the_best_juror_and_gold_weighting_does_not():
    labels, truth = jury()
    gold = dict(list(truth.items())[:300])
    best = accuracy(dict(zip(labels.task[labels.worker == "good"],
                             labels.label[labels.worker == "good"], strict=True)), gold)
    scored = {model: accuracy(cross_validated_labels(labels, model, gold, folds=5), gold)
              for model in ("majority", "gold-weighted")}
    assert scored["majority"] < best - 0.03  # about 0.82 against 0.9
    assert scored["gold-weighted"] >= best


def test_the_weights_are_the_log_odds_of_the_accuracy_smoothed_towards_chance():
    labels, truth = jury()
    gold = dict(list(truth.items())[:300])
    table = gold_weights(labels, gold).to_pandas().set_index("worker")
    for name in ACCURACY:
        row = table.loc[name]
        assert row["gold"] == 300
        smoothed = (row["correct"] + 1) / (300 + 2)
        assert row["accuracy"] == pytest.approx(smoothed)
        assert row["weight"] == pytest.approx(max(0.0, math.log(smoothed / (1 - smoothed))))
    assert table.loc["good", "weight"] > table.loc["fair", "weight"] + table.loc["poor", "weight"]


def test_a_dominant_juror_decides_alone_and_the_posterior_is_the_one_coin_models():
    labels = pd.DataFrame([("a", "g1", 1), ("b", "g1", 0), ("c", "g1", 0),
                           ("a", "g2", 0), ("b", "g2", 0), ("c", "g2", 1),
                           ("a", "t", 1), ("b", "t", 0), ("c", "t", 0)],
                          columns=["worker", "task", "label"])
    gold = {"g1": 1, "g2": 0}  # a is right twice, b once, c never
    result = aggregate(labels, "gold-weighted", gold=gold)
    weights = gold_weights(labels, gold).to_pandas().set_index("worker")["weight"]
    assert weights["c"] == 0.0  # below chance: no vote
    assert weights["a"] == pytest.approx(math.log(3)) and weights["b"] == 0.0
    assert result.labels()["t"] == 1  # a's weight alone beats b and c
    posterior = dict(zip(result.tasks["task"].to_pylist(), result.tasks["posterior"].to_pylist(),
                         strict=True))["t"]
    assert posterior == pytest.approx(3 / (3 + 1))  # exp(log 3) against exp(0)
    assert result.labels()["g1"] == 1 and result.params["gold_tasks"] == 2


def test_a_worker_without_gold_weighs_nothing_and_nobody_above_chance_means_a_plain_vote():
    labels = pd.DataFrame([("a", "g", 0), ("b", "t", 1), ("a", "t", 0), ("c", "t", 1)],
                          columns=["worker", "task", "label"])
    weights = gold_weights(labels, {"g": 1}).to_pandas().set_index("worker")["weight"]
    assert weights.to_dict() == {"a": 0.0, "b": 0.0, "c": 0.0}
    assert aggregate(labels, "gold-weighted", gold={"g": 1}).labels()["t"] == 1  # 2 votes to 1


def test_the_gold_weighted_model_without_gold_says_what_it_needs():
    labels, _ = jury(n_tasks=10)
    with pytest.raises(AgreementError, match="accuracy on gold"):
        aggregate(labels, "gold-weighted")
    with pytest.raises(AgreementError, match="gold-weighted"):
        aggregate(labels, "glad")
