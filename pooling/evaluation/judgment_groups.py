"""trec_eval's -R qrels_jg: each topic judged by several judgment groups (users).

A qrels_jg file is a qrels file whose 2nd column names the judgment group:
`query_id jg doc_id relevance`. Each measure (map_avgjg, P_avgjg, Rprec_mult_avgjg) is
computed against each group's judgments of the topic as its plain form (map, P, Rprec_mult)
would be, then averaged over the topic's groups: summed in the groups' strcmp order and
divided by their number (form_res_rels_jg.c, m_*_avgjg.c). Comment lines are skipped as in
qrels files; a doc judged twice in one group of a topic is an error (exit 2, as trec_eval's
get_qrels_jg refuses the file).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Unpack

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import Problem
from pooling.evaluation.engine import assemble_run, evaluate_qrels
from pooling.evaluation.inputs import (
    QrelsInput,
    RunInput,
    as_table,
    run_at,
    run_list,
    with_columns,
)
from pooling.evaluation.options import EvalInputs, EvalOptions
from pooling.evaluation.results import Evaluation, NoTopicsError
from pooling.evaluation.topics import candidate_topics, plan_topics
from pooling.evaluation.trec_input import (
    TrecInputError,
    bom_lines,
    bom_warning,
    parse_qrels,
    read_run,
)
from pooling.formats.source import display_name, read_bytes
from pooling.measures import Kind, Measure

JG_COLUMNS = ["query_id", "jg", "doc_id", "relevance"]


def read_qrels_jg(path: str | os.PathLike[str], warnings: list[str] | None = None) -> pa.Table:
    """A qrels_jg file as a table: query_id, jg, doc_id, relevance (trec_eval's reading).

    Lines starting with a byte-order mark add to `warnings`.
    """
    name = display_name(path)
    data = read_bytes(path)
    boms = bom_lines(data)
    if boms and warnings is not None:
        warnings.append(bom_warning(name, boms))
    table = parse_qrels(data, name, keep_iter=True).rename_columns(JG_COLUMNS)
    _refuse_duplicates(table, name)
    return table


def _refuse_duplicates(table: pa.Table, name: str) -> None:
    counts = table.group_by(["query_id", "jg", "doc_id"]).aggregate([([], "count_all")])
    twice = counts.filter(pc.greater(counts["count_all"], 1))
    if twice.num_rows:
        raise TrecInputError(
            [Problem(name, None, f"document {r['doc_id']} judged {r['count_all']} times by "
                     f"judgment group {r['jg']} of topic {r['query_id']}")
             for r in twice.slice(0, 20).to_pylist()],
            hint="Keep one judgment per (topic, judgment group, document).")


def evaluate_judgment_groups(
    qrels: QrelsInput,
    run_or_runs: RunInput | Sequence[RunInput],
    wanted: list[Measure],
    options: EvalOptions | None = None,
    **inputs: Unpack[EvalInputs],
) -> Evaluation:
    """Evaluate runs against qrels_jg judgments (a path, or a table with JG_COLUMNS).

    The options are `evaluate`'s; the collection size (-N) does not apply here."""
    options = replace(options or EvalOptions(), **inputs)
    warnings: list[str] = []
    if isinstance(qrels, (str, os.PathLike)):
        table = read_qrels_jg(qrels, warnings)
    else:
        table = with_columns(as_table(qrels), "qrels_jg", JG_COLUMNS, "")
        _refuse_duplicates(table, "qrels_jg table")
    qrels_topics = sorted(pc.unique(table["query_id"]).to_pylist())
    candidates = candidate_topics(qrels_topics, options.topics)
    groups = sorted(pc.unique(table["jg"]).to_pylist())  # strcmp order: trec_eval's sort
    by_group = {g: table.filter(pc.equal(table["jg"], g)) for g in groups}
    scored = [m for m in wanted if m.spec.kind not in (Kind.RUNID, Kind.NUM_Q)]
    results = []
    for position, run in enumerate(run_list(run_or_runs)):
        parsed = read_run(run) if isinstance(run, (str, os.PathLike)) else run_at(run, position)
        if parsed.bom_lines:
            warnings.append(bom_warning(parsed.source, parsed.bom_lines))
        covered = np.isin(qrels_topics, pc.unique(parsed.table["query_id"]).to_pylist())
        plan = plan_topics(candidates, covered, qrels_topics, options.missing_topics,
                           parsed.source)
        if len(plan.topics) == 0:
            raise NoTopicsError(f"run {parsed.source} shares no topic with the qrels; check "
                                "the query_ids")
        evaluated = [qrels_topics[i] for i in plan.topics]
        values = _averaged_over_groups(by_group, evaluated, parsed, scored, options)
        matrices = [(m, m.columns, values.get(id(m), np.empty((len(evaluated), 0))))
                    for m in wanted]
        results.append(assemble_run(parsed.run_id, evaluated, plan.missing, matrices,
                                    zscores=options.zscores))
    columns = results[0].columns if results else []
    return Evaluation(results, wanted, options.missing_topics, options.relevance_level,
                      options.max_docs, columns, warnings)


def _averaged_over_groups(
    by_group: dict[str, pa.Table],
    evaluated: list[str],
    run: Any,
    measures: list[Measure],
    options: EvalOptions,
) -> dict[int, np.ndarray]:
    """Each measure's T x columns values, averaged over each topic's judgment groups."""
    position = {q: t for t, q in enumerate(evaluated)}
    sums = {id(m): np.zeros((len(evaluated), len(m.columns))) for m in measures}
    count = np.zeros(len(evaluated), np.int64)
    wanted = pa.array(evaluated, pa.string())
    # Topics a run lacks were planned above: here they are scored on trec_eval's dummy.
    per_group = EvalOptions(missing_topics="zero", relevance_level=options.relevance_level,
                            max_docs=options.max_docs, judged_only=options.judged_only)
    for sub in by_group.values():
        sub = sub.filter(pc.is_in(sub["query_id"], value_set=wanted))
        if not sub.num_rows or not measures:
            continue
        result = evaluate_qrels(sub.select(["query_id", "doc_id", "relevance"]), [run],
                                measures, per_group).runs[0]
        rows = np.array([position[q] for q in result.query_ids], np.int64)
        count[rows] += 1
        for m in measures:
            block = np.column_stack([np.asarray(result.per_query[c], np.float64)
                                     for c in m.columns])
            sums[id(m)][rows] += block  # in the groups' order, one addition each, as in C
    divisor = np.where(count > 1, count, 1)[:, None]
    return {key: total / divisor for key, total in sums.items()}
