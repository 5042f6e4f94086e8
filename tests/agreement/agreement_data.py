"""Random, seeded rating data for checking agreement statistics against reference libraries.

Imported by the tests beside it (pytest puts this folder on sys.path).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

# (seed, items, grades, chance a rater copies the item's "true" grade, grade distribution)
CASES = [
    pytest.param((1, 2, 2, 0.5, None), id="tiny-2"),
    pytest.param((2, 3, 3, 0.5, None), id="tiny-3"),
    pytest.param((3, 7, 2, 0.3, None), id="small-binary"),
    pytest.param((4, 40, 3, 0.6, None), id="medium-3"),
    pytest.param((5, 60, 4, 0.7, [0.85, 0.09, 0.04, 0.02]), id="imbalanced-4"),
    pytest.param((6, 200, 2, 0.2, [0.95, 0.05]), id="imbalanced-binary"),
    pytest.param((7, 500, 5, 0.5, None), id="large-5"),
    pytest.param((8, 150, 4, 0.0, None), id="independent-4"),
]


def rating_matrix(seed, n_items, n_grades, agree, p, n_raters=2, missing=0.0):
    """items × raters grades (float, NaN = not judged): raters copy a latent grade or guess."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(n_grades, size=n_items, p=p)
    guess = rng.choice(n_grades, size=(n_items, n_raters), p=p)
    grades = np.where(rng.random((n_items, n_raters)) < agree, truth[:, None], guess).astype(float)
    if missing:
        grades[rng.random(grades.shape) < missing] = np.nan
    return grades


def to_rows(matrix, names=None, seed=0, topics=5):
    """Long judgments (query_id, doc_id, assessor, grade) in a shuffled row order."""
    names = names or [f"assessor{j}" for j in range(matrix.shape[1])]
    rows = [
        (f"q{i % topics}", f"d{i:04d}", names[j], int(matrix[i, j]))
        for i in range(matrix.shape[0])
        for j in range(matrix.shape[1])
        if not math.isnan(matrix[i, j])
    ]
    order = np.random.default_rng(seed).permutation(len(rows))
    return [rows[k] for k in order]


def same(ours, theirs, tol=1e-9):
    """Equal to tol, or both nan (both libraries call the statistic undefined)."""
    if math.isnan(ours) or math.isnan(theirs):
        return math.isnan(ours) and math.isnan(theirs)
    return abs(ours - theirs) <= tol
