"""Judgments: append-only history; a correction is a new judgment, an undo is a `retract`.

The one place judgments are written. Every submission carries an id of its assessor's, so a
retried submission is stored once, and the same id with other content is refused, never
dropped: `insert` is the one statement that stores judgments (whoever sends them: the CLI's
batches and `record`, automatic judges, the judging pages and API through the server's group
commits, organiser tools through a served store), and `outcomes` says what became of each
one. `undo` is the one way to take a judgment back. The current ("effective") judgment of
an assessor for a (query_id, doc_id) is found by replaying their history in order: a
judgment pushes a grade, an `unjudgeable` answer pushes "no grade", a retract takes back the
latest one (`current_grade`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, NamedTuple

import pyarrow as pa

from pooling.errors import StoreError, SubmissionConflict  # noqa: F401  (re-exported)
from pooling.judging.assignments import (  # noqa: F401  (re-exported: the judgments API)
    ORGANISER,
    Assignments,
    assigned_items,
    load_assignments,
    may_judge,
    not_assigned,
    role_of,
)
from pooling.judging.history import (  # noqa: F401  (re-exported: the judgments API)
    KINDS,
    Judgment,
    conflict,
    current_grade,
    effective_judgments,
    export_history,
    has_answer,
    history,
    stored_submissions,
)
from pooling.judging.rounds import Round, get_round
from pooling.judging.storable import unstorable  # noqa: F401  (re-exported)
from pooling.judging.validation import (  # noqa: F401  (re-exported)
    PART_MARK,
    JudgmentRefused,
    off_scale,
    part_ids,
    problem,
    unstorable_text,
)
from pooling.store.core import Store, utcnow

Key = tuple[str, str]  # (assessor_id, submission_id): a submission's identity
VALUES_ROWS = 512  # judgments bound as values in one statement (a group commit's at most)


class Written(NamedTuple):
    """A submission's outcome: its seq when stored now, None when it was already stored."""

    seq: int | None


Outcome = Written | SubmissionConflict


def key(j: Judgment) -> Key:
    """A submission's identity: its assessor and submission id."""
    return (j.assessor_id, j.submission_id or "")


# -- writing -------------------------------------------------------------------------------

_COLUMNS = ("submission_id", "round_id", "query_id", "doc_id", "assessor_id", "kind", "grade",
            "seconds", "note", "judged_at", "probability", "rationale", "part")
_TYPES = (pa.string(), pa.string(), pa.string(), pa.string(), pa.string(), pa.string(), pa.int64(),
          pa.float64(), pa.string(), pa.timestamp("us"), pa.float64(), pa.string(), pa.string())
_ROWS_VIEW = "_judgments_in"


def _insert_sql(rows: str, columns: Sequence[str] = _COLUMNS) -> str:
    """Step "insert judgments": judgments `rows` (a VALUES list or a SELECT) in one statement.
    A row whose (assessor, submission id) is stored already is skipped by the primary key
    (`OR IGNORE`); RETURNING names the rows stored, with the seq each was given."""
    return (f"INSERT OR IGNORE INTO judgments ({', '.join(columns)}) {rows} "
            "RETURNING assessor_id, submission_id, seq")


def _values(j: Judgment, now: datetime) -> list[object]:
    """A judgment's row, in `_COLUMNS` order (a retract stores no grade)."""
    return [j.submission_id, j.round_id, j.query_id, j.doc_id, j.assessor_id, j.kind,
            j.grade if j.kind == "judge" else None, j.seconds, j.note, now, j.probability,
            j.rationale, j.part]


