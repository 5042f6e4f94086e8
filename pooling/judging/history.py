"""Judgments as history: the record of one submission, and the replays that find each
assessor's current grades. Append-only: a correction is a new judgment, an undo a `retract`.

Read by rounds (what is next), rules (qrels) and the pages; it imports neither, so the
judging package has no import cycle.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import StoreError, SubmissionConflict
from pooling.judging.item_types import item_type
from pooling.store.core import Store

KINDS = ("judge", "retract", "unjudgeable")
# Kinds that answer a pair: a grade, or "broken link / can't judge" (no grade). A retract
# takes back the latest answer of either kind.
ANSWERS = ("judge", "unjudgeable")
UNJUDGEABLE = "unjudgeable"
T = TypeVar("T")


@dataclass(frozen=True)
class Judgment:
    """One submission: who judged which document of which round, and how."""

    round_id: str
    assessor_id: str
    query_id: str
    doc_id: str
    grade: int | None
    kind: str = "judge"
    seconds: float | None = None
    note: str | None = None
    submission_id: str | None = None
    probability: float | None = None  # an automatic judge's P(relevant) or confidence
    rationale: str | None = None  # an automatic judge's raw answer
    part: str | None = None  # the part of the unit graded (a subtopic; None: the unit whole)

    def content(self) -> dict[str, Any]:
        """What a retry must repeat to be one: round, topic, document, part, kind, grade and
        note."""
        return {"round_id": self.round_id, "query_id": self.query_id, "doc_id": self.doc_id,
                "kind": self.kind, "grade": self.grade if self.kind == "judge" else None,
                "note": self.note, "part": self.part}

    def same_as(self, stored: dict[str, Any]) -> bool:
        """Whether a stored row (by this assessor, with this submission id) says the same."""
        return all(stored.get(k) == v for k, v in self.content().items())


def conflict(j: Judgment, stored: dict[str, Any]) -> SubmissionConflict:
    """The error for a submission id already stored with other content (both grades named)."""
    return SubmissionConflict(
        f"submission {j.submission_id!r} of {j.assessor_id!r} was already stored with grade "
        f"{stored.get('grade')} for document {stored.get('doc_id')!r}; this one says grade "
        f"{j.grade} for {j.doc_id!r}. Nothing was changed: send the new judgment with a fresh "
        "submission id", stored_grade=stored.get("grade"), sent_grade=j.grade)


def stored_submissions(con: Any, keys: list[tuple[str, str]]) -> dict[tuple[str, str], dict]:
    """(assessor_id, submission_id) -> the stored row's `Judgment.content` fields, for the keys
    that are stored; con is a store's connection or a cursor of it."""
    if not keys:
        return {}
    found = con.execute(
        "SELECT assessor_id, submission_id, round_id, query_id, doc_id, kind, grade, note, "
        "part FROM judgments WHERE (assessor_id, submission_id) IN "
        "(SELECT UNNEST(?), UNNEST(?))",
        [[a for a, _ in keys], [s for _, s in keys]]).fetchall()
    names = ("round_id", "query_id", "doc_id", "kind", "grade", "note", "part")
    return {(row[0], row[1]): dict(zip(names, row[2:], strict=True)) for row in found}


def replay(events: Iterable[tuple[str, T]]) -> T | None:
    """What is left after replaying (kind, value) events in the order made: an answer (a
    judgment or an unjudgeable) pushes its value, a retract takes back the latest one; None
    when nothing is left."""
    stack: list[T] = []
    for kind, value in events:
        if kind != "retract":
            stack.append(value)
        elif stack:
            stack.pop()
    return stack[-1] if stack else None


def current_grade(events: Iterable[tuple[str, int | None]]) -> int | None:
    """The current grade of one document from its (kind, grade) events in order (`replay`);
    None also when its current answer is unjudgeable (`has_answer` tells the two apart)."""
    return replay(events)


def has_answer(events: Iterable[tuple[str, Any]]) -> bool:
    """Whether one document has a current answer (a grade or unjudgeable) after its
    (kind, ...) events in order."""
    return replay((kind, True) for kind, _ in events) is not None


