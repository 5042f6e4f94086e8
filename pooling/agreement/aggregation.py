"""Crowd labels aggregated into one label per task by a model of who is reliable.

A labels table (worker, task, label) becomes, per task, the aggregated label and its posterior
probability, and per worker an estimated confusion matrix and a skill. The models:

- majority:    the most frequent label; a tie goes to the lower label (`tie="lower"`, the
               conservative choice, as the qrels rule `majority`) or the higher one. The
               posterior is the label's share of the task's votes.
- wawa:        Worker Agreement With Aggregate: each worker's skill is their agreement with
               the majority, then a vote weighted by skill (crowd-kit's `Wawa`).
- dawid-skene: the EM model of Dawid and Skene (1979), one confusion matrix per worker
               (crowd-kit's `DawidSkene`).
- gold-weighted: a vote weighted by each worker's accuracy on gold, for juries of model
               judges of unequal quality (needs gold). A worker's accuracy is smoothed
               towards chance, a = (correct + 1) / (gold labels + K) over K labels, and their
               weight is its log-odds, w = log(a (K - 1) / (1 - a)), 0 at or below chance; a
               task's posterior of label c is proportional to exp(the weights of the workers
               who gave c), the exact posterior of the one-coin model with a flat prior. So a
               worker whose weight exceeds the others' together decides alone (the best juror
               is chosen when one dominates), a worker with no gold labels weighs nothing, and
               when nobody beats chance everyone weighs 1 (a plain vote).

crowd-kit 1.4.2's own `Wawa` calls scikit-learn's `check_is_fitted`, which fails with
scikit-learn 1.6 or later ("'Wawa' object has no attribute '__sklearn_tags__'"); `_Wawa` below
is the same model without that call, so scikit-learn is not pinned back.

crowd-kit's one-coin Dawid–Skene, GLAD and MACE are not offered: on the TREC 2010 crowd labels
(98k labels) they take 60 s to minutes where the target is 5 s, and one-coin Dawid–Skene and
MACE score below the majority (docs/crowds.md has the figures).

Gold (known labels for some tasks) seeds a model: those tasks' posteriors are fixed to the gold
label, so the workers' estimates learn from them. Accuracy of a seeded model must be measured
on tasks that were not seeded (`cross_validated_labels`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from pooling.agreement.errors import AgreementError

MODELS = ("majority", "wawa", "dawid-skene")  # the models that need no gold
GOLD_MODELS = ("gold-weighted",)  # the models that need gold to fit


@dataclass(frozen=True)
class Aggregation:
    """What a model made of a labels table.

    tasks: task, label (the aggregated label), posterior (its probability under the model).
    probabilities: task, label, probability, for every label seen (rows of a task sum to 1).
    workers: worker, labels (how many they gave), skill (the share of them equal to the
    aggregated label).
    confusion: worker, true_label, label, probability: how likely the worker answers `label`
    when the truth is `true_label` (each worker's rows for one true_label sum to 1).
    """

    model: str
    params: dict[str, Any]
    tasks: pa.Table
    probabilities: pa.Table
    workers: pa.Table
    confusion: pa.Table
    classes: tuple[int, ...] = field(default=())

    def labels(self) -> dict[str, int]:
        """task -> aggregated label."""
        return dict(zip(self.tasks["task"].to_pylist(), self.tasks["label"].to_pylist(),
                        strict=True))


def _frame(labels: pa.Table | pd.DataFrame) -> pd.DataFrame:
    """The labels as a DataFrame of worker, task (strings) and label (int)."""
    frame = labels.to_pandas() if isinstance(labels, pa.Table) else labels
    missing = [c for c in ("worker", "task", "label") if c not in frame.columns]
    if missing:
        raise AgreementError(f"the labels table needs columns worker, task and label; "
                               f"{', '.join(missing)} missing")
    frame = frame[["worker", "task", "label"]]
    if frame["label"].isna().any():
        raise AgreementError("a label is missing (null); drop those rows before aggregating")
    return pd.DataFrame({"worker": frame["worker"].astype(str).to_numpy(),
                         "task": frame["task"].astype(str).to_numpy(),
                         "label": frame["label"].astype("int64").to_numpy()})


def aggregate(labels: pa.Table | pd.DataFrame, model: str, *,
              gold: Mapping[str, int] | None = None, binary_threshold: int | None = None,
              tie: str = "lower", n_iter: int = 100, tol: float = 1e-5) -> Aggregation:
    """Aggregate a labels table (worker, task, label) with `model` (one of MODELS, or of
    GOLD_MODELS with gold).

    gold: task -> known label; seeds the model (those tasks' posteriors are fixed to it).
    Gold on a task nobody labelled, or with a label nobody gave, cannot seed and is left out;
    `params["gold_tasks"]` counts the tasks that did.
    binary_threshold: labels >= it count as 1 and the others as 0 before aggregating (so gold
    too); None keeps the graded labels. tie: majority's ties ('lower' or 'higher').
    n_iter and tol: Dawid–Skene's EM iterations and its stopping tolerance.
    """
    if model not in (*MODELS, *GOLD_MODELS):
        raise AgreementError(f"unknown aggregation model {model!r}; use one of "
                             f"{', '.join((*MODELS, *GOLD_MODELS))}")
    if tie not in ("lower", "higher"):
        raise AgreementError("tie must be 'lower' or 'higher'")
    frame = _frame(labels)
    if frame.empty:
        raise AgreementError("there are no labels to aggregate")
    seed = dict(gold or {})
    if binary_threshold is not None:
        frame["label"] = (frame["label"] >= binary_threshold).astype("int64")
        seed = {t: int(g >= binary_threshold) for t, g in seed.items()}
    classes = sorted(frame["label"].unique().tolist())
    # Work on integer codes: crowd-kit joins on these columns, and ints join 4x faster.
    workers, worker_code = np.unique(frame["worker"].to_numpy(), return_inverse=True)
    tasks, task_code = np.unique(frame["task"].to_numpy(), return_inverse=True)
    coded = pd.DataFrame({"worker": worker_code, "task": task_code, "label": frame["label"]})
    index = {t: i for i, t in enumerate(tasks)}
    seed_codes = pd.Series({index[t]: g for t, g in seed.items() if t in index and g in classes},
                           dtype="int64")
    fit = _FITS[model]
    probas, confusion = fit(coded, classes, seed_codes, tie=tie, n_iter=n_iter, tol=tol)
    probas = probas.reindex(columns=classes, fill_value=0.0).sort_index()
    params: dict[str, Any] = {"model": model, "binary_threshold": binary_threshold,
                              "gold_tasks": len(seed_codes)}
    if model in ("majority", "gold-weighted"):
        params["tie"] = tie
    if model == "dawid-skene":
        params.update(n_iter=n_iter, tol=tol)
    return _result(model, params, coded, probas, confusion, classes, workers, tasks, tie)


def _majority_probas(coded: pd.DataFrame, classes: list[int],
                     skills: pd.Series | None = None) -> pd.DataFrame:
    """Each task's (skill-weighted) vote share per label."""
    weight = (skills.reindex(coded["worker"]).to_numpy() if skills is not None
              else np.ones(len(coded)))
    votes = (pd.DataFrame({"task": coded["task"], "label": coded["label"], "w": weight})
             .pivot_table(index="task", columns="label", values="w", aggfunc="sum", fill_value=0.0)
             .reindex(columns=classes, fill_value=0.0))
    total = votes.sum(axis=1).replace(0.0, 1.0)
    return votes.div(total, axis=0)


def _seeded(probas: pd.DataFrame, seed: pd.Series) -> pd.DataFrame:
    """probas with the seeded tasks' rows set to their gold label."""
    if seed.empty:
        return probas
    probas = probas.copy()
    rows = seed.index.intersection(probas.index)
    probas.loc[rows] = 0.0
    for label, group in seed.loc[rows].groupby(seed.loc[rows]):
        probas.loc[group.index, label] = 1.0
    return probas


def _pick(matrix: np.ndarray, tie: str) -> np.ndarray:
    """Each row's most probable column; a tie goes to the lower label, or the higher one."""
    if tie == "lower":
        return matrix.argmax(axis=1)
    return matrix.shape[1] - 1 - matrix[:, ::-1].argmax(axis=1)


def _decided(probas: pd.DataFrame, tie: str) -> pd.DataFrame:
    """probas with each task's most probable label at 1 and the others at 0."""
    hard = np.zeros_like(probas.to_numpy())
    hard[np.arange(len(hard)), _pick(probas.to_numpy(), tie)] = 1.0
    return pd.DataFrame(hard, index=probas.index, columns=probas.columns)


def _empirical_confusion(coded: pd.DataFrame, probas: pd.DataFrame,
                         classes: list[int]) -> pd.DataFrame:
    """Each worker's confusion matrix counted against the tasks' labels (probas, one-hot for
    the vote-counting models), as Dawid–Skene's M-step counts: index (worker, label), one
    column per true label, each column summing to 1 per worker."""
    joined = coded[["worker", "label"]].join(probas.reindex(coded["task"]).reset_index(drop=True))
    counts = joined.groupby(["worker", "label"]).sum()
    full = pd.MultiIndex.from_product([sorted(coded["worker"].unique()), classes],
                                      names=["worker", "label"])
    counts = counts.reindex(full, fill_value=0.0)
    totals = counts.groupby(level="worker").transform("sum").replace(0.0, 1.0)
    return counts / totals


def _fit_majority(coded: pd.DataFrame, classes: list[int], seed: pd.Series, *, tie: str,
                  **_: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    probas = _seeded(_majority_probas(coded, classes), seed)
    return probas, _empirical_confusion(coded, _decided(probas, tie), classes)


def _crowdkit() -> Any:
    """crowd-kit's aggregation package, or an error that says how to install it."""
    try:
        import crowdkit.aggregation
    except ImportError as exc:
        raise AgreementError(
            f"the wawa and dawid-skene models need crowd-kit ({exc}); install it with "
            "`pip install 'pooling[crowd]'`") from None
    return crowdkit.aggregation


@contextmanager
def _quiet() -> Iterator[None]:
    """crowd-kit 1.4.2 passes pandas keywords (inplace=, copy=) that pandas 3 deprecates: its
    warnings say nothing to a user of pooling."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module="crowdkit")
        yield


def _wawa_class() -> type:
    """crowd-kit's Wawa without scikit-learn's `check_is_fitted` (see the module's docstring)."""
    kit = _crowdkit()
    MajorityVote, Wawa = kit.MajorityVote, kit.Wawa  # noqa: N806

    class _Wawa(Wawa):
        def _apply(self, data: pd.DataFrame) -> _Wawa:
            if self.skills_ is None:
                raise AgreementError("Wawa is not fitted: call fit first")
            mv = MajorityVote().fit(data, skills=self.skills_)
            self.probas_, self.labels_ = mv.probas_, mv.labels_
            return self

    return _Wawa


def _fit_wawa(coded: pd.DataFrame, classes: list[int], seed: pd.Series, *, tie: str,
              **_: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Wawa's two steps: each worker's skill is their agreement with the majority (ties as
    `tie`; a seeded task's truth is its gold), then each task's vote weighted by skill."""
    majority = _majority_probas(coded, classes)
    truth = pd.Series(np.asarray(classes)[_pick(majority.to_numpy(), tie)], index=majority.index)
    rows = seed.index.intersection(truth.index)
    truth.loc[rows] = seed.loc[rows]
    wawa = _wawa_class()()
    with _quiet():
        wawa.skills_ = _crowdkit().utils.get_accuracy(coded, true_labels=truth, by="worker")
        wawa._apply(coded)
    probas = _seeded(wawa.probas_.reindex(columns=classes, fill_value=0.0), seed)
    return probas, _empirical_confusion(coded, _decided(probas, tie), classes)


def _fit_dawid_skene(coded: pd.DataFrame, classes: list[int], seed: pd.Series, *, n_iter: int,
                     tol: float, **_: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    ds = _crowdkit().DawidSkene(n_iter=n_iter, tol=tol)
    with _quiet():
        ds.fit(coded, true_labels=seed if not seed.empty else None)
    probas = ds.probas_.reindex(columns=classes, fill_value=0.0)
    errors = ds.errors_.reindex(columns=classes, fill_value=0.0)
    full = pd.MultiIndex.from_product([sorted(coded["worker"].unique()), classes],
                                      names=["worker", "label"])
    return probas, errors.reindex(full, fill_value=0.0)


def _gold_weights(coded: pd.DataFrame, seed: pd.Series, k: int) -> pd.DataFrame:
    """Per worker (index): gold (labels on seeded tasks), correct, accuracy (smoothed towards
    chance) and weight (its log-odds, 0 at or below chance), as the module doc states."""
    workers = pd.Index(sorted(coded["worker"].unique()), name="worker")
    truth = seed.reindex(coded["task"]).to_numpy()
    on_gold = ~pd.isna(truth)
    hits = pd.DataFrame({"worker": coded["worker"].to_numpy()[on_gold],
                         "correct": (coded["label"].to_numpy()[on_gold] == truth[on_gold])})
    grouped = hits.groupby("worker")["correct"]
    gold = grouped.size().reindex(workers, fill_value=0)
    correct = grouped.sum().reindex(workers, fill_value=0)
    k = max(k, 2)
    acc = (correct + 1) / (gold + k)
    weight = np.log(acc * (k - 1) / (1 - acc)).clip(lower=0.0)
    return pd.DataFrame({"gold": gold.astype("int64"), "correct": correct.astype("int64"),
                         "accuracy": acc, "weight": weight}, index=workers)


def gold_weights(labels: pa.Table | pd.DataFrame, gold: Mapping[str, int], *,
                 binary_threshold: int | None = None) -> pa.Table:
    """Each worker's weight in the gold-weighted model (module doc): worker, gold (their
    labels on gold tasks), correct, accuracy (smoothed towards chance) and weight."""
    frame = _frame(labels)
    seed = dict(gold)
    if binary_threshold is not None:
        frame["label"] = (frame["label"] >= binary_threshold).astype("int64")
        seed = {t: int(g >= binary_threshold) for t, g in seed.items()}
    k = len(set(frame["label"].tolist()) | set(seed.values()))
    table = _gold_weights(frame, pd.Series(seed, dtype="int64"), k)
    return pa.table({"worker": pa.array(table.index.tolist(), pa.string()),
                     "gold": pa.array(table["gold"].to_numpy(), pa.int64()),
                     "correct": pa.array(table["correct"].to_numpy(), pa.int64()),
                     "accuracy": pa.array(table["accuracy"].to_numpy(), pa.float64()),
                     "weight": pa.array(table["weight"].to_numpy(), pa.float64())})


def _fit_gold_weighted(coded: pd.DataFrame, classes: list[int], seed: pd.Series, *, tie: str,
                       **_: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A vote weighted by each worker's log-odds accuracy on the seeded tasks (module doc)."""
    if seed.empty:
        raise AgreementError("the gold-weighted model weighs each worker by their accuracy on "
                             "gold: name a gold version (--gold) with pairs they labelled")
    weights = _gold_weights(coded, seed, len(classes))["weight"]
    if not (weights > 0).any():
        weights = weights * 0 + 1.0  # nobody beats chance on gold: a plain vote
    scores = (pd.DataFrame({"task": coded["task"], "label": coded["label"],
                            "w": weights.reindex(coded["worker"]).to_numpy()})
              .pivot_table(index="task", columns="label", values="w", aggfunc="sum",
                           fill_value=0.0)
              .reindex(columns=classes, fill_value=0.0))
    raw = scores.to_numpy()
    exp = np.exp(raw - raw.max(axis=1, keepdims=True))
    probas = pd.DataFrame(exp / exp.sum(axis=1, keepdims=True), index=scores.index,
                          columns=scores.columns)
    probas = _seeded(probas, seed)
    return probas, _empirical_confusion(coded, _decided(probas, tie), classes)


_FITS: dict[str, Callable[..., tuple[pd.DataFrame, pd.DataFrame]]] = {
    "majority": _fit_majority, "wawa": _fit_wawa, "dawid-skene": _fit_dawid_skene,
    "gold-weighted": _fit_gold_weighted}


def _result(model: str, params: dict[str, Any], coded: pd.DataFrame, probas: pd.DataFrame,
            confusion: pd.DataFrame, classes: list[int], workers: np.ndarray,
            tasks: np.ndarray, tie: str) -> Aggregation:
    matrix = probas.to_numpy()
    pick = _pick(matrix, tie)
    label = np.asarray(classes, dtype=np.int64)[pick]
    posterior = matrix[np.arange(len(matrix)), pick]
    task_ids = tasks[probas.index.to_numpy()]
    task_table = pa.table({"task": pa.array(task_ids.tolist(), pa.string()),
                           "label": pa.array(label, pa.int64()),
                           "posterior": pa.array(posterior, pa.float64())})
    long = probas.stack()
    prob_table = pa.table({
        "task": pa.array(tasks[long.index.get_level_values(0).to_numpy()].tolist(), pa.string()),
        "label": pa.array(long.index.get_level_values(1).to_numpy(), pa.int64()),
        "probability": pa.array(long.to_numpy(), pa.float64())})
    # skill: the share of a worker's labels equal to the aggregated label
    agrees = label[pd.Index(probas.index).get_indexer(coded["task"])] == coded["label"].to_numpy()
    per_worker = pd.DataFrame({"worker": coded["worker"], "p": agrees}).groupby("worker")["p"]
    worker_table = pa.table({
        "worker": pa.array(workers[per_worker.size().index.to_numpy()].tolist(), pa.string()),
        "labels": pa.array(per_worker.size().to_numpy(), pa.int64()),
        "skill": pa.array(per_worker.mean().to_numpy(), pa.float64())})
    conf = confusion.reindex(columns=classes, fill_value=0.0)
    conf.columns.name = "true_label"
    stacked = conf.stack()
    confusion_table = pa.table({
        "worker": pa.array(workers[stacked.index.get_level_values("worker").to_numpy()].tolist(),
                           pa.string()),
        "true_label": pa.array(stacked.index.get_level_values("true_label").to_numpy(), pa.int64()),
        "label": pa.array(stacked.index.get_level_values("label").to_numpy(), pa.int64()),
        "probability": pa.array(stacked.to_numpy(), pa.float64())})
    confusion_table = confusion_table.sort_by([("worker", "ascending"), ("true_label", "ascending"),
                                               ("label", "ascending")])
    return Aggregation(model, params, task_table, prob_table, worker_table, confusion_table,
                       tuple(classes))


def accuracy(predicted: Mapping[str, int], truth: Mapping[str, int], *,
             binary_threshold: int | None = None) -> float:
    """Share of the truth's tasks whose predicted label equals the true one (both read as
    relevant or not when binary_threshold is given). A task not predicted counts as wrong."""
    if not truth:
        return math.nan

    def read(g: int | None) -> int | None:
        if g is None or binary_threshold is None:
            return g
        return int(g >= binary_threshold)

    return sum(read(predicted.get(t)) == read(g) for t, g in truth.items()) / len(truth)


def cross_validated_labels(labels: pa.Table | pd.DataFrame, model: str,
                           gold: Mapping[str, int], *, folds: int = 5, seed: int = 0,
                           **options: Any) -> dict[str, int]:
    """Each gold task's label from `model` seeded with the gold of the other folds only
    (k-fold cross-validation over the gold, folds drawn at random with `seed`): no task is
    labelled by a model that saw its gold label. options: as `aggregate` (binary_threshold
    applies to the gold seed too). Score the result with `accuracy` against the gold."""
    if folds < 2:
        raise AgreementError("cross-validation needs 2 folds or more")
    if len(gold) < folds:
        raise AgreementError(f"{len(gold)} gold task(s) cannot be split into {folds} folds")
    tasks = sorted(gold)
    order = np.random.default_rng(seed).permutation(len(tasks))
    out: dict[str, int] = {}
    for k in range(folds):
        held = [tasks[i] for i in order[k::folds]]
        train = dict(gold)
        for t in held:
            del train[t]
        predicted = aggregate(labels, model, gold=train, **options).labels()
        out.update({t: predicted[t] for t in held if t in predicted})
    return out
