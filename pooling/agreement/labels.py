"""Two label sets compared pair by pair: A (the reference) against B (a second assessor, a
judge, another qrels version), matched by (query_id, doc_id), never by position.

`compare_labels` gathers every pairwise statistic of the package for the pairs both sides
graded: the confusion matrix, Cohen's kappa (unweighted, linear, quadratic, and binary at the
relevance threshold), Krippendorff's alpha (nominal, ordinal, interval), B as a classifier of
A's relevance at a threshold and, where B gave probabilities of relevance, ROC-AUC, PR-AUC and
log loss. Undefined values are nan.

Pairs graded by one side only are left out, unless `unjudged` gives the grade a missing one
counts as (0: not relevant, as trec_eval counts an unjudged document): qrels that list mostly
relevant pairs (Cranfield's) otherwise leave almost every pair out of the comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.agreement.alpha import alpha_from_counts
from pooling.agreement.classifier import (
    ClassificationScores,
    ProbabilityScores,
    binary_rates,
    log_loss,
    pr_auc,
    roc_auc,
)
from pooling.agreement.errors import AgreementError
from pooling.agreement.judgments import align, grade_scale, keyed_values
from pooling.agreement.kappa import contingency, kappa_from_confusion

# One grade per (query_id, doc_id); `probability` (B's P(relevant)) may be null.
LABELS_SCHEMA = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
                           ("grade", pa.int64())])


# Pairs left out: more than the pairs compared (over half of all pairs) earn a note
# suggesting `unjudged`.
_MANY_LEFT_OUT = 0.5


@dataclass(frozen=True)
class LabelComparison:
    """A against B on the pairs both graded (`n_shared`); `only_a` / `only_b` pairs are left
    out, or with `unjudged` set compared too, the missing side's grade being `unjudged`.
    confusion[i, j]: compared pairs A graded grades[i] and B graded grades[j].

    Classification (`scores`) and `kappa_binary` count grade >= threshold as relevant on both
    sides, A being the truth. `probability` is None when B gave no probability on a compared
    pair.
    """

    n_shared: int
    only_a: int
    only_b: int
    grades: tuple[int, ...]
    confusion: np.ndarray
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    alpha_nominal: float
    alpha_ordinal: float
    alpha_interval: float
    threshold: int
    scores: ClassificationScores
    probability: ProbabilityScores | None
    kappa_binary: float = float("nan")
    unjudged: int | None = None

    @property
    def n_compared(self) -> int:
        """Pairs every statistic counts: the shared ones, plus one side's with `unjudged`."""
        return self.n_shared + (0 if self.unjudged is None else self.only_a + self.only_b)

    @property
    def left_out(self) -> int:
        """Pairs graded by one side only and left out of every statistic."""
        return 0 if self.unjudged is not None else self.only_a + self.only_b

    def note(self) -> str | None:
        """What to know before reading the statistics: how many pairs were left out (with
        the option that keeps them when they are many) or given the `unjudged` grade."""
        total = self.n_shared + self.only_a + self.only_b
        if self.unjudged is not None:
            if not self.only_a + self.only_b:
                return None
            return (f"{self.only_a + self.only_b:,} pair(s) graded by one side only are compared "
                    f"with grade {self.unjudged} for the missing side ({self.only_a:,} only A "
                    f"graded, {self.only_b:,} only B)")
        if not self.left_out:
            return None
        share = self.left_out / total
        text = (f"{self.left_out:,} of {total:,} pair(s) ({share:.1%}) are graded by one side "
                f"only and left out of every statistic ({self.only_a:,} only A graded, "
                f"{self.only_b:,} only B)")
        if share > _MANY_LEFT_OUT:
            text += ("; if a missing grade means not relevant (as trec_eval counts unjudged "
                     "documents, and qrels that list mostly relevant pairs assume), compare "
                     "them too with --unjudged 0 (unjudged=0 in Python)")
        return text

    def to_dict(self) -> dict[str, Any]:
        """Plain values (the confusion matrix as a list of rows; nan stays a float)."""
        out = asdict(self)
        out["grades"] = list(self.grades)
        out["confusion"] = self.confusion.tolist()
        out["n_compared"] = self.n_compared
        out["left_out"] = self.left_out
        out["note"] = self.note()
        return out