def effective_judgments(
    store: Store,
    round_id: str | None = None,
    *,
    query_id: str | None = None,
    assessor_id: str | None = None,
    people_only: bool = True,
    per_part: bool = False,
    answers: bool = False,
    over_k: bool = False,
) -> pa.Table:
    """Each assessor's current grade per pair: round_id, assessor_id, query_id, doc_id, grade,
    seq (of the judgment that set it), judged_at. Optional filters narrow the replay.

    Judgments of a unit's parts (a document's subtopics) are replayed per part (an undo takes
    back the latest judgment of the same assessor, pair and part). per_part=True gives one
    row per part, with a `part` column after doc_id; otherwise a pair judged on parts counts
    once, with its grade over them (`Scale.over_parts`: the highest, relevant to any part;
    refused for a scale that is not ordinal) and the seq and time of its latest judgment, so
    queues, progress, plain qrels and agreement read a round judged on parts by that one
    rule.

    Automatic judges' judgments are left out unless people_only is False or the judge is
    named as assessor_id: rules, agreement, progress and adaptive pools count people, and a
    judge's grades join a qrels version only through a rule that names it.

    A pair whose current answer is unjudgeable has no grade: it is left out (so every rule,
    agreement and model leave it out of grades) unless answers=True, which keeps it with a
    NULL grade (queues and progress count it as answered; `unjudgeable_answers` counts them).

    Everyone's answers (no assessor_id) leave out the answers over a crowd pair's K
    (`over_k_answers`) unless over_k=True; one person's answers keep theirs.
    """
    filters = [("round_id", round_id), ("query_id", query_id), ("assessor_id", assessor_id)]
    used = [(column, value) for column, value in filters if value is not None]
    clauses = [f"{column} = ?" for column, _ in used]
    if people_only and assessor_id is None:
        clauses.append("assessor_id NOT IN (SELECT assessor_id FROM assessors WHERE kind = 'model')")
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    # `events`: how many judgments the row's (round, assessor, pair, part) has. A
    # grade or answer that is the only one needs no replay: those stay in Arrow, and
    # only corrections and undos go through `replay` (a crowd round is mostly the former).
    every = store.arrow(
        "judgments to replay",
        f"SELECT round_id, assessor_id, query_id, doc_id, part, kind, grade, seq, "
        f"judged_at, count(*) OVER (PARTITION BY round_id, assessor_id, query_id, doc_id, "
        f"part) AS events FROM judgments {where} ORDER BY seq",
        [value for _, value in used],
    )
    names = ["round_id", "assessor_id", "query_id", "doc_id"] + (
        ["part"] if per_part else [])
    schema = pa.schema([(n, pa.string()) for n in names]
                       + [("grade", pa.int64()), ("seq", pa.int64()),
                          ("judged_at", pa.timestamp("us"))])
    past_k = over_k_answers(store, round_id) if assessor_id is None and not over_k else set()
    if not per_part and every["part"].null_count == every.num_rows:  # the fast path
        return _without(_replayed_where_needed(every, schema, answers), past_k)
    if not per_part:
        _graded_over_parts(store, every)
    rows = every.drop_columns(["events"]).to_pylist()
    events: dict[tuple, list[tuple[str, tuple[int, int, Any]]]] = {}
    for row in rows:
        r, a, q, d, sub, kind, grade, seq, at = row.values()
        events.setdefault((r, a, q, d, sub), []).append((kind, (grade, seq, at)))
    current: dict[tuple, tuple[int, int, Any]] = {}
    for (r, a, q, d, sub), pair_events in events.items():
        left = replay(pair_events)
        if left is None or (left[0] is None and not answers) or (r, a, q, d) in past_k:
            continue
        if per_part:
            current[(r, a, q, d, sub)] = left
        elif (r, a, q, d) not in current:
            current[(r, a, q, d)] = left
        else:  # another part of the pair: the highest grade, the latest judgment
            before = current[(r, a, q, d)]
            latest = max(before, left, key=lambda v: v[1])
            graded = [g for g in (before[0], left[0]) if g is not None]
            current[(r, a, q, d)] = (max(graded) if graded else None, latest[1], latest[2])
    out: dict[str, list[Any]] = {k: [] for k in (*names, "grade", "seq", "judged_at")}
    for ident, left in current.items():
        for name, value in zip(out, (*ident, *left), strict=True):
            out[name].append(value)
    return pa.table(out, schema=schema)


