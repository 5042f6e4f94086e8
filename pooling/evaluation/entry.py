"""`evaluate`, the one entry point: it picks the evaluator for the relevance format (-R:
qrels, judgment groups, preferences) and where it runs (here, or a Ray cluster)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Unpack

from pooling.errors import EvaluationError
from pooling.evaluation.engine import evaluate_qrels
from pooling.evaluation.inputs import (
    QrelsInput,
    RunInput,
    check_rel_format,
    measure_list,
    relevance_format,
)
from pooling.evaluation.options import EvalInputs, EvalOptions
from pooling.evaluation.results import Evaluation
from pooling.measures import Measure


def evaluate(
    qrels: QrelsInput,
    run_or_runs: RunInput | Sequence[RunInput],
    measures: str | Iterable[str | Measure] = ("official",),
    options: EvalOptions | None = None,
    *,
    engine: str = "local",
    ray_address: str | None = None,
    rel_format: str = "qrels",
    **inputs: Unpack[EvalInputs],
) -> Evaluation:
    """Evaluate runs against qrels with trec_eval 10.0's semantics.

    The evaluation inputs are an `EvalOptions`, or its fields as keywords (which override
    the given options): missing_topics "error" (default, trec_eval 10), "zero" (trec_eval -c)
    or "skip" (only topics the run shares with the qrels); relevance_level is trec_eval's -l,
    max_docs its -M; topics restricts evaluation to those qrels topics; judged_only is -J
    (only judged docs are ranked), collection_size -N (the documents in the collection:
    utility's D, fallout), zscores -Z (values as z-scores, see `pooling.evaluation.zscores`).
    engine "ray" spreads the runs over a Ray cluster (`pooling.runner`), with the same
    results. rel_format is -R: "qrels", "qrels_jg" (judgment groups), "prefs" or
    "qrels_prefs" (preferences) or "subtopics" (ndeval's subtopic qrels, read so whenever a
    diversity measure is asked for); `qrels` is then that kind of file or table.
    """
    options = replace(options or EvalOptions(), **inputs)
    wanted = measure_list(measures)
    rel_format = relevance_format(wanted, rel_format)
    if engine != "local" and (options.local_only or rel_format != "qrels"):
        raise EvaluationError("-J, -N, -Z and -R run with the local engine only; drop --engine")
    if engine != "local":
        from pooling.evaluation.distributed import evaluate_on_ray
        from pooling.runner import check_engine

        check_engine(engine)
        return evaluate_on_ray(qrels, run_or_runs, measures,
                               missing_topics=options.missing_topics,
                               relevance_level=options.relevance_level,
                               max_docs=options.max_docs, topics=options.topics,
                               ray_address=ray_address)
    options.check()
    check_rel_format(wanted, rel_format)
    if rel_format == "subtopics":
        from pooling.evaluation.subtopics import evaluate_subtopics

        return evaluate_subtopics(qrels, run_or_runs, wanted, options)
    if rel_format in ("prefs", "qrels_prefs"):
        from pooling.evaluation.preferences import evaluate_prefs

        return evaluate_prefs(qrels, run_or_runs, wanted, options, rel_format=rel_format)
    if rel_format == "qrels_jg":
        from pooling.evaluation.judgment_groups import evaluate_judgment_groups

        return evaluate_judgment_groups(qrels, run_or_runs, wanted, options)
    return evaluate_qrels(qrels, run_or_runs, wanted, options)
