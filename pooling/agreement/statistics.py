"""The statistics of two label sets compared pair by pair, as one ordered list.

The record (`LabelAgreement.to_dict`, hence its JSON and CSV), the HTML page and the terminal
summary of `pooling agreement` all walk `STATISTICS`, so a statistic added here shows in each,
in the same order, under the same key.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pooling.agreement.labels import LabelComparison


@dataclass(frozen=True)
class Statistic:
    """One statistic of a `LabelComparison`.

    section and key: where the record keeps it (`to_dict()[section][key]`, CSV row
    `section.key`); field: its attribute on the section's record; label: its row name on the
    HTML page and term: its words in the terminal summary (both may hold {threshold}, the
    label also {n}, the pairs with a probability); digits: decimals shown; description: what
    it measures.
    """

    section: str
    key: str
    field: str
    label: str
    term: str
    description: str
    digits: int = 3

    def value(self, comparison: LabelComparison) -> float:
        """Its value in `comparison` (nan where undefined)."""
        return getattr(section_record(comparison, self.section), self.field)


STATISTICS: tuple[Statistic, ...] = (
    Statistic("kappa", "unweighted", "kappa", "Cohen's kappa (unweighted)", "Cohen's kappa",
              "agreement on the exact grade beyond chance"),
    Statistic("kappa", "linear", "kappa_linear", "Cohen's kappa (linear)", "linear",
              "kappa with disagreements weighted by their distance in grades"),
    Statistic("kappa", "quadratic", "kappa_quadratic", "Cohen's kappa (quadratic)", "quadratic",
              "kappa with disagreements weighted by the squared distance"),
    Statistic("kappa", "binary", "kappa_binary", "Cohen's kappa (binary, grade ≥ {threshold})",
              "binary at grade >= {threshold}",
              "kappa on relevant or not, relevant being grade >= threshold"),
    Statistic("alpha", "nominal", "alpha_nominal", "Krippendorff's alpha (nominal)",
              "Krippendorff's alpha nominal", "alpha with grades as unordered labels"),
    Statistic("alpha", "ordinal", "alpha_ordinal", "Krippendorff's alpha (ordinal)", "ordinal",
              "alpha with grades ordered"),
    Statistic("alpha", "interval", "alpha_interval", "Krippendorff's alpha (interval)",
              "interval", "alpha with grades as evenly spaced numbers"),
    Statistic("classification", "precision", "precision", "precision at grade ≥ {threshold}",
              "precision", "share of B's relevant pairs that A finds relevant"),
    Statistic("classification", "recall", "recall", "recall", "recall",
              "share of A's relevant pairs that B finds relevant"),
    Statistic("classification", "f1", "f1", "F1", "F1", "harmonic mean of precision and recall"),
    Statistic("classification", "accuracy", "accuracy", "accuracy", "accuracy",
              "share of pairs where both agree on relevant or not"),
    Statistic("classification", "fallout", "fallout", "fallout", "fallout",
              "share of A's non-relevant pairs that B finds relevant"),
    Statistic("probability", "roc_auc", "roc_auc", "ROC-AUC ({n:,} pairs with a probability)",
              "ROC-AUC", "how well B's probabilities rank A's relevant pairs above the others"),
    Statistic("probability", "pr_auc", "pr_auc", "PR-AUC (average precision)", "PR-AUC",
              "average precision of B's probabilities against A's relevance"),
    Statistic("probability", "log_loss", "log_loss", "log loss", "log loss",
              "cross-entropy of B's probabilities against A's relevance"),
)

# The sections, in order: the record's keys and the CSV rows' prefixes.
SECTIONS: tuple[str, ...] = tuple(dict.fromkeys(s.section for s in STATISTICS))


def section_record(comparison: LabelComparison, section: str) -> Any:
    """The record holding a section's statistics: the comparison itself for kappa and alpha,
    its classification scores, or its probability scores (None without probabilities)."""
    if section == "classification":
        return comparison.scores
    if section == "probability":
        return comparison.probability
    return comparison


def statistic_values(comparison: LabelComparison) -> list[tuple[Statistic, float]]:
    """Each statistic with its value, in order; those of a section without a record (no
    probabilities given) left out."""
    return [(s, s.value(comparison)) for s in STATISTICS
            if section_record(comparison, s.section) is not None]


def section_dict(comparison: LabelComparison, section: str) -> dict[str, Any] | None:
    """A section as the record shows it: the counts its record holds beside the statistics
    (e.g. tp, fp, fn, tn), then the statistics in list order; None without a record."""
    record = section_record(comparison, section)
    if record is None:
        return None
    listed = [s for s in STATISTICS if s.section == section]
    out: dict[str, Any] = {}
    if record is not comparison:
        taken = {s.field for s in listed}
        out = {f.name: getattr(record, f.name) for f in fields(record) if f.name not in taken}
    return out | {s.key: getattr(record, s.field) for s in listed}


def label(statistic: Statistic, comparison: LabelComparison) -> str:
    """The statistic's HTML row name for this comparison."""
    n = comparison.probability.n if comparison.probability is not None else 0
    return statistic.label.format(threshold=comparison.threshold, n=n)


def term(statistic: Statistic, comparison: LabelComparison) -> str:
    """The statistic's words in the terminal summary for this comparison."""
    return statistic.term.format(threshold=comparison.threshold)
