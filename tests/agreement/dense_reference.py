"""The dense, all-pairs agreement report as it was computed before the sparse one: a
pairs × assessors matrix, counts by comparing every cell with every grade, and Cohen's kappa
for every pair of assessors. Kept as the reference the sparse report must equal, and timed
beside it by scripts/bench_agreement.py (which imports it from here)."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from pooling.agreement.alpha import alpha_from_counts
from pooling.agreement.judgments import align
from pooling.agreement.kappa import cohen_kappa, fleiss_kappa_from_counts
from pooling.agreement.overlap import raw_overlap


def dense_report(judgments, grades=(), threshold: int = 1, pairwise: bool = True) -> dict:
    """The figures of `agreement_report`, computed densely: assessors, n_shared, n_single,
    n_complete, fleiss_kappa, alpha_nominal, alpha_ordinal, overlap, pairs ({(a, b):
    (n, kappa, kappa_linear, kappa_quadratic, overlap)}, empty unless `pairwise`) and
    per_assessor ({a: (n, answers, agreement)})."""
    alignment = align(judgments)
    raters = (~np.isnan(alignment.grades)).sum(axis=1)
    shared = alignment.grades[raters >= 2]
    used = np.unique(shared[~np.isnan(shared)]).astype(np.int64)
    scale = np.array(sorted(set(used.tolist()) | {int(g) for g in grades}), dtype=np.int64)
    counts = (shared[:, :, None] == scale[None, None, :]).sum(axis=1)
    pairs = {}
    for a, b in combinations(alignment.assessors if pairwise else (), 2):
        two = align(alignment, [a, b])
        if two.n_shared:
            pairs[(a, b)] = (two.n_shared,
                             cohen_kappa(two, grades=scale.tolist()),
                             cohen_kappa(two, weights="linear", grades=scale.tolist()),
                             cohen_kappa(two, weights="quadratic", grades=scale.tolist()),
                             raw_overlap(two, threshold=threshold))
    per_assessor = {}
    for j, name in enumerate(alignment.assessors):
        mine = shared[~np.isnan(shared[:, j])]
        if len(mine) == 0:
            continue
        others = (~np.isnan(mine)).sum(axis=1) - 1
        agreeing = (mine == mine[:, [j]]).sum(axis=1) - 1
        per_assessor[name] = (len(mine), int(others.sum()), float(np.mean(agreeing / others)))
    return {
        "assessors": alignment.assessors,
        "n_shared": int(np.sum(raters >= 2)),
        "n_single": int(np.sum(raters == 1)),
        "n_complete": int(np.sum(raters == len(alignment.assessors))),
        "fleiss_kappa": fleiss_kappa_from_counts(counts),
        "alpha_nominal": alpha_from_counts(counts, scale, level="nominal"),
        "alpha_ordinal": alpha_from_counts(counts, scale, level="ordinal"),
        "overlap": raw_overlap(alignment, threshold=threshold),
        "pairs": pairs,
        "per_assessor": per_assessor,
    }
