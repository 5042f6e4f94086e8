"""Judgments: append-only history; a correction is a new judgment, an undo is a `retract`.

Every submission carries an id of its assessor's, so a retried submission is stored once,
and the same id with other content is refused, never dropped. The current
("effective") judgment of an assessor for a (query_id, doc_id) is found by replaying their
history in order: a judgment pushes a grade, a retract takes back the latest one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import replace

from pooling.errors import StoreError, SubmissionConflict  # noqa: F401  (re-exported)
from pooling.judging.history import (  # noqa: F401  (re-exported: the judgments API)
    KINDS,
    Judgment,
    _replay,
    assigned_items,
    conflict,
    effective_judgments,
    export_history,
    history,
    stored_submissions,
)
from pooling.judging.rounds import Round, get_round
from pooling.judging.storable import unstorable  # noqa: F401  (re-exported)
from pooling.store.core import Store, utcnow

# A queued document is an organiser's to adjudicate, or an assessor's when its topic is
# assigned to them whole (doc_id NULL) or the document is one of their overlap items.
# Parameters: round_id, query_id, doc_id, role, assessor_id.
_MAY_JUDGE = """
    SELECT 1 FROM pool_entries p
    WHERE p.round_id = ? AND p.query_id = ? AND p.doc_id = ?
      AND (? = 'organiser' OR EXISTS (
            SELECT 1 FROM assignments a
            WHERE a.round_id = p.round_id AND a.query_id = p.query_id AND a.assessor_id = ?
              AND (a.doc_id IS NULL OR a.doc_id = p.doc_id)))
"""


# The same rule for many rows at once: the lines of the registered table ROWS_VIEW (line,
# query_id, doc_id) naming a document this person may not judge. Parameters as above but
# named: round_id, role, assessor_id.
ROWS_VIEW = "_judging_rows"
_MAY_NOT_JUDGE_ROWS = """
    SELECT b.line FROM _judging_rows b
    WHERE NOT EXISTS (
        SELECT 1 FROM pool_entries p
        WHERE p.round_id = $round_id AND p.query_id = b.query_id AND p.doc_id = b.doc_id
          AND ($role = 'organiser' OR EXISTS (
                SELECT 1 FROM assignments a
                WHERE a.round_id = p.round_id AND a.query_id = p.query_id
                  AND a.assessor_id = $assessor_id
                  AND (a.doc_id IS NULL OR a.doc_id = p.doc_id))))
    ORDER BY b.line
"""


def may_judge(store: Store, round_id: str, assessor_id: str, query_id: str, doc_id: str,
              role: str | None = None) -> bool:
    """Whether this person may judge this queued document of the round (role looked up if
    not given; unknown people may judge nothing)."""
    if role is None:
        row = store.one("assessor role", "SELECT role FROM assessors WHERE assessor_id = ?",
                        [assessor_id])
        if row is None:
            return False
        role = row[0]
    return store.one("may judge", _MAY_JUDGE,
                     [round_id, query_id, doc_id, role, assessor_id]) is not None


def refused_lines(store: Store, round_id: str, assessor_id: str) -> list[int]:
    """The lines of the registered `ROWS_VIEW` table (line, query_id, doc_id) naming documents
    this person may not judge: `may_judge` for every row in one statement."""
    row = store.one("assessor role", "SELECT role FROM assessors WHERE assessor_id = ?",
                    [assessor_id])
    if row is None:  # unknown people may judge nothing
        return [r[0] for r in store.sql("batch lines", "SELECT line FROM _judging_rows ORDER BY line")
                .fetchall()]
    found = store.sql("rows not assigned", _MAY_NOT_JUDGE_ROWS,
                      {"round_id": round_id, "role": row[0], "assessor_id": assessor_id})
    return [r[0] for r in found.fetchall()]


def off_scale(rnd: Round, grade: object) -> str:
    """Why a grade is refused: it is not on the round's scale."""
    return f"grade {grade!r} is not on the round's scale {list(rnd.grades)}"


def not_assigned(rnd: Round, assessor_id: str, query_id: str, doc_id: str) -> str:
    """Why a judgment is refused: the document is not this person's to judge in the round."""
    return (f"document {doc_id!r} of topic {query_id!r} is not assigned to {assessor_id!r} "
            f"in round {rnd.round_id!r}")


# A judgment's text fields: each must be text the store can hold (see `unstorable`).
TEXT_FIELDS = ("round_id", "assessor_id", "query_id", "doc_id", "kind", "note", "submission_id",
               "rationale")