def _graded_over_parts(store: Store, every: pa.Table) -> None:
    """Refuse to grade units over their parts in a round whose scale is no ladder (the one
    check, `Scale.needs_ladder`), for the rounds of `every` judged on parts."""
    with_parts = pc.unique(every.filter(pc.is_valid(every["part"]))["round_id"]).to_pylist()
    rows = store.sql("item types", "SELECT DISTINCT item_type FROM rounds WHERE round_id IN "
                     "(SELECT UNNEST(?))", [with_parts]).fetchall()
    for (name,) in rows:
        item_type(name).scale.needs_ladder("a unit's grade over its parts")


def _without(table: pa.Table, answers: set[tuple[str, str, str, str]]) -> pa.Table:
    """`table` without the rows whose (round_id, assessor_id, query_id, doc_id) is among
    `answers`, in the order it had."""
    if not answers:
        return table
    keys = ["round_id", "assessor_id", "query_id", "doc_id"]
    left_out = pa.table({k: [a[i] for a in answers] for i, k in enumerate(keys)},
                        schema=table.select(keys).schema)
    order = pa.array(range(table.num_rows), pa.int64())
    kept = table.append_column("_row", order).join(left_out, keys, join_type="left anti")
    return kept.take(pc.sort_indices(kept["_row"])).drop_columns(["_row"])


def _replayed_where_needed(every: pa.Table, schema: pa.Schema, answers: bool) -> pa.Table:
    """`effective_judgments` of judgments without parts (columns as read there, in seq
    order): a lone answer is current as it is, the rest are replayed; rows in the order of
    each pair's first judgment, as the replay of everything gives them."""
    lone = pc.equal(every["events"], 1)
    kept = pc.and_(lone, pc.not_equal(every["kind"], "retract"))
    if not answers:
        kept = pc.and_(kept, pc.is_valid(every["grade"]))
    names = [*schema.names[:4], "grade", "seq", "judged_at"]
    singles = every.filter(kept).select(names)
    first = singles["seq"]  # a lone judgment is its pair's first
    events: dict[tuple, list[tuple[str, tuple[int, int, Any]]]] = {}
    starts: dict[tuple, int] = {}
    rest = every.filter(pc.invert(lone))
    for r, a, q, d, kind, grade, seq, at in zip(*(rest[c].to_pylist() for c in (
            "round_id", "assessor_id", "query_id", "doc_id", "kind", "grade", "seq",
            "judged_at")), strict=True):
        starts.setdefault((r, a, q, d), seq)
        events.setdefault((r, a, q, d), []).append((kind, (grade, seq, at)))
    replayed = [(*key, *left, starts[key]) for key, pair_events in events.items()
                if (left := replay(pair_events)) is not None and (answers or left[0] is not None)]
    more = pa.table({n: [row[i] for row in replayed] for i, n in enumerate(names)},
                    schema=singles.schema)
    table = pa.concat_tables([singles, more])
    order = pa.concat_arrays([first.combine_chunks(),
                              pa.array([row[-1] for row in replayed], pa.int64())])
    return table.take(pc.sort_indices(order)).cast(schema)


# `replay` set-wise, for counting: each person's history of a pair is a stack (a judgment
# pushes, a retract takes the latest back and with nothing to take back does nothing). Its
# final depth is the running sum of +1/-1 minus the lowest point that sum reached below zero
# (a walk reflected at zero), so a pair is judged now when that is above zero; a pair judged
# on parts has one history per part and is judged when any of them is. Parameter: a
# round_id, or NULL for every round.
_STEPS = """
    WITH steps AS (
        SELECT round_id, assessor_id, query_id, doc_id, part,
               CASE WHEN kind = 'retract' THEN -1 ELSE 1 END AS step,
               sum(CASE WHEN kind = 'retract' THEN -1 ELSE 1 END) OVER (
                   PARTITION BY round_id, assessor_id, query_id, doc_id, part ORDER BY seq
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS height
        FROM judgments
        WHERE (?::VARCHAR IS NULL OR round_id = ?)
          AND assessor_id NOT IN ({left_out})
    )"""
