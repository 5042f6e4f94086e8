"""Aggregation models against a simulated crowd whose workers' confusion matrices are known.

The crowd: 2,000 tasks with true grades 0/1/2 (prior 0.5/0.3/0.2), each labelled by 5 of 7
workers drawn at random (seeded), so each worker gives about 1,400 labels: two experts, two
mediocre workers, a lenient one who grades up, one who answers 0 whatever the truth, and one
who answers at random. Theory: with workers this unequal, a model that weighs them (Wawa,
Dawid-Skene) beats counting votes, and Dawid-Skene, whose model is the simulation's, recovers
each confusion matrix up to sampling error (about 0.03 per cell here; stated bound 0.10).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from pooling.agreement.aggregation import (
    MODELS,
    accuracy,
    aggregate,
    cross_validated_labels,
)
from pooling.agreement.errors import AgreementError

K = 3


def _diagonal(p: float) -> np.ndarray:
    m = np.full((K, K), (1 - p) / (K - 1))
    np.fill_diagonal(m, p)
    return m


CONFUSION = {  # row: true grade, column: the worker's answer
    "expert1": _diagonal(0.9), "expert2": _diagonal(0.85),
    "mid1": _diagonal(0.6), "mid2": _diagonal(0.55),
    "lenient": np.array([[0.5, 0.4, 0.1], [0.1, 0.6, 0.3], [0.05, 0.15, 0.8]]),
    "zeros": np.array([[0.9, 0.05, 0.05]] * K),
    "random": np.full((K, K), 1 / K),
}


def simulate(seed: int = 7, n_tasks: int = 2000, per_task: int = 5
             ) -> tuple[pd.DataFrame, dict[str, int]]:
    rng = np.random.default_rng(seed)
    names = list(CONFUSION)
    truth = rng.choice(K, size=n_tasks, p=[0.5, 0.3, 0.2])
    rows = []
    for t in range(n_tasks):
        for w in rng.choice(len(names), size=per_task, replace=False):
            answer = rng.choice(K, p=CONFUSION[names[w]][truth[t]])
            rows.append((names[w], f"t{t}", int(answer)))
    return (pd.DataFrame(rows, columns=["worker", "task", "label"]),
            {f"t{t}": int(g) for t, g in enumerate(truth)})


@pytest.fixture(scope="module")
def crowd():
    return simulate()


@pytest.fixture(scope="module")
def results(crowd):
    labels, _ = crowd
    return {model: aggregate(labels, model) for model in MODELS}


def _max_error(result) -> float:
    rows = result.confusion.to_pylist()
    return max(abs(r["probability"] - CONFUSION[r["worker"]][r["true_label"]][r["label"]])
               for r in rows)


def test_dawid_skene_recovers_every_workers_confusion_matrix_within_0_10(results):
    assert _max_error(results["dawid-skene"]) < 0.10


@pytest.mark.parametrize("model", ["majority", "wawa"])
def test_vote_counting_models_count_confusion_against_their_labels_within_0_25(results, model):
    # counted against their own (wrong 10-20% of the time) labels: biased, but not far
    assert _max_error(results[model]) < 0.25


def test_models_that_weigh_workers_beat_counting_votes_on_an_unequal_crowd(crowd, results):
    _, truth = crowd
    acc = {m: accuracy(results[m].labels(), truth) for m in MODELS}
    assert acc["wawa"] > acc["majority"] + 0.02
    assert acc["dawid-skene"] > acc["wawa"] + 0.02
    assert acc["dawid-skene"] > 0.88


@pytest.mark.parametrize("model", MODELS)
def test_every_model_ranks_the_experts_first_and_the_random_worker_last(results, model):
    skills = dict(zip(results[model].workers["worker"].to_pylist(),
                      results[model].workers["skill"].to_pylist(), strict=True))
    ranked = sorted(skills, key=skills.get, reverse=True)
    assert set(ranked[:2]) == {"expert1", "expert2"}
    assert ranked[-1] == "random"


@pytest.mark.parametrize("model", MODELS)
def test_posteriors_are_probabilities_and_the_label_is_the_most_probable(results, model):
    result = results[model]
    probs = result.probabilities.to_pandas()
    sums = probs.groupby("task")["probability"].sum()
    assert np.allclose(sums, 1.0)
    best = probs.loc[probs.groupby("task")["probability"].idxmax()].set_index("task")
    tasks = result.tasks.to_pandas().set_index("task")
    assert np.allclose(tasks["posterior"], best.loc[tasks.index, "probability"])
    conf = result.confusion.to_pandas().groupby(["worker", "true_label"])["probability"].sum()
    assert np.allclose(conf, 1.0)


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
def test_dawid_skene_gives_the_same_labels_as_crowd_kit_itself(crowd, results):
    from crowdkit.aggregation import DawidSkene

    labels, _ = crowd
    theirs = DawidSkene(n_iter=100, tol=1e-5).fit_predict(labels)
    assert results["dawid-skene"].labels() == theirs.to_dict()


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
def test_wawa_works_with_this_scikit_learn_and_equals_the_weighted_vote(crowd, results):
    """crowd-kit 1.4.2's own Wawa fails with scikit-learn >= 1.6; ours must not, and must be
    Wawa: each worker weighted by agreement with the majority."""
    import sklearn
    from crowdkit.aggregation import Wawa

    labels, _ = crowd
    major = tuple(int(x) for x in sklearn.__version__.split(".")[:2])
    if major >= (1, 6):
        with pytest.raises(AttributeError, match="__sklearn_tags__"):
            Wawa().fit_predict(labels)
    majority = results["majority"].labels()
    agree = labels.assign(hit=[majority[t] == g for t, g in zip(labels.task, labels.label,
                                                                strict=True)])
    skill = agree.groupby("worker")["hit"].mean()
    votes = labels.assign(w=skill.reindex(labels.worker).to_numpy())
    weighted = votes.groupby(["task", "label"])["w"].sum().unstack(fill_value=0.0)
    expected = dict(zip(weighted.index, weighted.columns[weighted.to_numpy().argmax(axis=1)],
                        strict=True))
    assert results["wawa"].labels() == expected


def test_majority_ties_go_to_the_lower_grade_unless_told_otherwise():
    labels = pd.DataFrame({"worker": ["a", "b", "a", "b", "c"], "task": ["x", "x", "y", "y", "y"],
                           "label": [0, 2, 1, 1, 2]})
    assert aggregate(labels, "majority").labels() == {"x": 0, "y": 1}
    assert aggregate(labels, "majority", tie="higher").labels() == {"x": 2, "y": 1}
    tasks = aggregate(labels, "majority").tasks.to_pylist()
    assert [round(t["posterior"], 3) for t in tasks] == [0.5, 0.667]


def test_binary_threshold_reads_labels_as_relevant_or_not_before_aggregating():
    labels = pa.table({"worker": ["a", "b", "c"], "task": ["x", "x", "x"], "label": [1, 2, 0]})
    assert aggregate(labels, "majority").labels() == {"x": 0}  # a three-way tie
    result = aggregate(labels, "majority", binary_threshold=1)
    assert result.labels() == {"x": 1} and result.classes == (0, 1)


@pytest.mark.parametrize("model", MODELS)
def test_gold_fixes_the_seeded_tasks(crowd, model):
    labels, truth = crowd
    gold = {t: (g + 1) % K for t, g in list(truth.items())[:50]}  # deliberately not the truth
    predicted = aggregate(labels, model, gold=gold).labels()
    assert all(predicted[t] == g for t, g in gold.items())


def test_gold_seeding_helps_dawid_skene_on_tasks_it_did_not_see(crowd):
    """Seeded with a third of the truth, scored on the other two thirds only (3-fold CV)."""
    labels, truth = crowd
    # a crowd where the truth is hard for votes: only the two mediocre and the lenient answer
    hard = labels[labels.worker.isin(["mid1", "mid2", "lenient", "zeros"])]
    gold = {t: truth[t] for t in sorted(set(hard.task))}
    plain = accuracy(aggregate(hard, "dawid-skene").labels(), gold)
    held_out = cross_validated_labels(hard, "dawid-skene", gold, folds=3)
    assert set(held_out) == set(gold)
    assert accuracy(held_out, gold) >= plain


def test_cross_validation_never_scores_a_task_with_its_own_gold(monkeypatch, crowd):
    import pooling.agreement.aggregation as aggregation

    labels, truth = crowd
    gold = dict(list(truth.items())[:100])
    seen: list[set[str]] = []
    real = aggregation.aggregate

    def spy(*args, **kwargs):
        seen.append(set(kwargs["gold"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(aggregation, "aggregate", spy)
    out = aggregation.cross_validated_labels(labels, "majority", gold, folds=5)
    assert len(seen) == 5 and set(out) == set(gold)
    held = [set(gold) - s for s in seen]
    assert all(len(h) == 20 for h in held) and set().union(*held) == set(gold)


def test_what_cannot_be_aggregated_is_refused_with_what_to_do():
    with pytest.raises(AgreementError, match="use one of majority, wawa, dawid-skene"):
        aggregate(pd.DataFrame({"worker": ["a"], "task": ["x"], "label": [1]}), "glad")
    with pytest.raises(AgreementError, match="label missing"):
        aggregate(pd.DataFrame({"worker": ["a"], "task": ["x"]}), "majority")
    with pytest.raises(AgreementError, match="no labels"):
        aggregate(pd.DataFrame({"worker": [], "task": [], "label": []}), "majority")
    with pytest.raises(AgreementError, match="2 folds or more"):
        cross_validated_labels(pd.DataFrame({"worker": ["a"], "task": ["x"], "label": [1]}),
                               "majority", {"x": 1}, folds=1)
