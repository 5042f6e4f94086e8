"""A replay's inputs read from files (runs, qrels, topics) and the depth pool of runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pooling.formats.run_files import RunReading
from pooling.strategies.replays.data import SimulationError


def parse_topics(text: str) -> list[str]:
    """`601-650,700` -> the query_ids 601..650 and 700 (ranges need numeric ids)."""
    out: list[str] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, dash, hi = part.partition("-")
        if dash and lo.isdigit() and hi.isdigit():
            if int(hi) < int(lo):
                raise SimulationError(f"topic range {part!r} runs backwards; write it low-high")
            out += [str(i) for i in range(int(lo), int(hi) + 1)]
        else:
            out.append(part)
    return out


@dataclass(frozen=True)
class ReplayInputs:
    """Qrels and runs read for a replay, each run's group (its --meta team, if any), and
    notes on what the reading options changed."""

    qrels: pa.Table
    runs: dict[str, pa.Table]
    groups: dict[str, str]
    notes: list[str]


def read_inputs(
    qrels_path: str, run_paths: Sequence[str], reading: RunReading | None = None
) -> ReplayInputs:
    """Read the qrels and the run files the way every command reads them (`read_runs`):
    runs named by tag, file or --meta, duplicates refused or dropped, topic ids mapped."""
    from pooling.formats.run_files import read_runs
    from pooling.formats.trec_qrels import read_trec_qrels

    reading = reading or RunReading()
    qrels = read_trec_qrels(qrels_path).select(["query_id", "doc_id", "relevance"])
    notes = []
    if reading.topic_map is not None:
        qrels, used = reading.topic_map.apply(qrels)
        if used:
            notes.append(f"{qrels_path}: topic map changed {len(used)} topic id(s)")
    read = read_runs(run_paths, reading)
    runs = {r.run_id: r.table.select(["query_id", "doc_id", "score"]) for r in read.runs}
    groups = {r.run_id: r.meta.team for r in read.runs if r.meta.team}
    return ReplayInputs(qrels, runs, groups, notes + read.notes(reading))


def load_inputs(
    qrels_path: str, run_paths: Sequence[str], reading: RunReading | None = None
) -> tuple[pa.Table, dict[str, pa.Table]]:
    """(qrels, runs by name) as `read_inputs` reads them."""
    inputs = read_inputs(qrels_path, run_paths, reading)
    return inputs.qrels, inputs.runs


def depth_pool(runs: Mapping[str, pa.Table], depth: int) -> pa.Table:
    """The depth-k pool, vectorised: unique (query_id, doc_id) in any run's top `depth`.

    Order within a run and topic is trec_eval's (score descending, then doc_id descending).
    Runs already grouped by topic in score order (the usual case) are not re-sorted; only
    ties straddling the cut-off are settled by doc_id. Sorted by query_id, doc_id.
    """
    parts = [_run_top(t, depth) for t in runs.values()]
    if not parts:
        return pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string())})
    pool = pa.concat_tables(parts).group_by(["query_id", "doc_id"]).aggregate([])
    return pool.sort_by([("query_id", "ascending"), ("doc_id", "ascending")])


def _run_top(table: pa.Table, depth: int) -> pa.Table:
    """One run's top `depth` rows per topic, as (query_id, doc_id)."""
    import pyarrow.compute as pc

    table = table.select(["query_id", "doc_id", "score"]).combine_chunks()
    qcode = pc.dictionary_encode(table["query_id"]).combine_chunks().indices.to_numpy()
    score = table["score"].to_numpy()
    n = len(qcode)
    if n == 0:
        return table.select(["query_id", "doc_id"])
    new_block = np.r_[True, qcode[1:] != qcode[:-1]]
    starts = np.flatnonzero(new_block)
    in_order = len(np.unique(qcode[starts])) == len(starts) and bool(
        np.all((np.diff(score) <= 0) | new_block[1:])
    )
    order = np.arange(n) if in_order else np.lexsort((-score, qcode))
    qs, ss = qcode[order], score[order]
    starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]])
    ends = np.r_[starts[1:], n]
    rank = np.arange(n) - np.repeat(starts, ends - starts)
    keep = rank < depth
    # Blocks whose cut-off falls inside a run of tied scores: choose the tied rows by doc_id desc.
    cut = starts + depth
    straddle = np.flatnonzero((cut < ends) & (ss[np.minimum(cut, n - 1)] == ss[np.minimum(cut - 1, n - 1)]))
    if len(straddle):
        docs = table["doc_id"]
        for b in straddle:
            lo, hi = starts[b], ends[b]
            tied_score = ss[cut[b] - 1]
            block = np.arange(lo, hi)
            tied = block[ss[lo:hi] == tied_score]
            slots = int(np.sum(keep[tied]))
            keep[tied] = False
            names = docs.take(pa.array(order[tied])).to_pylist()
            chosen = sorted(range(len(tied)), key=lambda i: names[i], reverse=True)[:slots]
            keep[tied[chosen]] = True
    return table.take(pa.array(order[keep])).select(["query_id", "doc_id"])
