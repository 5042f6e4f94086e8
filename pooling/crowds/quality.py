"""Each worker's quality in a crowd round, read from the store: their current answers against
the round's gold version (`pooling.agreement.worker_quality` computes the figures), and the
organiser's decisions taken on them (`pooling.crowds.decisions` records them).

A worker's current answer to a pair is the replay of their history (`history.replay`): a
grade or another answer ("unjudgeable": any kind but judge and retract) is pushed, a retract
takes back the latest. A subtopic round's pair counts once, by its highest grade.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.agreement.worker_quality import (
    FIELDS,
    MEASURES,
    MIN_GOLD,
    WorkerQuality,
    below_bar,
    worker_quality,
)
from pooling.crowds.decisions import Decision, current_decisions, record_decisions
from pooling.errors import StoreError
from pooling.formats.csv_cells import safe_cell
from pooling.judging.history import NOT_COUNTED_TOWARD_K, replay
from pooling.judging.rounds import get_round
from pooling.store.core import Store

ANSWERS_SCHEMA = pa.schema([("assessor_id", pa.string()), ("query_id", pa.string()),
                            ("doc_id", pa.string()), ("kind", pa.string()),
                            ("grade", pa.int64()), ("seconds", pa.float64())])
# Each worker's judgments in the round: assessors' (organisers' adjudications and automatic
# judges' grades are left out, as the aggregation rules leave them out).
_WORKERS_JUDGMENTS = f"""
    SELECT assessor_id, query_id, doc_id, part, kind, grade, seconds, seq
    FROM judgments
    WHERE round_id = ?
      AND assessor_id NOT IN ({NOT_COUNTED_TOWARD_K})"""
# `ident` hashes what a replay groups by: a pair with one event needs no replay, and a
# collision only sends two pairs through the replay, which groups by the values themselves.
_TEXT = f"""
    SELECT *, hash(assessor_id, query_id, doc_id, part) AS ident
    FROM ({_WORKERS_JUDGMENTS})"""
# --sort: a key -> the figure it orders by.
SORT_KEYS = {"worker": "assessor_id", "answers": "answers", "unjudgeable": "unjudgeable",
             "gold": "gold_answered", "accuracy": "accuracy", "binary": "binary",
             "kappa": "kappa", "agreement": "agreement", "seconds": "median_seconds"}


@dataclass(frozen=True)
class QualityReport:
    """A round's workers and their figures against a gold version, with each one's decision."""

    round_id: str
    gold: str
    min_gold: int
    threshold: int
    workers: list[WorkerQuality]
    decisions: dict[str, str]  # assessor_id -> flag | withdraw | clear (latest)

    def decision_of(self, assessor_id: str) -> str:
        """The worker's standing decision ("" when none, or cleared)."""
        d = self.decisions.get(assessor_id, "")
        return "" if d == "clear" else d

    def sorted(self, key: str = "worker", *, descending: bool = False) -> list[WorkerQuality]:
        """The workers ordered by one of `SORT_KEYS` (ties by worker); a worker without the
        figure (too few gold answers) comes last either way."""
        if key not in SORT_KEYS:
            raise StoreError(f"cannot sort by {key!r}; use one of {', '.join(SORT_KEYS)}")
        field = SORT_KEYS[key]
        by_name = sorted(self.workers, key=lambda q: q.assessor_id)
        known = [q for q in by_name if getattr(q, field) is not None]
        unknown = [q for q in by_name if getattr(q, field) is None]
        return sorted(known, key=lambda q: getattr(q, field), reverse=descending) + unknown

    def rows(self, key: str = "worker", *, descending: bool = False) -> list[dict]:
        """One dict per worker: every figure, and their standing decision."""
        return [{**asdict(q), "decision": self.decision_of(q.assessor_id)}
                for q in self.sorted(key, descending=descending)]

    def to_csv(self, key: str = "worker", *, descending: bool = False) -> str:
        """One row per worker; a figure not shown yet is an empty cell."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([*FIELDS, "decision"])
        for row in self.rows(key, descending=descending):
            writer.writerow([safe_cell(v) if isinstance(v, str) else "" if v is None else v
                             for v in row.values()])
        return buf.getvalue()

    def to_json(self, key: str = "worker", *, descending: bool = False) -> str:
        """The report as JSON: round, gold, min_gold, threshold, and the workers' rows."""
        return json.dumps({"round_id": self.round_id, "gold": self.gold,
                           "min_gold": self.min_gold, "threshold": self.threshold,
                           "workers": self.rows(key, descending=descending)}, indent=2) + "\n"


def round_answers(store: Store, round_id: str) -> pa.Table:
    """Each worker's (assessor's) current answer per pair in a round: assessor_id, query_id,
    doc_id, kind ("judge" or the kind of a non-grade answer), grade (NULL unless judge),
    seconds."""
    every = store.arrow("round judgments", _TEXT, [round_id])
    table = _current(every, ["assessor_id", "query_id", "doc_id"])
    return table.select(ANSWERS_SCHEMA.names).cast(ANSWERS_SCHEMA)


