"""Evaluation measures: a registry of trec_eval 10.0 measures plus a few extras.

`parse_measures(["ndcg_cut.5,10", "P(rel=2)@5", "all_trec"])` turns names into `Measure`
values; `REGISTRY` holds every `MeasureSpec` in trec_eval's output order.
"""

from pooling.measures.names import UnknownMeasureError, parse_measures
from pooling.measures.registry import NICKNAMES, REGISTRY
from pooling.measures.spec import Kind, Measure, MeasureSpec, Params

__all__ = [
    "NICKNAMES",
    "REGISTRY",
    "Kind",
    "Measure",
    "MeasureSpec",
    "Params",
    "UnknownMeasureError",
    "parse_measures",
]
