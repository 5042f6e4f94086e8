"""Scoring generated answers by nugget recall, from nuggetizer's assignment files or tables.

`evaluate_nuggets` reads assignment files (`pooling.formats.nugget_files`), groups their
answers by run, and scores them with `pooling.measures.nuggets`; the result prints in
trec_eval's layout (a block per run, `-q` a line per answered topic) and in every format
`pooling eval` writes. `score_assigned` is the same over canonical tables, the store's path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import EvaluationError, FormatError
from pooling.evaluation.results import Column, Evaluation, RunEvaluation
from pooling.formats.nugget_files import AssignmentFile, read_assignments, support_grades
from pooling.measures import Kind, Measure
from pooling.measures.nuggets import (
    DESCRIPTIONS,
    GROUP,
    NUGGET_MEASURES,
    canonical_nugget_measure,
    nugget_scores,
)
from pooling.measures.spec import MeasureSpec

_SPECS = {m: MeasureSpec(m, "nuggets", DESCRIPTIONS[m], lambda *_: None, rel_info="nuggets",
                         trec=False) for m in NUGGET_MEASURES}


def nugget_measure_list(names: Iterable[str]) -> list[str]:
    """The canonical nugget measures `names` ask for, in print order (`nuggets`: all four);
    `EvaluationError` naming what is not one."""
    wanted: set[str] = set()
    for name in names:
        for part in str(name).split(","):
            part = part.strip()
            if part == GROUP:
                wanted.update(NUGGET_MEASURES)
            elif (canonical := canonical_nugget_measure(part)) is not None:
                wanted.add(canonical)
            else:
                raise EvaluationError(f"{part!r} is not a nugget measure; use {GROUP} or one of "
                                      f"{', '.join(NUGGET_MEASURES)} (nuggetizer's *_score names too)")
    return [m for m in NUGGET_MEASURES if m in wanted]


def score_assigned(answers: pa.Table, nuggets: pa.Table, measures: Sequence[str] = NUGGET_MEASURES,
                   *, complete: bool = False) -> Evaluation:
    """Score answers (run_id, query_id) from their assigned nuggets, a block per run in
    first-seen order. A nugget row names its answer by `answer` (the answer's row) or by
    run_id and query_id; it is vital by `vital` (bool) or `importance` ("vital"), and
    supported by `grade` (2, 1, 0) or `assignment` (nuggetizer's labels).

    A run's mean is over the topics it answered; `complete` counts every topic any answer
    names as 0 for a run that did not answer it (trec_eval's -c)."""
    wanted = nugget_measure_list(measures) if measures else list(NUGGET_MEASURES)
    scores = nugget_scores(_answer_rows(answers, nuggets), _vital(nuggets), _grades(nuggets),
                           answers.num_rows)
    runs_encoded = pc.dictionary_encode(answers.column("run_id")).combine_chunks()
    run_of = runs_encoded.indices.to_numpy(zero_copy_only=False)
    run_names = runs_encoded.dictionary.to_pylist()
    topics = sorted(set(pc.unique(answers.column("query_id")).to_pylist()))
    topic_of = pc.index_in(answers.column("query_id"), value_set=pa.array(topics, pa.string()))
    topic_of = topic_of.to_numpy(zero_copy_only=False)
    order = np.lexsort((topic_of, run_of))
    bounds = np.searchsorted(run_of[order], np.arange(len(run_names) + 1))
    columns = [Column(m, Kind.FLOAT, Measure(_SPECS[m], None, ())) for m in wanted]
    values = {m: scores.get(m) for m in wanted}
    runs = []
    for r, run_id in enumerate(run_names):
        rows = order[bounds[r]:bounds[r + 1]]
        answered = topic_of[rows]
        if complete:
            per_topic = {m: np.zeros(len(topics)) for m in wanted}
            for m in wanted:
                per_topic[m][answered] = values[m][rows]
            shown = topics
            missing = [topics[t] for t in np.setdiff1d(np.arange(len(topics)), answered)]
        else:
            per_topic = {m: values[m][rows] for m in wanted}
            shown = [topics[t] for t in answered]
            missing = []
        summary = {m: float(np.sum(per_topic[m])) / len(shown) for m in wanted}
        runs.append(RunEvaluation(run_id, shown, columns, per_topic, summary, missing))
    return Evaluation(runs, [c.measure for c in columns], "zero" if complete else "skip", 1,
                      None, columns=columns)


def _answer_rows(answers: pa.Table, nuggets: pa.Table) -> np.ndarray:
    if "answer" in nuggets.column_names:
        return nuggets.column("answer").to_numpy(zero_copy_only=False)
    found = pc.index_in(_keys(nuggets), value_set=_keys(answers))
    if found.null_count:
        raise EvaluationError("assigned nuggets name an answer the answers do not hold")
    return found.to_numpy(zero_copy_only=False)


def _vital(nuggets: pa.Table) -> np.ndarray:
    if "vital" in nuggets.column_names:
        return nuggets.column("vital").to_numpy(zero_copy_only=False)
    return pc.equal(nuggets.column("importance"), "vital").to_numpy(zero_copy_only=False)


def _grades(nuggets: pa.Table) -> np.ndarray:
    if "grade" in nuggets.column_names:
        return nuggets.column("grade").to_numpy(zero_copy_only=False)
    return support_grades(nuggets.column("assignment"))


def _keys(table: pa.Table) -> pa.ChunkedArray:
    """(run_id, query_id) as one string per row, for a vectorised lookup."""
    return pc.binary_join_element_wise(table.column("run_id"), table.column("query_id"), "\x00")


def evaluate_nuggets(files: Sequence[str | Path], measures: Sequence[str] = (GROUP,), *,
                     complete: bool = False) -> Evaluation:
    """Score nuggetizer assignment files (each a run, or runs named by `run_id`), one block
    per run; a run given in two files is refused."""
    read = read_all_assignments(files)
    answers, nuggets = [], []
    offset = 0
    for one in read:
        answers.append(one.answers)
        nuggets.append(one.nuggets.set_column(
            0, "answer", pc.add(one.nuggets.column("answer"), offset)))
        offset += one.answers.num_rows
    all_answers = pa.concat_tables(answers)
    _refuse_repeats(all_answers)
    return score_assigned(all_answers, pa.concat_tables(nuggets), measures, complete=complete)


def read_all_assignments(files: Sequence[str | Path]) -> list[AssignmentFile]:
    """Every file read, side by side (Arrow's reader lets the others run meanwhile); the
    problems of every bad file are reported together."""
    def read(path: str | Path) -> AssignmentFile | FormatError:
        try:
            return read_assignments(path)
        except FormatError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=min(len(files), os.cpu_count() or 1) or 1) as pool:
        done = list(pool.map(read, files))
    failed = [d for d in done if isinstance(d, FormatError)]
    if len(failed) == 1:
        raise failed[0]
    if failed:
        raise FormatError([p for f in failed for p in f.problems])
    return [d for d in done if isinstance(d, AssignmentFile)]


def _refuse_repeats(answers: pa.Table) -> None:
    seen: set[tuple[str, str]] = set()
    for key in zip(answers.column("run_id").to_pylist(), answers.column("query_id").to_pylist(),
                   strict=True):
        if key in seen:
            raise EvaluationError(f"run {key[0]!r} answers topic {key[1]!r} in two of the files "
                                  "given; give each run's assignments once")
        seen.add(key)