_JUDGED_NOW = """, judged_now AS (
        SELECT round_id, query_id, doc_id FROM steps
        GROUP BY round_id, assessor_id, query_id, doc_id, part
        HAVING sum(step) - least(0, min(height)) > 0
    )
    SELECT round_id, query_id, count(DISTINCT doc_id) FROM judged_now
    GROUP BY round_id, query_id
"""
_JUDGED_PER_TOPIC = _STEPS.format(
    left_out="SELECT assessor_id FROM assessors WHERE kind = 'model'") + _JUDGED_NOW
_JUDGED_BY_ANYONE_PER_TOPIC = _STEPS.format(left_out="SELECT NULL WHERE false") + _JUDGED_NOW


# Whose answers take one of a crowd pair's K slots: people working on it, so neither an
# automatic judge's (a judge's grades join qrels only through a rule that names it) nor an
# organiser's (a check or an adjudication, which no rule counts as a vote). The one rule of
# the K count: the store's counts (`answers_per_pair`, `pooling.judging.queue.topic_queue`)
# and the judging server's (`pooling.web.crowd_counts`) all leave out these assessors.
NOT_COUNTED_TOWARD_K = ("SELECT assessor_id FROM assessors "
                        "WHERE kind = 'model' OR role = 'organiser'")


def not_counted_toward_k(store: Store) -> frozenset[str]:
    """The assessors whose answers take no slot of a crowd pair's K (`NOT_COUNTED_TOWARD_K`)."""
    return frozenset(r[0] for r in store.con.execute(NOT_COUNTED_TOWARD_K).fetchall())


# The same walk, per pair: how many people have a current answer of each pair of a round,
# organisers left out as well (`NOT_COUNTED_TOWARD_K`).
_ANSWERS_PER_PAIR = _STEPS.format(left_out=NOT_COUNTED_TOWARD_K) + """, answered AS (
        SELECT query_id, doc_id, assessor_id FROM steps
        GROUP BY round_id, assessor_id, query_id, doc_id, part
        HAVING sum(step) - least(0, min(height)) > 0
    )
    SELECT query_id, doc_id, count(DISTINCT assessor_id) FROM answered GROUP BY query_id, doc_id
"""


def answers_per_pair(store: Store, round_id: str) -> dict[tuple[str, str], int]:
    """{(query_id, doc_id): people with a current answer (a grade or unjudgeable)} of a round,
    set-wise in SQL: a crowd round's progress counts the pairs that reached K."""
    rows = store.sql("answers per pair", _ANSWERS_PER_PAIR, [round_id, round_id]).fetchall()
    return {(q, d): n for q, d, n in rows}


# The queued pairs of crowd rounds with more people answering now than the round's K (a
# crowd round records `redundancy` in its params: `pooling.judging.rounds.crowd_params`).
# Parameter: a round_id, or NULL for every round.
_PAST_K = _STEPS.format(left_out=NOT_COUNTED_TOWARD_K) + """, answered AS (
        SELECT round_id, query_id, doc_id, assessor_id FROM steps
        GROUP BY round_id, assessor_id, query_id, doc_id, part
        HAVING sum(step) - least(0, min(height)) > 0
    ), crowd AS (
        SELECT round_id, CAST(json_extract_string(params, '$.redundancy') AS BIGINT) AS k
        FROM rounds WHERE json_extract_string(params, '$.redundancy') IS NOT NULL
    )
    SELECT a.round_id, a.query_id, a.doc_id, any_value(c.k) FROM answered a
    JOIN crowd c USING (round_id)
    JOIN pool_entries p USING (round_id, query_id, doc_id)
    GROUP BY a.round_id, a.query_id, a.doc_id
    HAVING count(DISTINCT a.assessor_id) > any_value(c.k)
"""


