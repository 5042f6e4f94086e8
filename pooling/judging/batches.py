"""Offline batches: an assessor's unjudged items out as CSV or JSONL, the judged rows back in.

Import checks the whole file at once: its graded rows become one Arrow table that DuckDB
checks against the round's queue and assignments (the `may_judge` rule, set-wise) and the
stored submissions, in one transaction. Every problem is reported with file:line, and either
every graded row is stored or none. Each row's submission id is derived from its content and
the file's (its sha256), so importing the same file twice stores its judgments once, while a
later file that gives a pair the grade it had before another judgment is stored: the person's
latest word counts, whichever way it came.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa

from pooling.errors import FormatError, Problem, StoreError
from pooling.formats.csv_cells import plain_cell, safe_cell
from pooling.formats.source import (
    display_name,
    open_decompressed,
    open_file,
    sha256_file,
    strip_compression_suffix,
)
from pooling.judging.history import Judgment, assigned_items, effective_judgments
from pooling.judging.judgments import ROWS_VIEW, not_assigned, off_scale, refused_lines
from pooling.judging.rounds import Round, get_round
from pooling.judging.storable import unstorable
from pooling.store.core import Store, utcnow

BATCH_COLUMNS = ["round_id", "query_id", "doc_id", "position", "topic_title", "topic_description",
                 "topic_narrative", "doc_title", "doc_text", "grade", "note"]

_ITEMS_VIEW = "_batch_items"
_NEW_VIEW = "_new_judgments"


class BatchRows(NamedTuple):
    """A judged batch as read: the graded rows (with their file lines) and the problems of
    the rows that could not be read; assignments are not checked yet."""

    lines: list[int]
    judgments: list[Judgment]
    problems: list[Problem]


# -- export -------------------------------------------------------------------------------

# The items to write, in the assessor's order, with their topic's and document's text (ids
# are unique in both tables: imports keep the first of an id).
_EXPORT = """
    SELECT i.query_id, i.doc_id, i.position, t.title, t.description, t.narrative,
           d.title, d.text
    FROM _batch_items i
    LEFT JOIN topics t ON t.query_id = i.query_id
    LEFT JOIN documents d ON d.doc_id = i.doc_id
    ORDER BY i.k
