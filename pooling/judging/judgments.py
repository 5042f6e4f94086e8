"""Judgments: append-only history; a correction is a new judgment, an undo is a `retract`.

Every submission carries a unique id, so a retried submission is stored once. The current
("effective") judgment of an assessor for a (query_id, doc_id) is found by replaying their
history in order: a judgment pushes a grade, a retract takes back the latest one.
"""

from __future__ import annotations

import csv
import hashlib
import json
import uuid
from collections.abc import Iterable
from pathlib import Path

from pooling.errors import FormatError, Problem, StoreError
from pooling.formats.source import display_name
from pooling.judging.history import (  # noqa: F401  (re-exported: the judgments API)
    KINDS,
    Judgment,
    _replay,
    assigned_items,
    effective_judgments,
    export_history,
    history,
)
from pooling.judging.rounds import Round, get_round
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


def validate(store: Store, j: Judgment, rnd: Round | None = None) -> str | None:
    """Why a judgment cannot be accepted, or None when it can."""
    rnd = rnd or get_round(store, j.round_id)
    if j.kind not in KINDS:
        return f"kind must be one of {', '.join(KINDS)}"
    if j.kind == "judge" and j.grade not in rnd.grades:
        return f"grade {j.grade!r} is not on the round's scale {list(rnd.grades)}"
    if not may_judge(store, rnd.round_id, j.assessor_id, j.query_id, j.doc_id):
        return (f"document {j.doc_id!r} of topic {j.query_id!r} is not assigned to "
                f"{j.assessor_id!r} in round {rnd.round_id!r}")
    return None


def record(store: Store, judgments: Iterable[Judgment]) -> tuple[int, int]:
    """Append judgments in one transaction; returns (stored, already stored) counts.

    A submission id seen before is not stored again (a retry); anything invalid raises
    before anything is written.
    """
    items = list(judgments)
    rounds: dict[str, Round] = {}
    problems = []
    for i, j in enumerate(items):
        rnd = rounds.get(j.round_id) or rounds.setdefault(j.round_id, get_round(store, j.round_id))
        why = validate(store, j, rnd)
        if why:
            problems.append(f"judgment {i + 1}: {why}")
    if problems:
        raise StoreError("no judgment was stored:\n" + "\n".join(problems))
    stored = dup = 0
    with store.transaction() as con:
        for j in items:
            sid = j.submission_id or uuid.uuid4().hex
            if store.one("find submission", "SELECT 1 FROM judgments WHERE submission_id = ?", [sid]):
                dup += 1
                continue
            if j.kind == "retract" and _current_grade(store, j) is None:
                raise StoreError(f"nothing to undo: {j.assessor_id!r} has no current judgment of "
                                 f"{j.doc_id!r} for topic {j.query_id!r}")
            con.execute(
                "INSERT INTO judgments (submission_id, round_id, query_id, doc_id, assessor_id, "
                "kind, grade, seconds, note, judged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [sid, j.round_id, j.query_id, j.doc_id, j.assessor_id, j.kind,
                 j.grade if j.kind == "judge" else None, j.seconds, j.note, utcnow()],
            )
            stored += 1
    return stored, dup


def _current_grade(store: Store, j: Judgment) -> int | None:
    rows = store.con.execute(
        "SELECT kind, grade FROM judgments WHERE round_id = ? AND assessor_id = ? AND query_id = ? "
        "AND doc_id = ? ORDER BY seq",
        [j.round_id, j.assessor_id, j.query_id, j.doc_id],
    ).fetchall()
    return _replay(rows)


# -- offline batches ----------------------------------------------------------------------

BATCH_COLUMNS = ["round_id", "query_id", "doc_id", "position", "topic_title", "topic_description",
                 "topic_narrative", "doc_title", "doc_text", "grade", "note"]


