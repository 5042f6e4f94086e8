"""Inter-assessor agreement: how far two or more assessors (or a judge and the primary) agree.

Every statistic takes judgments keyed by (query_id, doc_id) — an Arrow table, a DataFrame or
(query_id, doc_id, assessor, grade) tuples — and aligns assessors by key, never by position.
Families: `kappa` (Cohen, Fleiss, confusion matrix), `alpha` (Krippendorff), `overlap`
(Voorhees), `classifier` (judge vs primary), `partition` (purity, NMI, AMI), `rankings`
(Kendall tau, tau_ap, Spearman over system scores) and `report` (a round's summary).
Two label sets (A the reference, B the other): `labels.compare_labels` pair by pair,
`systems.system_agreement` over the runs they score; `pooling.label_sets.agreement` does both
on a store (`qrels_agreement`, `judge_agreement`). Nothing here reads a store.
"""

from pooling.agreement.alpha import krippendorff_alpha
from pooling.agreement.classifier import (
    ClassificationScores,
    ProbabilityScores,
    classification_scores,
    probability_scores,
)
from pooling.agreement.errors import AgreementError
from pooling.agreement.judgments import JUDGMENTS_SCHEMA, Alignment, align, as_judgments
from pooling.agreement.kappa import ConfusionMatrix, cohen_kappa, confusion_matrix, fleiss_kappa
from pooling.agreement.labels import LabelComparison, compare_labels
from pooling.agreement.overlap import raw_overlap
from pooling.agreement.partition import PartitionAgreement, partition_agreement
from pooling.agreement.rankings import kendall_tau, spearman_rho, tau_ap
from pooling.agreement.report import AgreementReport, PairAgreement, agreement_report
from pooling.agreement.systems import RankChange, SystemAgreement, system_agreement

__all__ = [
    "JUDGMENTS_SCHEMA",
    "AgreementError",
    "AgreementReport",
    "Alignment",
    "ClassificationScores",
    "ConfusionMatrix",
    "LabelComparison",
    "PairAgreement",
    "PartitionAgreement",
    "ProbabilityScores",
    "RankChange",
    "SystemAgreement",
    "agreement_report",
    "align",
    "as_judgments",
    "classification_scores",
    "cohen_kappa",
    "compare_labels",
    "confusion_matrix",
    "fleiss_kappa",
    "kendall_tau",
    "krippendorff_alpha",
    "partition_agreement",
    "probability_scores",
    "raw_overlap",
    "spearman_rho",
    "system_agreement",
    "tau_ap",
]