def insert(con: Any, items: Sequence[Judgment], judged_at: datetime | None = None, *,
           as_table: bool | None = None) -> dict[Key, int]:
    """Store judgments whose keys are distinct (see `first_of`), numbered in the order given;
    returns the key and seq of each row stored now (the others were stored already). con is
    a store's connection or a cursor of it.

    One statement either way: the judgments as bound values (the server's group commits of
    up to `VALUES_ROWS`, run outside a transaction so that the statement is the commit), or
    as an Arrow table numbered from the store's judgment sequence beforehand (a batch file:
    binding a dozen values per row costs more than the insert itself). as_table: which one;
    None: the table for more than `VALUES_ROWS` judgments."""
    now = judged_at or utcnow()
    if not items:
        return {}
    if not (len(items) > VALUES_ROWS if as_table is None else as_table):
        rows = "VALUES " + ", ".join(["(" + ", ".join(["?"] * len(_COLUMNS)) + ")"] * len(items))
        params = [value for j in items for value in _values(j, now)]
        return {(a, s): seq for a, s, seq in con.execute(_insert_sql(rows), params).fetchall()}
    # Numbers taken one by one from the sequence, so they interleave safely with judgments
    # that the judging server stores meanwhile; sorted, they follow the order given.
    taken = con.execute("SELECT nextval('judgment_seq') FROM range(?)", [len(items)]).fetchnumpy()
    columns = zip(*(_values(j, now) for j in items), strict=True)
    table = pa.table([pa.array(c, t) for c, t in zip(columns, _TYPES, strict=True)]
                     + [pa.array(sorted(int(n) for n in taken[next(iter(taken))]), pa.int64())],
                     names=[*_COLUMNS, "seq"])
    con.register(_ROWS_VIEW, table)
    try:
        select = f"SELECT {', '.join(_COLUMNS)}, seq FROM {_ROWS_VIEW}"
        found = con.execute(_insert_sql(select, (*_COLUMNS, "seq"))).fetchall()
    finally:
        con.unregister(_ROWS_VIEW)
    return {(a, s): seq for a, s, seq in found}


def first_of(items: Iterable[Judgment]) -> list[Judgment]:
    """The first judgment of each key, in order (a double click is stored once)."""
    first: dict[Key, Judgment] = {}
    for j in items:
        first.setdefault(key(j), j)
    return list(first.values())


def outcomes(items: Sequence[Judgment], seqs: Mapping[Key, int],
             stored: Mapping[Key, dict]) -> list[Outcome]:
    """What became of each judgment sent, given the rows `insert` stored now (`seqs`) and
    the stored rows of the keys it skipped (`stored_submissions`). The first judgment of a
    key stored now is `Written(seq)`; one saying the same as the stored row (or as the first
    of its key in this call) is a retry, `Written(None)`; one saying something else is a
    `SubmissionConflict` naming both grades."""
    first: dict[Key, Judgment] = {}
    claimed: set[Key] = set()
    out: list[Outcome] = []
    for j in items:
        k = key(j)
        head = first.setdefault(k, j)
        if k in seqs and k not in claimed and head is j:
            claimed.add(k)
            out.append(Written(seqs[k]))
            continue
        before = stored.get(k) or head.content()
        out.append(Written(None) if j.same_as(before) else conflict(j, before))
    return out


def write(con: Any, items: Sequence[Judgment], judged_at: datetime | None = None, *,
          as_table: bool | None = None) -> list[Outcome]:
    """`insert` then `outcomes`: store what is new and say what became of each judgment."""
    unique = first_of(items)
    seqs = insert(con, unique, judged_at, as_table=as_table)
    stored = stored_submissions(con, [k for k in map(key, unique) if k not in seqs])
    return outcomes(items, seqs, stored)


def with_ids(judgments: Iterable[Judgment]) -> list[Judgment]:
    """The judgments, each without a submission id given a fresh one."""
    return [j if j.submission_id else replace(j, submission_id=uuid.uuid4().hex) for j in judgments]


def append_judgments(store: Store, judgments: Sequence[Judgment]) -> tuple[int, int]:
    """Append already validated judgments, in order, in one transaction: (stored, already stored).

    Each is keyed by (assessor_id, submission_id); a missing id gets a fresh one. A key already
    stored with the same content is a retry and is skipped; with other content the whole call
    raises `SubmissionConflict` and stores nothing. Long jobs (an automatic judge) call this
    once per batch with ids derived from what they judge, so a batch sent twice, or a job
    resumed after a crash, stores nothing twice.
    """
    items = with_ids(judgments)
    if not items:
        return 0, 0
    problems = [f"judgment {n}: {why}" for n, j in enumerate(items, start=1)
                if (why := unstorable_text(j))]
    if problems:
        raise StoreError("no judgment was stored:\n" + "\n".join(problems))
    if store.remote and not store.in_transaction:
        # A served store: the server's one judgment writer stores them with the assessors'
        # own, so the judging pages keep what they hold in memory (pooling.web.live).
        return store.con.append_judgments(items)
    with store.transaction() as con:
        # A conflict raises before anything is stored, also inside a caller's transaction.
        counted(outcomes(items, {}, stored_submissions(con, [key(j) for j in first_of(items)])))
        return counted(write(con, items))


def counted(results: Sequence[Outcome]) -> tuple[int, int]:
    """(stored now, already stored) of `write`'s outcomes; the first conflict is raised."""
    for r in results:
        if isinstance(r, SubmissionConflict):
            raise r
    stored = sum(r.seq is not None for r in results)  # type: ignore[union-attr]
    return stored, len(results) - stored


