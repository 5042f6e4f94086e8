"""Evaluation: trec_eval 10.0-exact measures over Arrow/NumPy.

`evaluate(qrels, runs, measures, missing_topics=..., relevance_level=..., max_docs=...,
topics=...)` is the entry point; `evaluate_diversity` gives the per-topic values of the
diversity measures, from subtopic qrels, as a table. `format_trec` renders a run's result
as trec_eval does, `format_trec_runs` several runs' results with a runid line opening each
block, `format_ndeval` them in ndeval's CSV layout.
"""

from pooling.evaluation.entry import evaluate
from pooling.evaluation.inputs import RunStream
from pooling.evaluation.ndeval_format import format_ndeval
from pooling.evaluation.results import Column, Evaluation, RunEvaluation
from pooling.evaluation.subtopics import evaluate_diversity
from pooling.evaluation.trec_format import format_trec, format_trec_runs

__all__ = [
    "Column", "Evaluation", "RunEvaluation", "RunStream", "evaluate", "evaluate_diversity",
    "format_ndeval", "format_trec", "format_trec_runs",
]