def compare_labels(
    a: Any,
    b: Any,
    *,
    threshold: int = 1,
    probabilities: Any = None,
    grades: Sequence[int] | None = None,
    unjudged: int | None = None,
) -> LabelComparison:
    """Compare label set B against reference A on the (query_id, doc_id) pairs both graded.

    a, b: Arrow tables or DataFrames with query_id, doc_id, grade (or relevance); each pair
    once. probabilities: B's P(relevant) as query_id, doc_id, probability (table, DataFrame
    or {(query_id, doc_id): p}); by default B's own `probability` column, nulls skipped.
    grades: the grade scale (may list grades nobody used, which moves weighted kappa);
    default: the grades used on the compared pairs.
    unjudged: the grade a pair missing on one side counts as there (0: not relevant), so
    every pair either side graded is compared; None (the default) leaves such pairs out.
    """
    table_a, table_b = label_table(a, "A"), label_table(b, "B")
    if probabilities is None:
        probabilities = _own_probabilities(b)
    alignment = align(pa.concat_tables([_as_assessor(table_a, "A"), _as_assessor(table_b, "B")]))
    # A side with no rows has no column in the alignment: it graded nothing.
    grades_ab = np.stack([alignment.grades[:, alignment.assessors.index(s)]
                          if s in alignment.assessors else np.full(len(alignment.query_id), np.nan)
                          for s in ("A", "B")], axis=1)
    judged = ~np.isnan(grades_ab)
    shared = judged.all(axis=1)
    compared = shared if unjudged is None else judged.any(axis=1)
    if unjudged is not None:
        grades_ab = np.where(judged, grades_ab, float(int(unjudged)))
    x, y = (grades_ab[compared, k].astype(np.int64) for k in (0, 1))
    scale = grade_scale(np.concatenate([x, y]), grades)
    confusion = contingency(x, y, scale)
    # Alpha from the units × values counts of the shared pairs (two coders each).
    counts = np.stack([(x[:, None] == scale[None, :]), (y[:, None] == scale[None, :])]).sum(axis=0)
    probability = None
    if probabilities is not None:
        probability = _probability_scores(alignment.query_id[compared],
                                          alignment.doc_id[compared], x >= threshold,
                                          keyed_values(probabilities, "probability"))
    return LabelComparison(
        n_shared=int(shared.sum()),
        only_a=int((judged[:, 0] & ~judged[:, 1]).sum()),
        only_b=int((judged[:, 1] & ~judged[:, 0]).sum()),
        grades=tuple(scale.tolist()),
        confusion=confusion,
        kappa=kappa_from_confusion(confusion),
        kappa_linear=kappa_from_confusion(confusion, weights="linear"),
        kappa_quadratic=kappa_from_confusion(confusion, weights="quadratic"),
        alpha_nominal=alpha_from_counts(counts, scale, level="nominal"),
        alpha_ordinal=alpha_from_counts(counts, scale, level="ordinal"),
        alpha_interval=alpha_from_counts(counts, scale, level="interval"),
        threshold=threshold,
        scores=binary_rates(x >= threshold, y >= threshold),
        probability=probability,
        kappa_binary=kappa_from_confusion(contingency((x >= threshold).astype(np.int64),
                                                      (y >= threshold).astype(np.int64),
                                                      np.array([0, 1]))),
        unjudged=None if unjudged is None else int(unjudged),
    )