def over_k(began: Mapping[str, int], redundancy: int) -> set[str]:
    """Who of a queued pair's workers answered past its K: `began` maps each worker with a
    current answer of the pair to the seq at which that answer began (its first judgment
    since they last had none); the first K by that seq count, the rest are over K. Such a late
    answer (to a pair handed out whose lease ran out, or before a restart) is stored, since
    nothing a person typed is dropped, and left out of everything derived from the round."""
    return set(sorted(began, key=lambda a: (began[a], a))[redundancy:])


def over_k_answers(store: Store, round_id: str | None = None) -> set[tuple[str, str, str, str]]:
    """The current answers over a crowd pair's K, (round_id, assessor_id, query_id, doc_id):
    people's answers of a queued pair beyond the first K (`over_k`).
    They stay in the history and in each person's own answers, and are left out of everyone's
    (`effective_judgments`), so of every rule, model and count derived from the round."""
    crowded = store.sql("pairs past K", _PAST_K, [round_id, round_id]).fetchall()
    if not crowded:
        return set()
    k = {(r, q, d): n for r, q, d, n in crowded}
    rows = store.sql("answers past K", f"""
        SELECT round_id, assessor_id, query_id, doc_id, kind, seq FROM judgments
        WHERE (round_id, query_id, doc_id) IN (SELECT UNNEST(?), UNNEST(?), UNNEST(?))
          AND assessor_id NOT IN ({NOT_COUNTED_TOWARD_K})
        ORDER BY seq""", [[p[0] for p in k], [p[1] for p in k], [p[2] for p in k]]).fetchall()
    began: dict[tuple[str, str, str], dict[str, tuple[int, int]]] = {}  # pair -> a -> (depth, seq)
    for r, a, q, d, kind, seq in rows:
        people = began.setdefault((r, q, d), {})
        depth, start = people.get(a, (0, 0))
        if kind != "retract":
            people[a] = (depth + 1, seq if depth == 0 else start)
        elif depth > 0:
            people[a] = (depth - 1, start)
    out: set[tuple[str, str, str, str]] = set()
    for (r, q, d), people in began.items():
        current = {a: start for a, (depth, start) in people.items() if depth > 0}
        out.update((r, a, q, d) for a in over_k(current, k[(r, q, d)]))
    return out


def judged_per_topic(store: Store, round_id: str | None = None, *,
                     judges: bool = False) -> dict[tuple[str, str], int]:
    """{(round_id, query_id): documents with a current answer (a grade or unjudgeable) by a
    person} for one round or all: the count `effective_judgments` gives, computed in SQL without replaying histories in
    Python (the organisers' progress asks for it every few seconds while a crowd judges).
    judges: count automatic judges' answers too (a round's progress: a round an automatic
    judge has judged is judged)."""
    query = _JUDGED_BY_ANYONE_PER_TOPIC if judges else _JUDGED_PER_TOPIC
    rows = store.sql("judged per topic", query, [round_id, round_id]).fetchall()
    return {(r, q): n for r, q, n in rows}


def unjudgeable_answers(store: Store, round_id: str | None = None,
                        leave_out: Collection[tuple[str, str]] = ()) -> tuple[int, int]:
    """(pairs, answers) left out of grades as unjudgeable: the current answers that are
    unjudgeable, and the pairs all of whose current answers are (they enter no qrels);
    pairs in `leave_out` (a round's gold) are not counted, as they enter no qrels anyway."""
    table = effective_judgments(store, round_id, answers=True)
    graded: dict[tuple[str, str, str], bool] = {}
    answers = 0
    for r, q, d, g in zip(*(table[c].to_pylist() for c in ("round_id", "query_id", "doc_id",
                                                             "grade")), strict=True):
        if (q, d) in leave_out:
            continue
        answers += g is None
        graded[(r or "", q, d)] = graded.get((r or "", q, d), False) or g is not None
    return sum(not v for v in graded.values()), answers