def export_batch(store: Store, round_id: str, assessor_id: str, path: str | Path) -> int:
    """An assessor's not-yet-judged items with topic and document text, as CSV or JSONL."""
    rnd = get_round(store, round_id)
    items = assigned_items(store, round_id, assessor_id)
    done = effective_judgments(store, round_id)
    mine = {(q, d) for a, q, d in zip(done["assessor_id"].to_pylist(), done["query_id"].to_pylist(),
                                       done["doc_id"].to_pylist(), strict=True) if a == assessor_id}
    topics = {r[0]: r[1:] for r in store.con.execute(
        "SELECT query_id, title, description, narrative FROM topics").fetchall()}
    rows = []
    for q, d, pos in zip(items["query_id"].to_pylist(), items["doc_id"].to_pylist(),
                         items["position"].to_pylist(), strict=True):
        if (q, d) in mine:
            continue
        doc = store.one("document", "SELECT title, text FROM documents WHERE doc_id = ?", [d])
        t = topics.get(q, (None, None, None))
        rows.append({"round_id": rnd.round_id, "query_id": q, "doc_id": d, "position": pos,
                     "topic_title": t[0], "topic_description": t[1], "topic_narrative": t[2],
                     "doc_title": doc[0] if doc else None, "doc_text": doc[1] if doc else None,
                     "grade": None, "note": None})
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        if path.suffix == ".jsonl":
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            writer = csv.DictWriter(fh, fieldnames=BATCH_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    tmp.replace(path)
    return len(rows)


def import_batch(store: Store, round_id: str, assessor_id: str, path: str | Path) -> tuple[int, int]:
    """Read judged batch rows back (blank grades are skipped); all or nothing.

    Every problem is reported with file:line. Each row's submission id is derived from its
    content, so importing the same file twice stores its judgments once.
    """
    rnd = get_round(store, round_id)
    source = display_name(path)
    problems: list[Problem] = []
    judgments: list[Judgment] = []
    for line, row in _batch_rows(path, source, problems):
        grade_text = str(row.get("grade") if row.get("grade") is not None else "").strip()
        if not grade_text:
            continue
        if row.get("round_id") not in (None, "", round_id):
            problems.append(Problem(source, line, f"row is for round {row['round_id']!r}, "
                                    f"not {round_id!r}"))
            continue
        try:
            grade = int(grade_text)
        except ValueError:
            problems.append(Problem(source, line, f"grade must be one of {list(rnd.grades)}, "
                                    f"found {grade_text!r}"))
            continue
        q, d = str(row.get("query_id") or ""), str(row.get("doc_id") or "")
        note = (row.get("note") or None) and str(row.get("note"))
        sid = hashlib.sha256(json.dumps([round_id, assessor_id, q, d, grade, note]).encode()).hexdigest()
        j = Judgment(round_id, assessor_id, q, d, grade, note=note, submission_id=f"batch-{sid[:32]}")
        why = validate(store, j, rnd)
        if why:
            problems.append(Problem(source, line, why))
            continue
        judgments.append(j)
    if problems:
        raise FormatError(problems, hint="Nothing was imported; fix these rows and import again.")
    return record(store, judgments)


def _batch_rows(path, source: str, problems: list[Problem]):
    if str(path).endswith(".jsonl"):
        with open(path, encoding="utf-8") as fh:
            for number, text in enumerate(fh, start=1):
                if not text.strip():
                    continue
                try:
                    row = json.loads(text)
                except json.JSONDecodeError as exc:
                    problems.append(Problem(source, number, f"not valid JSON: {exc.msg}"))
                    continue
                if not isinstance(row, dict):
                    problems.append(Problem(source, number, "expected a JSON object"))
                    continue
                yield number, row
        return
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("query_id", "doc_id", "grade") if c not in (reader.fieldnames or [])]
        if missing:
            problems.append(Problem(source, 1, f"header lacks column(s) {', '.join(missing)}"))
            return
        start = reader.line_num
        for row in reader:
            yield start + 1, row
            start = reader.line_num
