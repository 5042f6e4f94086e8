"""Rendering results as trec_eval prints them, byte for byte (docs/trec_eval-semantics.md#output)."""

# printf-style formatting is deliberate here: `%6.4f` and `%-22s` are trec_eval's own
# conversions, and Python's `%` rounds exactly as glibc's printf does.
# ruff: noqa: UP031

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pooling.evaluation.results import RunEvaluation
from pooling.measures import Kind

_LINE = "%-22s\t%s\t%s\n"
_Z_LINE = "Z%-22s\t%s\t%s\n"  # -Z: every value a z-score, its name behind a Z


def format_value(value: Any, kind: Kind) -> str:
    """trec_eval's conversion: %ld for counts, %6.4f for doubles (NaN prints as glibc -nan)."""
    if kind in (Kind.COUNT, Kind.NUM_Q):
        return "%d" % value
    if kind is Kind.TEXT:
        return f"'{value}'"
    if kind is Kind.RUNID:
        return str(value)
    if math.isnan(value):
        return "%6s" % "-nan"
    return "%6.4f" % value


def format_trec_runs(
    runs: Sequence[RunEvaluation], per_query: bool = False, *, summary: bool = True
) -> str:
    """One block per run. A single run prints exactly as trec_eval; with several, each block
    opens with its `runid  all  NAME` line (its own runid line is not repeated), so a reader
    of trec_eval's three columns tells the blocks apart by the runid lines. summary=False is
    trec_eval's -n (no `all` lines; the opening runid lines of several runs stay)."""
    if len(runs) == 1:
        return format_trec(runs[0], per_query, summary=summary)
    return "".join(
        _LINE % ("runid", "all", run.run_id)
        + format_trec(run, per_query, runid=False, summary=summary)
        for run in runs
    )


def format_trec(
    run: RunEvaluation, per_query: bool = False, *, runid: bool = True, summary: bool = True
) -> str:
    """The text trec_eval prints for one run (`-q` adds one block per topic first);
    runid=False leaves out the `runid` line, summary=False every `all` line (-n).

    Z-scores (-Z) print as trec_eval prints them: `Z` before the name, %6.4f for every value
    (counts and num_q included); runid and relstring are not converted."""
    parts: list[str] = []
    if per_query:
        printable = [c for c in run.columns if c.kind in (Kind.FLOAT, Kind.COUNT, Kind.TEXT)]
        for t, qid in enumerate(run.query_ids):
            for col in printable:
                value = run.per_query[col.name][t]
                parts.append(_line(run, col.name, qid, value, col.kind))
    if not summary:
        return "".join(parts)
    for col in run.columns:
        if col.kind is not Kind.TEXT and (runid or col.kind is not Kind.RUNID):
            parts.append(_line(run, col.name, "all", run.summary[col.name], col.kind))
    return "".join(parts)


def _line(run: RunEvaluation, name: str, qid: str, value: Any, kind: Kind) -> str:
    if run.zscores and kind not in (Kind.TEXT, Kind.RUNID):
        return _Z_LINE % (name, qid, format_value(float(value), Kind.FLOAT))
    return _LINE % (name, qid, format_value(value, kind))