"""


def export_batch(store: Store, round_id: str, assessor_id: str, path: str | Path) -> int:
    """An assessor's not-yet-judged items with topic and document text, as CSV or JSONL.

    Adaptive rounds are refused: they choose each document from the judgments so far, so
    they have no list to hand out in advance.
    """
    rnd = get_round(store, round_id)
    if rnd.adaptive:
        raise StoreError(
            f"round {rnd.round_id!r} is adaptive ({rnd.strategy}): it picks each next document "
            "from the judgments so far, so it hands documents out one at a time in the judging "
            "pages (`pooling serve`) or the API and has no batch to export; judge it there, or "
            "pool a static round (e.g. --strategy depth) for offline batches")
    items = assigned_items(store, round_id, assessor_id)
    done = effective_judgments(store, round_id, assessor_id=assessor_id)
    mine = set(zip(done["query_id"].to_pylist(), done["doc_id"].to_pylist(), strict=True))
    keep = [(q, d) not in mine for q, d in zip(items["query_id"].to_pylist(),
                                               items["doc_id"].to_pylist(), strict=True)]
    todo = items.select(["query_id", "doc_id", "position"]).filter(pa.array(keep, pa.bool_()))
    todo = todo.append_column("k", pa.array(range(todo.num_rows), pa.int64()))
    store.con.register(_ITEMS_VIEW, todo)
    try:
        found = store.sql("batch items", _EXPORT).fetchall()
    finally:
        store.con.unregister(_ITEMS_VIEW)
    names = BATCH_COLUMNS[1:9]
    rows = [{"round_id": rnd.round_id, **dict(zip(names, r, strict=True)), "grade": None, "note": None}
            for r in found]
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        if path.suffix == ".jsonl":
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            writer = csv.DictWriter(fh, fieldnames=BATCH_COLUMNS)
            writer.writeheader()
            writer.writerows({k: safe_cell(v) if isinstance(v, str) else v for k, v in row.items()}
                             for row in rows)
    tmp.replace(path)
    return len(rows)


# -- import -------------------------------------------------------------------------------


def read_batch(path: str | Path, rnd: Round, assessor_id: str) -> BatchRows:
    """The graded rows of a batch file as judgments; rows left blank are skipped, and rows for
    another round, with a grade that is not an integer or off the round's scale, or with a note
    but no grade (it would be lost) are problems."""
    source = display_name(path)
    out = BatchRows([], [], [])
    file_sha = sha256_file(path)
    for line, row in _batch_rows(path, source, out.problems):
        grade_text = str(row.get("grade") if row.get("grade") is not None else "").strip()
        if not grade_text:
            if str(row.get("note") or "").strip():  # never drop what a person typed
                out.problems.append(Problem(source, line, "a note without a grade: give the row a "
                                            "grade, or move the note to a graded row"))
            continue
        if row.get("round_id") not in (None, "", rnd.round_id):
            out.problems.append(Problem(source, line, f"row is for round {row['round_id']!r}, "
                                        f"not {rnd.round_id!r}"))
            continue
        try:
            grade = int(grade_text)
        except ValueError:
            out.problems.append(Problem(source, line, f"grade must be one of {list(rnd.grades)}, "
                                        f"found {grade_text!r}"))
            continue
        if grade not in rnd.grades:
            out.problems.append(Problem(source, line, off_scale(rnd, grade)))
            continue
        q, d = str(row.get("query_id") or ""), str(row.get("doc_id") or "")
        note = (row.get("note") or None) and str(row.get("note"))
        why = next((w for field, value in (("query_id", q), ("doc_id", d), ("note", note))
                    if (w := unstorable(value, field))), None)
        if why:
            out.problems.append(Problem(source, line, why))
            continue
        sid = hashlib.sha256(json.dumps([file_sha, rnd.round_id, assessor_id, q, d, grade, note]).encode())
        out.lines.append(line)
        out.judgments.append(Judgment(rnd.round_id, assessor_id, q, d, grade, note=note,
                                      submission_id=f"batch-{sid.hexdigest()[:32]}"))
    return out


def import_batch(store: Store, round_id: str, assessor_id: str, path: str | Path) -> tuple[int, int]:
    """Read a judged batch back: returns (stored, already stored); all rows or none.

    Every problem is reported with file:line. A row whose submission is stored already (the
    same file imported before, or the same row twice in the file) is counted, not stored.
    """
    rnd = get_round(store, round_id)
    source = display_name(path)
    batch = read_batch(path, rnd, assessor_id)
    problems = list(batch.problems)
    table = _rows_table(batch)
    con = store.con
    con.register(ROWS_VIEW, table)
    try:
        with store.transaction():
            by_line = dict(zip(batch.lines, batch.judgments, strict=True))
            for line in refused_lines(store, rnd.round_id, assessor_id) if table.num_rows else ():
                j = by_line[line]
                problems.append(Problem(source, line, not_assigned(rnd, assessor_id, j.query_id,
                                                                   j.doc_id)))
            if problems:
                problems.sort(key=lambda p: p.line or 0)
                raise FormatError(problems, hint="Nothing was imported; fix these rows and import "
                                  "again.")
            return _append(store, table)
    finally:
        con.unregister(ROWS_VIEW)


def _rows_table(batch: BatchRows) -> pa.Table:
    js = batch.judgments
    return pa.table({
        "line": pa.array(batch.lines, pa.int64()),
        "submission_id": pa.array([j.submission_id for j in js], pa.string()),
        "round_id": pa.array([j.round_id for j in js], pa.string()),
        "query_id": pa.array([j.query_id for j in js], pa.string()),
        "doc_id": pa.array([j.doc_id for j in js], pa.string()),
        "assessor_id": pa.array([j.assessor_id for j in js], pa.string()),
        "grade": pa.array([j.grade for j in js], pa.int64()),
        "note": pa.array([j.note for j in js], pa.string()),
    })


# Step "stored submissions": which of the batch's submission ids its assessor has stored
# already (ids are derived from a row's content, so a stored id is the same judgment).
_STORED = """
    SELECT j.submission_id FROM judgments j
    WHERE (j.assessor_id, j.submission_id) IN (SELECT assessor_id, submission_id FROM _judging_rows)
