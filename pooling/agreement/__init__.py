"""Inter-assessor agreement: how far two or more assessors (or a judge and the primary) agree.

Every statistic takes judgments keyed by (query_id, doc_id) — an Arrow table, a DataFrame or
(query_id, doc_id, assessor, grade) tuples — and aligns assessors by key, never by position.
Families: `kappa` (Cohen, Fleiss, confusion matrix), `alpha` (Krippendorff), `overlap`
(Voorhees), `classifier` (judge vs primary), `partition` (purity, NMI, AMI), `rankings`
(Kendall tau, tau_ap, Spearman over system scores) and `report` (a round's summary).
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
from pooling.agreement.overlap import raw_overlap
from pooling.agreement.partition import PartitionAgreement, partition_agreement
from pooling.agreement.rankings import kendall_tau, spearman_rho, tau_ap
from pooling.agreement.report import AgreementReport, PairAgreement, agreement_report

__all__ = [
    "JUDGMENTS_SCHEMA",
    "AgreementError",
    "AgreementReport",
    "Alignment",
    "ClassificationScores",
    "ConfusionMatrix",
    "PairAgreement",
    "PartitionAgreement",
    "ProbabilityScores",
    "agreement_report",
    "align",
    "as_judgments",
    "classification_scores",
    "cohen_kappa",
    "confusion_matrix",
    "fleiss_kappa",
    "kendall_tau",
    "krippendorff_alpha",
    "partition_agreement",
    "probability_scores",
    "raw_overlap",
    "spearman_rho",
    "tau_ap",
]
