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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from pooling.errors import FormatError, Problem, StoreError
from pooling.formats.source import display_name
from pooling.rounds import Round, get_round
from pooling.store.core import Store, utcnow

KINDS = ("judge", "retract")


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


def assigned_items(store: Store, round_id: str, assessor_id: str) -> pa.Table:
    """An assessor's work in a round: query_id, doc_id, position, role (primary|overlap)."""
    return store.arrow(
        "assigned items",
        """
        SELECT p.query_id, p.doc_id, p.position, 'primary' AS role
        FROM pool_entries p JOIN assignments a
          ON a.round_id = p.round_id AND a.query_id = p.query_id AND a.doc_id IS NULL
        WHERE p.round_id = ? AND a.assessor_id = ?
        UNION ALL
        SELECT a.query_id, a.doc_id, p.position, 'overlap' AS role
        FROM assignments a JOIN pool_entries p
          ON p.round_id = a.round_id AND p.query_id = a.query_id AND p.doc_id = a.doc_id
        WHERE a.round_id = ? AND a.assessor_id = ? AND a.doc_id IS NOT NULL
        ORDER BY query_id, position
        """,
        [round_id, assessor_id, round_id, assessor_id],
    )


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


def _replay(events: list[tuple[str, int | None]]) -> int | None:
    stack: list[int] = []
    for kind, grade in events:
        if kind == "judge":
            stack.append(grade)
        elif stack:
            stack.pop()
    return stack[-1] if stack else None


def effective_judgments(
    store: Store,
    round_id: str | None = None,
    *,
    query_id: str | None = None,
    assessor_id: str | None = None,
) -> pa.Table:
    """Each assessor's current grade per pair: round_id, assessor_id, query_id, doc_id, grade,
    seq (of the judgment that set it), judged_at. Optional filters narrow the replay."""
    filters = [("round_id", round_id), ("query_id", query_id), ("assessor_id", assessor_id)]
    used = [(column, value) for column, value in filters if value is not None]
    where = ("WHERE " + " AND ".join(f"{column} = ?" for column, _ in used)) if used else ""
    rows = store.con.execute(
        f"SELECT round_id, assessor_id, query_id, doc_id, kind, grade, seq, judged_at "
        f"FROM judgments {where} ORDER BY seq",
        [value for _, value in used],
    ).fetchall()
    stacks: dict[tuple, list[tuple[int, int, Any]]] = {}
    for r, a, q, d, kind, grade, seq, at in rows:
        stack = stacks.setdefault((r, a, q, d), [])
        if kind == "judge":
            stack.append((grade, seq, at))
        elif stack:
            stack.pop()
    out: dict[str, list[Any]] = {k: [] for k in
                                 ("round_id", "assessor_id", "query_id", "doc_id", "grade", "seq",
                                  "judged_at")}
    for (r, a, q, d), stack in stacks.items():
        if stack:
            grade, seq, at = stack[-1]
            for key, value in zip(out, (r, a, q, d, grade, seq, at), strict=True):
                out[key].append(value)
    return pa.table(out, schema=pa.schema([
        ("round_id", pa.string()), ("assessor_id", pa.string()), ("query_id", pa.string()),
        ("doc_id", pa.string()), ("grade", pa.int64()), ("seq", pa.int64()),
        ("judged_at", pa.timestamp("us")),
    ]))


def history(store: Store) -> pa.Table:
    """The full judgment history, in the order it was made."""
    return store.arrow(
        "judgment history",
        "SELECT seq, submission_id, round_id, query_id, doc_id, assessor_id, kind, grade, seconds, "
        "note, judged_at FROM judgments ORDER BY seq",
    )


def export_history(store: Store, path: str | Path) -> int:
    """Write the history as CSV, or Parquet when the file name ends in .parquet."""
    table = history(store)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, tmp)
    else:
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, tmp)
    tmp.replace(path)
    return table.num_rows


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