"""

# Step "append judgments": the new rows, each with a sequence number taken from the store's
# judgment sequence (in file order), so the history keeps the order of the file.
_APPEND = """
    INSERT INTO judgments (submission_id, round_id, query_id, doc_id, assessor_id, kind, grade,
                           seconds, note, judged_at, seq)
    SELECT submission_id, round_id, query_id, doc_id, assessor_id, 'judge', grade, NULL, note,
           $judged_at, seq
    FROM _new_judgments
"""


def _append(store: Store, table: pa.Table) -> tuple[int, int]:
    """Store the rows whose submission id is new (the first of repeats in the file); returns
    (stored, already stored). Runs inside the import's transaction."""
    if table.num_rows == 0:
        return 0, 0
    stored = {r[0] for r in store.sql("stored submissions", _STORED).fetchall()}
    keep = []
    for sid in table["submission_id"].to_pylist():
        keep.append(sid not in stored)
        stored.add(sid)
    new = table.filter(pa.array(keep, pa.bool_()))
    if new.num_rows:
        # Taken one by one from the sequence, so they interleave safely with judgments that
        # the judging server stores meanwhile; sorted, they follow the file's order.
        taken = store.sql("take judgment numbers", "SELECT nextval('judgment_seq') AS seq "
                          "FROM range(?)", [new.num_rows]).fetchnumpy()["seq"]
        new = new.append_column("seq", pa.array(sorted(int(s) for s in taken), pa.int64()))
        store.con.register(_NEW_VIEW, new)
        try:
            store.sql("append judgments", _APPEND, {"judged_at": utcnow()})
        finally:
            store.con.unregister(_NEW_VIEW)
    return new.num_rows, table.num_rows - new.num_rows


def _batch_rows(path: str | Path, source: str, problems: list[Problem]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, row) of a batch file, CSV or (by its name) JSONL, compressed or not; unreadable
    rows are problems, and so is a file that is not UTF-8 text."""
    try:
        yield from _rows(path, source, problems)
    except UnicodeDecodeError as exc:
        problems.append(Problem(source, None, f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x})"
                                "; save the batch as UTF-8 CSV or JSONL"))
    except csv.Error as exc:
        problems.append(Problem(source, None, f"not a CSV file ({exc}); save the batch as CSV"))


def _rows(path: str | Path, source: str, problems: list[Problem]) -> Iterator[tuple[int, dict[str, Any]]]:
    if strip_compression_suffix(str(path)).endswith(".jsonl"):
        with io.TextIOWrapper(open_decompressed(open_file(path), source), encoding="utf-8") as fh:
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
    with io.TextIOWrapper(open_decompressed(open_file(path), source), encoding="utf-8",
                          newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("query_id", "doc_id", "grade") if c not in (reader.fieldnames or [])]
        if missing:
            problems.append(Problem(source, 1, f"header lacks column(s) {', '.join(missing)}"))
            return
        start = reader.line_num
        for row in reader:  # cells as exported: the `'` that kept a spreadsheet off comes off
            yield start + 1, {k: plain_cell(v) if isinstance(v, str) else v for k, v in row.items()}
            start = reader.line_num
