"""Nugget recall of generated answers: `strict_vital`, `strict_all`, `vital` and `all`.

An answer is assigned each nugget of its topic: support, partial support or none. Its scores
are the share of the topic's nuggets it supports, over the vital nuggets or all of them;
the strict forms count full support only, the others count partial support as half. A
topic without vital nuggets scores 0 on the vital forms, and an answer assigned no nugget
scores 0 on all four. These are nuggetizer's definitions (`nuggetizer.core.metrics`,
castorini/nuggetizer 0.0.5, the reference of the TREC 2024 RAG track) and its labels: a
nugget is vital when its importance is `vital` (anything else, `okay` or a model's
`failed`, is not), supported when its assignment is `support`, half when `partial_support`.

A run's score is the mean over the answers it gave, as nuggetizer averages its records;
`complete=True` scores every topic of the evaluation it did not answer as 0 (trec_eval's -c).
Values equal nuggetizer's bit for bit per answer (the same divisions of the same counts); a
mean is a float sum divided by the count, within a few units in the last place of
`statistics.mean`'s correctly rounded one, the same at any printed precision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pooling.formats.nugget_files import FULL_SUPPORT, PARTIAL_SUPPORT

# Canonical names, in the order they print, and what each counts.
NUGGET_MEASURES = ("strict_vital", "strict_all", "vital", "all")
DESCRIPTIONS = {
    "strict_vital": "Share of the topic's vital nuggets the answer fully supports (nuggetizer's "
                    "strict_vital_score).",
    "strict_all": "Share of all the topic's nuggets the answer fully supports "
                  "(strict_all_score).",
    "vital": "Share of vital nuggets supported, partial support counting half (vital_score).",
    "all": "Share of all nuggets supported, partial support counting half (all_score).",
}
# nuggetizer's output names, and ir_measures-like spellings, read as the canonical ones.
ALIASES = {**{f"{m}_score": m for m in NUGGET_MEASURES},
           "nugget_strict_vital": "strict_vital", "nugget_strict_all": "strict_all",
           "nugget_vital": "vital", "nugget_all": "all"}
GROUP = "nuggets"  # asks for all four

# The support grades a reader converts nuggetizer's labels to (one rule, in the reader).
SUPPORT, PARTIAL = FULL_SUPPORT, PARTIAL_SUPPORT


def canonical_nugget_measure(name: str) -> str | None:
    """The canonical nugget measure `name` spells, or None when it is not one."""
    if name in NUGGET_MEASURES:
        return name
    return ALIASES.get(name)


@dataclass(frozen=True)
class NuggetScores:
    """Each answer's four scores (arrays in answer order)."""

    strict_vital: np.ndarray
    strict_all: np.ndarray
    vital: np.ndarray
    all: np.ndarray

    def get(self, measure: str) -> np.ndarray:
        return getattr(self, measure)


def nugget_scores(answer: np.ndarray, vital: np.ndarray, grade: np.ndarray,
                  n_answers: int) -> NuggetScores:
    """Scores of `n_answers` answers from their assigned nuggets, one row each: the answer's
    index (0 .. n_answers-1), whether the nugget is vital, its support grade (2, 1, 0).

    Vectorised: one bincount, whatever the number of answers and nuggets."""
    answer = np.asarray(answer, dtype=np.int64)
    code = np.asarray(vital, dtype=np.int64) * 3 + np.asarray(grade, dtype=np.int64)
    # one pass: counts[a, vital * 3 + grade] for each answer a
    counts = np.bincount(answer * 6 + code, minlength=n_answers * 6).reshape(n_answers, 6)
    counts = counts.astype(np.float64)
    n_vital = counts[:, 3:].sum(axis=1)
    n_all = counts[:, :3].sum(axis=1) + n_vital
    sup_vital, part_vital = counts[:, 3 + SUPPORT], counts[:, 3 + PARTIAL]
    sup_all = counts[:, SUPPORT] + sup_vital
    part_all = counts[:, PARTIAL] + part_vital
    return NuggetScores(
        strict_vital=_share(sup_vital, n_vital),
        strict_all=_share(sup_all, n_all),
        vital=_share(sup_vital + 0.5 * part_vital, n_vital),
        all=_share(sup_all + 0.5 * part_all, n_all),
    )


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    out = np.zeros_like(part)
    np.divide(part, whole, out=out, where=whole > 0)
    return out


def run_means(scores: np.ndarray, run: np.ndarray, n_runs: int,
              counted: np.ndarray | None = None) -> np.ndarray:
    """Each run's mean of its answers' scores (`run`: each answer's run index); `counted`:
    how many topics each run is averaged over (default: the answers it gave)."""
    run = np.asarray(run, dtype=np.int64)
    totals = np.bincount(run, weights=scores, minlength=n_runs)
    answered = np.bincount(run, minlength=n_runs).astype(np.float64)
    over = answered if counted is None else np.asarray(counted, dtype=np.float64)
    return _share(totals, over)