def find_judge(store: Store, name: str) -> tuple[str, dict[str, Any]]:
    """An automatic judge's (assessor_id, params) by id or name; a person, or a name nobody
    has, is refused with the judges there are."""
    row = store.one(
        "find judge", "SELECT assessor_id, kind, params FROM assessors "
        "WHERE assessor_id = ? OR name = ? ORDER BY assessor_id = ? DESC LIMIT 1", [name, name, name])
    if row is not None and row[1] == "model":
        return row[0], json.loads(row[2] or "{}")
    known = [r[0] for r in store.con.execute(
        "SELECT assessor_id FROM assessors WHERE kind = 'model' ORDER BY created_at, assessor_id"
    ).fetchall()]
    what = (f"{row[0]!r} is a person, not an automatic judge" if row is not None
            else f"no judge {name!r}")
    raise StoreError(f"{what}; judges: {', '.join(known) or 'none yet'} "
                     "(add one with `pooling judges add`)")


def judge_current(
    store: Store, judge_id: str, round_id: str | None = None, query_ids: list[str] | None = None,
) -> dict[tuple[str, str], tuple[int, float | None, int]]:
    """An automatic judge's current judgment per pair: (query_id, doc_id) -> (grade,
    probability, seq). Each round's history is replayed (a retract takes back the latest
    judgment); a pair judged in several rounds (or outside any) keeps the judgment made last,
    unless round_id names the one round to read. A judge's grades of a document on parts
    count as one judgment, their maximum (relevant to any part), as people's do in
    `effective_judgments`."""
    clauses, params = ["assessor_id = ?"], [judge_id]
    if round_id is not None:
        clauses.append("round_id = ?")
        params.append(round_id)
    if query_ids is not None:
        clauses.append("query_id IN (SELECT UNNEST(?))")
        params.append(list(query_ids))
    rows = store.con.execute(
        "SELECT round_id, query_id, doc_id, part, kind, grade, probability, seq FROM judgments "
        f"WHERE {' AND '.join(clauses)} ORDER BY seq", params).fetchall()
    stacks: dict[tuple, list[tuple[int, float | None, int]]] = {}
    for r, q, d, sub, kind, grade, probability, seq in rows:
        stack = stacks.setdefault((r, q, d, sub), [])
        if kind != "retract":
            stack.append((grade, probability, seq))
        elif stack:
            stack.pop()
    tops: dict[tuple, tuple[int, float | None, int]] = {}
    for (r, q, d, _), stack in stacks.items():
        if stack and stack[-1][0] is not None:
            top, before = stack[-1], tops.get((r, q, d))
            if before is not None:  # another part: the highest grade, the latest seq
                best = max(before, top, key=lambda v: (v[0], v[2]))
                top = (best[0], best[1], max(before[2], top[2]))
            tops[(r, q, d)] = top
    latest: dict[tuple[str, str], tuple[int, float | None, int]] = {}
    for (_, q, d), top in tops.items():
        if top[2] > latest.get((q, d), (0, None, -1))[2]:
            latest[(q, d)] = top
    return latest


def history(store: Store) -> pa.Table:
    """The full judgment history, in the order it was made (subtopic: the part a subtopic
    round's judgment grades the document on, else empty; the file's column keeps the name it
    has always had)."""
    return store.arrow(
        "judgment history",
        "SELECT seq, submission_id, round_id, query_id, doc_id, assessor_id, kind, grade, seconds, "
        "note, judged_at, part AS subtopic FROM judgments ORDER BY seq",
    )


def export_history(store: Store, path: str | Path) -> int:
    """Write the history as CSV (text cells safe to open in a spreadsheet, see
    `pooling.formats.csv_cells`), or Parquet when the file name ends in .parquet."""
    table = history(store)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, tmp)
    else:
        import pyarrow.csv as pacsv

        from pooling.formats.csv_cells import safe_text_columns

        pacsv.write_csv(safe_text_columns(table), tmp)  # a note is never run as a formula
    tmp.replace(path)
    return table.num_rows
