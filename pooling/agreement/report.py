"""One summary of a judging round's overlap: what `pooling agreement STORE --round` prints.

Its cost grows with the answers, not with the square of the assessors: the group figures
(Fleiss' kappa, Krippendorff's alpha, overlap) come from one pairs × grades table of counts,
and each assessor is set against all the others at once (`AssessorAgreement`). Cohen's kappa
for every pair of assessors is a view for a few experts: it is computed only up to
`PAIRWISE_MAX_ASSESSORS` assessors (45 pairs). Past that the table would have more rows
than anyone reads, and in a crowd, where two workers share a handful of pairs, each
pairwise kappa rests on too little to mean anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np

from pooling.agreement.alpha import alpha_from_counts
from pooling.agreement.errors import AgreementError
from pooling.agreement.judgments import Answers, align, sparse_answers
from pooling.agreement.kappa import cohen_kappa, fleiss_kappa_from_counts
from pooling.agreement.overlap import raw_overlap

# Cohen's kappa for every pair of assessors up to this many assessors (45 pairs); above it
# the report has each assessor against the others only (module docstring).
PAIRWISE_MAX_ASSESSORS = 10


@dataclass(frozen=True)
class PairAgreement:
    """Two assessors on the n pairs both judged."""

    assessor_a: str
    assessor_b: str
    n: int
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    overlap: float


# The per-pair statistics in the order every view shows them: (field of PairAgreement,
# terminal header, page header). `pooling agreement --round` and the organiser's round page
# both walk this list, so a statistic added to PairAgreement and here shows in each.
PAIR_STATISTICS: tuple[tuple[str, str, str], ...] = (
    ("kappa", "kappa", "κ"),
    ("kappa_linear", "kappa (linear)", "κ linear"),
    ("kappa_quadratic", "kappa (quadratic)", "κ quadratic"),
    ("overlap", "overlap", "Overlap"),
)


@dataclass(frozen=True)
class AssessorAgreement:
    """One assessor against all the others, on the n pairs they judged that others judged too.

    answers: the others' answers on those pairs; agreement: the share of them with this
    assessor's grade (each pair weighted equally: per pair the share of its other answers
    that agree, averaged); kappa: that agreement corrected for chance as Fleiss' kappa is,
    (agreement − P_e) / (1 − P_e) with the report's P_e. The mean of agreement over every
    answer on a pair is Fleiss' P_i, so these are Fleiss' kappa taken apart by assessor.
    """

    assessor: str
    n: int
    answers: int
    agreement: float
    kappa: float


# The per-assessor statistics in the order every view shows them, as PAIR_STATISTICS.
ASSESSOR_STATISTICS: tuple[tuple[str, str, str], ...] = (
    ("agreement", "agreement", "Agreement"),
    ("kappa", "kappa vs others", "κ vs others"),
)


@dataclass(frozen=True)
class AgreementReport:
    """Agreement over the pairs judged by two or more assessors.

    n_shared: pairs judged by at least two; n_single: by one only (not compared);
    raters_per_pair: {number of assessors: number of pairs} over the shared pairs.
    fleiss_kappa uses the varying-raters rule (exactly Fleiss when every pair has as many).
    overlap: relevant by all / relevant by any, over pairs every assessor judged.
    pairs: Cohen's kappa per pair of assessors who met, only with at most
    PAIRWISE_MAX_ASSESSORS assessors (empty beyond: `pairwise` is False); per_assessor: each
    assessor who shares a pair with another, against the others, in assessor order.
    """

    assessors: tuple[str, ...]
    grades: tuple[int, ...]
    threshold: int
    n_shared: int
    n_single: int
    n_complete: int
    raters_per_pair: dict[int, int]
    pairs: tuple[PairAgreement, ...]
    fleiss_kappa: float
    alpha_nominal: float
    alpha_ordinal: float
    overlap: float
    per_assessor: tuple[AssessorAgreement, ...] = ()
    pairwise: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (nan stays a float; the renderer decides how to show it)."""
        out = asdict(self)
        out["assessors"] = list(self.assessors)
        out["grades"] = list(self.grades)
        out["pairs"] = [asdict(p) for p in self.pairs]
        out["per_assessor"] = [asdict(a) for a in self.per_assessor]
        return out


