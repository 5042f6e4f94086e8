"""Evaluation: trec_eval 10.0-exact measures over Arrow/NumPy.

`evaluate(qrels, runs, measures, missing_topics=..., relevance_level=..., max_docs=...,
topics=...)` is the entry point (the inputs after the measures are `EvalOptions`' fields);
`format_trec` renders a run's result as trec_eval does, `format_trec_runs` several runs'
results with a runid line opening each block.
`evaluate_sampled` scores runs against sampled qrels as sample_eval.pl does, and
`sampled_estimates` gives each run's estimates with their variance and interval.
`evaluate_diversity` gives the per-topic values of ndeval's diversity measures from subtopic
qrels as a table, and `format_ndeval` renders results in ndeval's CSV layout.
"""

from pooling.evaluation.entry import evaluate
from pooling.evaluation.inputs import RunStream
from pooling.evaluation.ndeval_format import format_ndeval
from pooling.evaluation.options import EvalOptions
from pooling.evaluation.results import Column, Evaluation, RunEvaluation
from pooling.evaluation.sampled import evaluate_sampled, sample_eval_text
from pooling.evaluation.sampled_intervals import sampled_estimates
from pooling.evaluation.subtopics import evaluate_diversity
from pooling.evaluation.trec_format import format_trec, format_trec_runs

__all__ = [
    "Column", "EvalOptions", "Evaluation", "RunEvaluation", "RunStream", "evaluate",
    "evaluate_diversity", "evaluate_sampled", "format_ndeval", "format_trec", "format_trec_runs",
    "sample_eval_text", "sampled_estimates",
]