# -- checking, then writing ----------------------------------------------------------------


def validate(store: Store, j: Judgment, rnd: Round | None = None,
             known: Permissions | None = None) -> str | None:
    """Why a judgment cannot be accepted (`pooling.judging.validation.problem`, then who may
    judge it), or None when it can. `known`: the permissions read so far in this call."""
    why = unstorable_text(j)  # first: the store cannot even look such text up
    if why:
        return why
    rnd = rnd or get_round(store, j.round_id)
    why = problem(j, rnd)
    if why:
        return why
    allowed = (known.may_judge(rnd, j) if known is not None
               else may_judge(store, rnd.round_id, j.assessor_id, j.query_id, j.doc_id))
    if not allowed:
        return not_assigned(rnd, j.assessor_id, j.query_id, j.doc_id)
    return None


class Permissions:
    """Who may judge what, read once per (round, topic, person) for one call of `record`: the
    rule is `pooling.judging.assignments.Assignments.may_judge`, asked of rows loaded once (a
    batch asks about many pairs of the same people and topics)."""

    def __init__(self, store: Store):
        self.store = store
        self._roles: dict[str, str | None] = {}
        self._loaded: dict[tuple[str, str, str | None], Assignments] = {}

    def may_judge(self, rnd: Round, j: Judgment) -> bool:
        if j.assessor_id not in self._roles:
            self._roles[j.assessor_id] = role_of(self.store, j.assessor_id)
        role = self._roles[j.assessor_id]
        if role is None:  # unknown people may judge nothing
            return False
        who = None if role == ORGANISER else j.assessor_id
        loaded = self._loaded.get((rnd.round_id, j.query_id, who))
        if loaded is None:
            loaded = self._loaded.setdefault((rnd.round_id, j.query_id, who), load_assignments(
                self.store, rnd, query_id=j.query_id, assessor_id=who))
        return loaded.may_judge(j.assessor_id, role, j.query_id, j.doc_id)


def record(store: Store, judgments: Iterable[Judgment]) -> tuple[int, int]:
    """Append judgments in one transaction; returns (stored, already stored) counts.

    A submission id the assessor used before, with the same content, is not stored again (a
    retry); with other content it raises `SubmissionConflict`. Anything invalid raises before
    anything is written; so does a retract with nothing to take back.
    """
    items = list(judgments)
    rounds: dict[str, Round] = {}
    known = Permissions(store)
    problems = []
    for i, j in enumerate(items):
        why = unstorable_text(j)
        if why is None:
            rnd = rounds.get(j.round_id) or rounds.setdefault(j.round_id, get_round(store, j.round_id))
            why = validate(store, j, rnd, known)
        if why:
            problems.append(f"judgment {i + 1}: {why}")
    if problems:
        raise StoreError("no judgment was stored:\n" + "\n".join(problems))
    stored = duplicates = 0
    with store.transaction():
        # In order: an undo may take back a judgment of the same call, so what comes before
        # an undo is stored before it is checked; the runs between undos go together.
        for group in _between_undos(items):
            j = group[0]
            if j.kind == "retract" and not _sent_before(store, j) and not _answered(store, j):
                on = f" on subtopic {j.part!r}" if j.part is not None else ""
                raise StoreError(f"nothing to undo: {j.assessor_id!r} has no current judgment of "
                                 f"{j.doc_id!r}{on} for topic {j.query_id!r}")
            new, again = append_judgments(store, group)
            stored, duplicates = stored + new, duplicates + again
    return stored, duplicates


def _between_undos(items: Sequence[Judgment]) -> list[list[Judgment]]:
    """The judgments in order: each undo alone, the runs of other judgments between undos
    together."""
    groups: list[list[Judgment]] = []
    for j in items:
        if j.kind == "retract" or not groups or groups[-1][0].kind == "retract":
            groups.append([j])
        else:
            groups[-1].append(j)
    return groups


def _sent_before(store: Store, j: Judgment) -> bool:
    """Whether this judgment is a retry of one stored under its submission id."""
    if not j.submission_id:
        return False
    return key(j) in stored_submissions(store.con, [key(j)])


def _answered(store: Store, j: Judgment) -> bool:
    """Whether the person has a current answer (a grade or unjudgeable) of the pair."""
    rows = store.con.execute(
        "SELECT kind, grade FROM judgments WHERE round_id = ? AND assessor_id = ? AND query_id = ? "
        "AND doc_id = ? AND part IS NOT DISTINCT FROM ? ORDER BY seq",
        [j.round_id, j.assessor_id, j.query_id, j.doc_id, j.part],
    ).fetchall()
    return has_answer(rows)


