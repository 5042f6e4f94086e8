"""One summary of a judging round's overlap: what `pooling agreement STORE --round` prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np

from pooling.agreement.alpha import krippendorff_alpha
from pooling.agreement.errors import AgreementError
from pooling.agreement.judgments import align
from pooling.agreement.kappa import cohen_kappa, fleiss_kappa
from pooling.agreement.overlap import raw_overlap


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
class AgreementReport:
    """Agreement over the pairs judged by two or more assessors.

    n_shared: pairs judged by at least two; n_single: by one only (not compared);
    raters_per_pair: {number of assessors: number of pairs} over the shared pairs.
    fleiss_kappa uses the varying-raters rule (exactly Fleiss when every pair has as many).
    overlap: relevant by all / relevant by any, over pairs every assessor judged.
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

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (nan stays a float; the renderer decides how to show it)."""
        out = asdict(self)
        out["assessors"] = list(self.assessors)
        out["grades"] = list(self.grades)
        out["pairs"] = [asdict(p) for p in self.pairs]
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
    alignment = align(judgments, assessors)
    if len(alignment.assessors) < 2:
        raise AgreementError(
            f"only one assessor ({', '.join(alignment.assessors) or 'none'}) judged these pairs; "
            "agreement needs overlap judgments by a second assessor"
        )
    if alignment.n_shared == 0:
        raise AgreementError(
            f"no (query_id, doc_id) pair was judged by two of {', '.join(alignment.assessors)} "
            f"({alignment.n_single} pairs judged once); assign some pairs to a second assessor"
        )
    shared = alignment.shared()
    used = np.unique(shared[~np.isnan(shared)]).astype(np.int64)
    scale = tuple(sorted(set(used.tolist()) | set(int(g) for g in (grades or ()))))
    pairs = []
    for a, b in combinations(alignment.assessors, 2):
        two = align(alignment, [a, b])
        if two.n_shared == 0:
            continue
        pairs.append(
            PairAgreement(
                assessor_a=a,
                assessor_b=b,
                n=two.n_shared,
                kappa=cohen_kappa(two, grades=scale),
                kappa_linear=cohen_kappa(two, weights="linear", grades=scale),
                kappa_quadratic=cohen_kappa(two, weights="quadratic", grades=scale),
                overlap=raw_overlap(two, threshold=threshold),
            )
        )
    sizes, counts = np.unique(alignment.raters_per_pair[alignment.raters_per_pair >= 2],
                              return_counts=True)
    return AgreementReport(
        assessors=alignment.assessors,
        grades=scale,
        threshold=threshold,
        n_shared=alignment.n_shared,
        n_single=alignment.n_single,
        n_complete=alignment.n_complete,
        raters_per_pair={int(s): int(c) for s, c in zip(sizes, counts, strict=True)},
        pairs=tuple(pairs),
        fleiss_kappa=fleiss_kappa(alignment, grades=scale, unequal="mean"),
        alpha_nominal=krippendorff_alpha(alignment, level="nominal", grades=scale),
        alpha_ordinal=krippendorff_alpha(alignment, level="ordinal", grades=scale),
        overlap=raw_overlap(alignment, threshold=threshold),
    )
