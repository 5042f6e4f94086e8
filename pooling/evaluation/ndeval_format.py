"""Rendering results in ndeval's own CSV layout, so its users can diff the two programs.

ndeval prints `runid,topic,` and its measures as a header, one row per topic with each value
as `%.6f`, then an `amean` row of the means. docs/diversity.md#which-topics-count says where this differs.
"""

# `%.6f` is ndeval's own conversion, and Python's `%` rounds as glibc's printf does.
# ruff: noqa: UP031

from __future__ import annotations

import math
from collections.abc import Sequence

from pooling.evaluation.results import RunEvaluation
from pooling.measures import Kind


def format_ndeval(runs: Sequence[RunEvaluation], *, summary: bool = True) -> str:
    """One block per run, each with ndeval's header, as running ndeval once per run prints
    them. Topics run in numeric order when every topic id is a number (ndeval's topics
    are), else in the evaluation's order; topics a run lacks (-c) have no row but count in
    `amean`, as in ndeval -c. summary=False leaves out the `amean` rows."""
    return "".join(_block(run, summary) for run in runs)


def _block(run: RunEvaluation, summary: bool) -> str:
    columns = [c.name for c in run.columns if c.kind in (Kind.FLOAT, Kind.COUNT)]
    lines = [",".join(["runid", "topic", *columns])]
    missing = set(run.missing_query_ids)
    numeric = all(q.isascii() and q.isdigit() for q in run.query_ids)
    order = sorted(range(len(run.query_ids)),
                   key=(lambda t: int(run.query_ids[t])) if numeric else (lambda t: t))
    for t in order:
        qid = run.query_ids[t]
        if qid not in missing:
            lines.append(",".join([run.run_id, qid,
                                   *(_value(run.per_query[c][t]) for c in columns)]))
    if summary:
        lines.append(",".join([run.run_id, "amean", *(_value(run.summary[c]) for c in columns)]))
    return "\n".join(lines) + "\n"


def _value(value: float) -> str:
    """`%.6f`; NaN (nNRBP of a topic without relevant documents) as glibc prints 0.0/0.0."""
    value = float(value)
    return "-nan" if math.isnan(value) else "%.6f" % value