def agreement_report(
    judgments: Any,
    *,
    assessors: Sequence[str] | None = None,
    grades: Sequence[int] | None = None,
    threshold: int = 1,
) -> AgreementReport:
    """Summarise agreement among assessors (all in the judgments unless named).

    grades: the round's grade scale (may include grades nobody used; it matters for weighted
    kappa); threshold: the lowest grade that counts as relevant for overlap.
    """
    answers = sparse_answers(judgments, assessors)
    if len(answers.assessors) < 2:
        raise AgreementError(
            f"only one assessor ({', '.join(answers.assessors) or 'none'}) judged these pairs; "
            "agreement needs overlap judgments by a second assessor"
        )
    raters = answers.raters_per_pair
    if not np.any(raters >= 2):
        raise AgreementError(
            f"no (query_id, doc_id) pair was judged by two of {_names(answers.assessors)} "
            f"({answers.n_single} pairs judged once); assign some pairs to a second assessor"
        )
    shared = raters >= 2
    # The scale: grades used on shared pairs and those of the round, used or not (a grade
    # between used ones widens weighted kappa's distances).
    on_shared = shared[answers.pair]
    scale = np.unique(np.concatenate([answers.grade[on_shared],
                                      np.asarray(grades or (), dtype=np.int64)]))
    counts = answers.subset(on_shared).category_counts(scale)
    pairwise = len(answers.assessors) <= PAIRWISE_MAX_ASSESSORS
    sizes, n_pairs = np.unique(raters[shared], return_counts=True)
    return AgreementReport(
        assessors=answers.assessors,
        grades=tuple(scale.tolist()),
        threshold=threshold,
        n_shared=int(shared.sum()),
        n_single=int(np.sum(raters == 1)),
        n_complete=int(np.sum(raters == len(answers.assessors))),
        raters_per_pair={int(s): int(c) for s, c in zip(sizes, n_pairs, strict=True)},
        pairs=_pairs(answers, scale, threshold) if pairwise else (),
        fleiss_kappa=fleiss_kappa_from_counts(counts[shared]),
        alpha_nominal=alpha_from_counts(counts[shared], scale, level="nominal"),
        alpha_ordinal=alpha_from_counts(counts[shared], scale, level="ordinal"),
        overlap=_overlap(answers, raters, threshold),
        per_assessor=per_assessor_agreement(answers, scale, counts),
        pairwise=pairwise,
    )


def per_assessor_agreement(answers: Answers, scale: np.ndarray,
                           counts: np.ndarray) -> tuple[AssessorAgreement, ...]:
    """Each assessor against the others (`AssessorAgreement`) from the pairs × grades counts
    on `scale` (`Answers.category_counts`), in one pass over the answers."""
    raters = counts.sum(axis=1)
    on_shared = raters[answers.pair] >= 2
    pair, who = answers.pair[on_shared], answers.assessor[on_shared]
    column = np.searchsorted(scale, answers.grade[on_shared])
    others = raters[pair] - 1
    agreeing = counts[pair, column] - 1
    n_assessors = len(answers.assessors)
    n = np.bincount(who, minlength=n_assessors)
    total = np.bincount(who, weights=others, minlength=n_assessors)
    share = np.bincount(who, weights=agreeing / others, minlength=n_assessors)
    p_e = _chance_agreement(counts[raters >= 2])
    out = []
    for i in np.flatnonzero(n):
        agreement = float(share[i] / n[i])
        kappa = (agreement - p_e) / (1.0 - p_e) if p_e < 1.0 else float("nan")
        out.append(AssessorAgreement(answers.assessors[i], int(n[i]), int(total[i]),
                                     agreement, kappa))
    return tuple(out)


def _chance_agreement(counts: np.ndarray) -> float:
    """Fleiss' P_e: Σ_j p_j², p_j the share of all answers on shared pairs in grade j."""
    total = counts.sum()
    return float(np.sum((counts.sum(axis=0) / total) ** 2)) if total else float("nan")


def _pairs(answers: Answers, scale: np.ndarray, threshold: int) -> tuple[PairAgreement, ...]:
    """Cohen's kappa and overlap for every pair of assessors who share a pair: for a few
    assessors only (PAIRWISE_MAX_ASSESSORS), as it goes over all pairs of them."""
    alignment = answers.dense()
    grades = scale.tolist()
    out = []
    for a, b in combinations(alignment.assessors, 2):
        two = align(alignment, [a, b])
        if two.n_shared == 0:
            continue
        out.append(PairAgreement(
            assessor_a=a, assessor_b=b, n=two.n_shared,
            kappa=cohen_kappa(two, grades=grades),
            kappa_linear=cohen_kappa(two, weights="linear", grades=grades),
            kappa_quadratic=cohen_kappa(two, weights="quadratic", grades=grades),
            overlap=raw_overlap(two, threshold=threshold),
        ))
    return tuple(out)


def _overlap(answers: Answers, raters: np.ndarray, threshold: int) -> float:
    """Relevant by all / relevant by any, over the pairs every assessor judged (pooled)."""
    complete = raters == len(answers.assessors)
    relevant = np.bincount(answers.pair, weights=answers.grade >= threshold,
                           minlength=len(raters))[complete]
    union = int(np.sum(relevant > 0))
    return float(np.sum(relevant == len(answers.assessors))) / union if union else float("nan")


def _names(assessors: Sequence[str], shown: int = 10) -> str:
    more = f" and {len(assessors) - shown} more" if len(assessors) > shown else ""
    return ", ".join(assessors[:shown]) + more