def _current(every: pa.Table, pair_of: list[str]) -> pa.Table:
    """The current answer of each (worker, pair) from a round's judgments (columns `pair_of`,
    part, kind, grade, seconds, seq, ident): replayed (module), a pair judged on parts once
    by its highest grade."""
    once = _judged_once(every)
    # A pair judged once needs no replay, so the common case stays in Arrow.
    grade_or_answer = pc.not_equal(every["kind"], "retract").to_numpy(zero_copy_only=False)
    singles = every.filter(pa.array(once & grade_or_answer)).drop_columns(["seq", "ident"])
    ident = [*pair_of, "part"]
    events: dict[tuple, list[tuple[str, tuple]]] = {}
    for r in every.filter(pa.array(~once)).sort_by("seq").to_pylist():
        events.setdefault(tuple(r[c] for c in ident), []).append(
            ("retract" if r["kind"] == "retract" else "judge",
             (r["kind"], r["grade"], r["seconds"])))
    replayed = [(*key, *left) for key, pair_events in events.items()
                if (left := replay(pair_events)) is not None]
    names = [*ident, "kind", "grade", "seconds"]
    more = pa.table({n: [r[i] for r in replayed] for i, n in enumerate(names)},
                    schema=singles.select(names).schema)
    table = pa.concat_tables([singles.select(names), more])
    if pc.any(pc.is_valid(table["part"])).as_py():
        table = _one_per_pair(table, pair_of)
    return table


def _judged_once(table: pa.Table) -> np.ndarray:
    """Which rows are the only event of their worker, pair and part, told by the hash of
    the three (`ident`)."""
    ident = table["ident"].to_numpy()
    _, inverse, counts = np.unique(ident, return_inverse=True, return_counts=True)
    return counts[inverse] == 1


def _one_per_pair(table: pa.Table, pair_of: list[str]) -> pa.Table:
    """A round's answers on parts, one per worker and pair: its highest grade (a grade before
    any other answer), the seconds spent on all its parts."""
    grouped = table.group_by(pair_of, use_threads=False).aggregate(
        [("kind", "min"), ("grade", "max"), ("seconds", "sum")])  # "judge" sorts first
    return pa.table({**{c: grouped[c] for c in pair_of}, "kind": grouped["kind_min"],
                     "grade": grouped["grade_max"], "seconds": grouped["seconds_sum"]})


def gold_version(store: Store, round_id: str, gold: str | None = None) -> str:
    """The gold version to measure a round's workers by: `gold`, else the round's own."""
    chosen = gold or get_round(store, round_id).params.get("gold")
    if not chosen:
        raise StoreError(f"round {round_id!r} names no gold version; give one with --gold "
                         "VERSION (a qrels version whose pairs are known answers)")
    if chosen not in store.qrels_versions():
        raise StoreError(f"no qrels version {chosen!r} in the store to use as gold; import it "
                         "with `pooling import qrels FILE --name NAME`")
    return chosen


def quality_mark(store: Store, round_id: str, gold: str) -> tuple:
    """What a round's quality report is made of, in a few numbers: its judgments and worker
    decisions (append-only: any new one raises the count and the last seq), the people, and
    the gold version. Equal marks, equal reports; it costs a few milliseconds."""
    return store.one("quality mark", """
        SELECT (SELECT count(*) FROM judgments WHERE round_id = ?),
               (SELECT max(seq) FROM judgments WHERE round_id = ?),
               (SELECT count(*) FROM worker_decisions WHERE round_id = ?),
               (SELECT max(seq) FROM worker_decisions WHERE round_id = ?),
               (SELECT count(*) FROM assessors),
               (SELECT max(created_at) FROM qrels_versions WHERE name = ?)""",
        [round_id, round_id, round_id, round_id, gold]) or ()


def round_quality(store: Store, round_id: str, *, gold: str | None = None,
                  min_gold: int = MIN_GOLD, threshold: int = 1) -> QualityReport:
    """Every worker's figures in a round against its gold version (see `worker_quality`)."""
    rnd = get_round(store, round_id)
    version = gold_version(store, round_id, gold)
    truth = store.arrow("gold grades", "SELECT query_id, doc_id, relevance FROM qrels "
                        "WHERE version = ?", [version])
    workers = worker_quality(round_answers(store, round_id), truth, threshold=threshold,
                             min_gold=min_gold, grades=rnd.grades)
    return QualityReport(round_id, version, min_gold, threshold, workers,
                         current_decisions(store, round_id))


def flag_below(store: Store, round_id: str, bar: float, *, measure: str = "accuracy",
               withdraw: bool = False, reason: str | None = None, gold: str | None = None,
               min_gold: int = MIN_GOLD, decided_by: str | None = None
               ) -> list[WorkerQuality]:
    """Flag (or withdraw) every worker whose `measure` is confidently below `bar` (the upper
    bound of its 95% interval is below it), recording each one's figure; those workers.
    Workers already under the same decision are left as they are."""
    if measure not in MEASURES:
        raise StoreError(f"unknown measure {measure!r}; use one of {', '.join(MEASURES)}")
    report = round_quality(store, round_id, gold=gold, min_gold=min_gold)
    decision = "withdraw" if withdraw else "flag"
    chosen = [q for q in below_bar(report.workers, measure, bar)
              if report.decisions.get(q.assessor_id) != decision]
    if chosen:
        record_decisions(
            store, round_id, [q.assessor_id for q in chosen],
            Decision(decision, reason or f"{measure} below {bar:g} on gold {report.gold}",
                     measure=measure, bar=bar, decided_by=decided_by),
            values={q.assessor_id: q.figure(measure)[0] for q in chosen})
    return chosen


def decide(store: Store, round_id: str, workers: Sequence[str], decision: str, *,
           reason: str, decided_by: str | None = None) -> int:
    """Record one decision (flag, withdraw, clear) about named workers of a round."""
    get_round(store, round_id)
    return record_decisions(store, round_id, workers,
                            Decision(decision, reason, decided_by=decided_by))