# -- undo ----------------------------------------------------------------------------------


class NothingToUndo(JudgmentRefused):
    """An undo with no current judgment of the topic to take back (the web answers 409)."""


@dataclass(frozen=True)
class Undone:
    """What an undo took back: the document, and whether it had been taken back already."""

    doc_id: str
    duplicate: bool


Submitted = tuple[str, str, "int | None"]  # (doc_id, kind, grade) stored under a submission id


def submitted(store: Store, assessor_id: str, submission_id: str) -> Submitted | None:
    """What this person stored under a submission id: (doc_id, kind, grade), or None. A
    subtopic round's submission is stored as one row per subtopic (`part_ids`): the
    first of them answers, with the document's highest grade."""
    return store.one(
        "find submission", "SELECT doc_id, kind, max(grade) FROM judgments WHERE assessor_id = ? "
        "AND (submission_id = ? OR starts_with(submission_id, ? || ?)) "
        "GROUP BY doc_id, kind ORDER BY min(seq) LIMIT 1",
        [assessor_id, submission_id, submission_id, PART_MARK])


def undo(round_id: str, assessor_id: str, query_id: str, submission_id: str,
         mine: Mapping[str, tuple[int, int]], *, find: Callable[[], Submitted | None],
         store_one: Callable[[Judgment], Written]) -> Undone:
    """Take back this person's latest current judgment of a topic, as a `retract` judgment.

    mine: their current judgments of the topic, doc_id -> (grade, seq); find(): `submitted`
    for this person and id; store_one: stores one judgment (`Written`). A retried
    undo (the same submission id) answers with the document it took back the first time, also
    when the two were sent at once; an id this person used for a judgment is a
    `SubmissionConflict`; nothing to take back is `NothingToUndo`. In a subtopic round the
    retract passed to store_one stands for the document's grades on all its subtopics (see
    `undo_in_store`).
    """
    done = find()
    if done and done[1] == "retract":
        return Undone(done[0], duplicate=True)
    if not mine:
        raise NothingToUndo("there is no judgment of this topic to undo")
    latest = max(mine, key=lambda d: mine[d][1])
    j = Judgment(round_id, assessor_id, query_id, latest, None, kind="retract",
                 submission_id=submission_id)
    try:
        written = store_one(j)
    except SubmissionConflict:
        written = Written(None)  # a retry that raced the first: it chose another document
    if written.seq is not None:
        return Undone(latest, duplicate=False)
    done = find()
    if done and done[1] != "retract":  # the id was this person's judgment, not an undo
        raise conflict(j, {"doc_id": done[0], "grade": done[2]})
    return Undone(done[0] if done else latest, duplicate=True)


def undo_in_store(store: Store, round_id: str, assessor_id: str, query_id: str,
                  submission_id: str) -> Undone:
    """`undo` straight on the store (under its write lock): the person's current judgments
    read from their history, the retract appended in a transaction. In a subtopic round the
    document's latest submission is taken back whole: one retract per subtopic it has a
    current grade on, stored together (`part_retracts`)."""
    table = effective_judgments(store, round_id, query_id=query_id, assessor_id=assessor_id,
                                answers=True)
    mine = {d: (g, s) for d, g, s in zip(*(table[c].to_pylist() for c in ("doc_id", "grade", "seq")),
                                          strict=True)}
    on_parts = get_round(store, round_id).item.has_parts

    def store_one(j: Judgment) -> Written:
        items = part_retracts(store, j) if on_parts else [j]
        with store.transaction() as con:
            results = write(con, items)
        for result in results:
            if isinstance(result, SubmissionConflict):
                raise result
        first = results[0]
        assert isinstance(first, Written)
        return first

    return undo(round_id, assessor_id, query_id, submission_id, mine,
                find=lambda: submitted(store, assessor_id, submission_id), store_one=store_one)



def part_retracts(store: Store, j: Judgment) -> list[Judgment]:
    """A retract of a unit in a round judged on parts as one retract per part the person has
    a current grade on, each under its own stored id (`part_ids`)."""
    table = effective_judgments(store, j.round_id, query_id=j.query_id, assessor_id=j.assessor_id,
                                per_part=True)
    subs = [s for d, s in zip(table["doc_id"].to_pylist(), table["part"].to_pylist(),
                              strict=True) if d == j.doc_id]
    return [replace(j, part=s, submission_id=part_ids(j.submission_id or "", s))
            for s in sorted(subs, key=str)]