def unstorable_text(j: Judgment) -> str | None:
    """Why one of a judgment's text fields cannot be stored (`unstorable`), or None."""
    return next((why for name in TEXT_FIELDS if (why := unstorable(getattr(j, name), name))), None)


def validate(store: Store, j: Judgment, rnd: Round | None = None) -> str | None:
    """Why a judgment cannot be accepted, or None when it can."""
    why = unstorable_text(j)  # first: the store cannot even look such text up
    if why:
        return why
    rnd = rnd or get_round(store, j.round_id)
    if j.kind not in KINDS:
        return f"kind must be one of {', '.join(KINDS)}"
    if j.kind == "judge" and j.grade not in rnd.grades:
        return off_scale(rnd, j.grade)
    if not may_judge(store, rnd.round_id, j.assessor_id, j.query_id, j.doc_id):
        return not_assigned(rnd, j.assessor_id, j.query_id, j.doc_id)
    return None


def record(store: Store, judgments: Iterable[Judgment]) -> tuple[int, int]:
    """Append judgments in one transaction; returns (stored, already stored) counts.

    A submission id the assessor used before, with the same content, is not stored again (a
    retry); with other content it raises `SubmissionConflict`. Anything invalid raises before
    anything is written.
    """
    items = list(judgments)
    rounds: dict[str, Round] = {}
    problems = []
    for i, j in enumerate(items):
        why = unstorable_text(j)
        if why is None:
            rnd = rounds.get(j.round_id) or rounds.setdefault(j.round_id, get_round(store, j.round_id))
            why = validate(store, j, rnd)
        if why:
            problems.append(f"judgment {i + 1}: {why}")
    if problems:
        raise StoreError("no judgment was stored:\n" + "\n".join(problems))
    stored = duplicates = 0
    with store.transaction():
        for j in items:  # in order: an undo may take back a judgment of the same call
            if j.kind == "retract" and not _sent_before(store, j) and _current_grade(store, j) is None:
                raise StoreError(f"nothing to undo: {j.assessor_id!r} has no current judgment of "
                                 f"{j.doc_id!r} for topic {j.query_id!r}")
            new, again = append_judgments(store, [j])
            stored, duplicates = stored + new, duplicates + again
    return stored, duplicates


def append_judgments(store: Store, judgments: Sequence[Judgment]) -> tuple[int, int]:
    """Append already validated judgments, in order, in one transaction: (stored, already stored).

    Each is keyed by (assessor_id, submission_id); a missing id gets a fresh one. A key already
    stored with the same content is a retry and is skipped; with other content the whole call
    raises `SubmissionConflict` and stores nothing. Long jobs (an automatic judge) call this
    once per batch with ids derived from what they judge, so a batch sent twice, or a job
    resumed after a crash, stores nothing twice.
    """
    items = [j if j.submission_id else replace(j, submission_id=uuid.uuid4().hex) for j in judgments]
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
        stored = stored_submissions(con, [(j.assessor_id, j.submission_id) for j in items])
        fresh: list[Judgment] = []
        seen: dict[tuple[str, str], Judgment] = {}
        duplicates = 0
        for j in items:
            key = (j.assessor_id, j.submission_id or "")
            before = stored.get(key)
            if before is None and key in seen:
                before = seen[key].content()
            if before is not None:
                if not j.same_as(before):
                    raise conflict(j, before)
                duplicates += 1
                continue
            seen[key] = j
            fresh.append(j)
        if fresh:
            con.executemany(
                "INSERT INTO judgments (submission_id, round_id, query_id, doc_id, assessor_id, "
                "kind, grade, seconds, note, judged_at, probability, rationale) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [[j.submission_id, j.round_id, j.query_id, j.doc_id, j.assessor_id, j.kind,
                  j.grade if j.kind == "judge" else None, j.seconds, j.note, utcnow(),
                  j.probability, j.rationale] for j in fresh],
            )
    return len(fresh), duplicates


def _sent_before(store: Store, j: Judgment) -> bool:
    """Whether this judgment is a retry of one stored under its submission id."""
    if not j.submission_id:
        return False
    before = stored_submissions(store.con, [(j.assessor_id, j.submission_id)])
    return (j.assessor_id, j.submission_id) in before


def _current_grade(store: Store, j: Judgment) -> int | None:
    rows = store.con.execute(
        "SELECT kind, grade FROM judgments WHERE round_id = ? AND assessor_id = ? AND query_id = ? "
        "AND doc_id = ? ORDER BY seq",
        [j.round_id, j.assessor_id, j.query_id, j.doc_id],
    ).fetchall()
    return _replay(rows)