def label_table(data: Any, side: str = "the labels") -> pa.Table:
    """A label set as `LABELS_SCHEMA` (plus `probability` when given): from an Arrow table or
    a DataFrame with query_id, doc_id and grade (or relevance). Every problem at once."""
    if not isinstance(data, pa.Table):
        import pandas as pd

        if not isinstance(data, pd.DataFrame):
            raise AgreementError(f"cannot read label set {side} from a {type(data).__name__}; "
                                 "pass an Arrow table or DataFrame of query_id, doc_id, grade")
        data = pa.Table.from_pandas(data, preserve_index=False)
    names = data.column_names
    if "grade" not in names and "relevance" in names:
        data = data.rename_columns(["grade" if n == "relevance" else n for n in names])
    missing = [n for n in LABELS_SCHEMA.names if n not in data.column_names]
    if missing:
        raise AgreementError(f"label set {side} lacks column(s) {', '.join(missing)}; found "
                             f"{', '.join(names)}. Expected query_id, doc_id, grade (or relevance)")
    problems, columns = [], []
    for field in LABELS_SCHEMA:
        column = data.column(field.name)
        if column.null_count:
            problems.append(f"{column.null_count} row(s) have no {field.name}")
        try:
            columns.append(column.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            expected = "whole numbers" if field.name == "grade" else "text"
            problems.append(f"column {field.name} ({column.type}) should hold {expected}")
    if problems:
        raise AgreementError(f"label set {side} is not usable: " + "; ".join(problems)
                             + " — drop or fix these rows and try again")
    table = pa.Table.from_arrays(columns, schema=LABELS_SCHEMA)
    counts = table.group_by(["query_id", "doc_id"]).aggregate([([], "count_all")])
    repeated = counts.filter(pc.greater(counts["count_all"], 1))
    if repeated.num_rows:
        shown = ", ".join(f"({q!r}, {d!r})" for q, d in zip(
            repeated["query_id"].to_pylist()[:10], repeated["doc_id"].to_pylist()[:10], strict=True))
        raise AgreementError(f"label set {side} grades {repeated.num_rows} pair(s) more than once: "
                             f"{shown}; keep one grade per (query_id, doc_id)")
    return table


def _as_assessor(table: pa.Table, name: str) -> pa.Table:
    return table.append_column("assessor", pa.array([name] * table.num_rows, pa.string())).select(
        ["query_id", "doc_id", "assessor", "grade"])


def _own_probabilities(b: Any) -> pa.Table | None:
    """B's non-null probabilities, or None when it has no probability column or none set."""
    table = b if isinstance(b, pa.Table) else pa.Table.from_pandas(b, preserve_index=False)
    if "probability" not in table.column_names:
        return None
    given = table.filter(pc.is_valid(table["probability"])).select(
        ["query_id", "doc_id", "probability"])
    return given if given.num_rows else None


def _probability_scores(query_ids: np.ndarray, doc_ids: np.ndarray, truth: np.ndarray,
                        probs: dict[tuple[str, str], float]) -> ProbabilityScores | None:
    """ROC-AUC, PR-AUC and log loss on the shared pairs with a probability.

    primary_only: shared pairs without one; probability_only: probabilities of pairs that
    are not shared (ignored)."""
    keys = list(zip(query_ids.tolist(), doc_ids.tolist(), strict=True))
    have = np.array([k in probs for k in keys], dtype=bool)
    if not have.any():
        return None
    p = np.array([probs[k] for k, h in zip(keys, have, strict=True) if h], dtype=np.float64)
    if ((p < 0) | (p > 1)).any() or np.isnan(p).any():
        raise AgreementError("probabilities must lie in [0, 1]; rescale the judge's scores first")
    y = truth[have]
    return ProbabilityScores(
        n=int(have.sum()),
        n_relevant=int(y.sum()),
        primary_only=int((~have).sum()),
        probability_only=len(probs) - int(have.sum()),
        roc_auc=roc_auc(y, p),
        pr_auc=pr_auc(y, p),
        log_loss=log_loss(y, p),
    )
