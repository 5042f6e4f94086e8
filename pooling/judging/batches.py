"""Offline batches: an assessor's unjudged items out as CSV or JSONL, the judged rows back in.
A row's grade may be `unjudgeable` (a document that cannot be judged) in a static round; a
crowd round's batch is what its queue hands the worker now (`crowd_items`).

Import checks the whole file at once: every graded row against the round's scale and text
rules (`pooling.judging.validation`) and who may judge what (`pooling.judging.assignments`,
loaded once for the person), then stores them with the one judgment insert
(`pooling.judging.judgments`), in one transaction. Every problem is reported with file:line,
and either every graded row is stored or none. Each row's submission id is derived from its content and
the file's (its sha256), so importing the same file twice stores its judgments once, while a
later file that gives a pair the grade it had before another judgment is stored: the person's
latest word counts, whichever way it came.

A subtopic round's batch has a row per document and subtopic (`SUBTOPIC_BATCH_COLUMNS`: the
subtopic's number and text after the document id); each graded row is that subtopic's
judgment, so a document may be graded on some of its subtopics now and the rest later. Any
round judged on parts is batched so, its columns named after its part (`part_columns`: an
assignment round's `nugget` and `nugget_text`), and a unit that is not a document (an
answer) carries its own text in `doc_title` and `doc_text`.
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
from pooling.formats.common import ProblemLog, iter_lines, loads_strict
from pooling.formats.csv_cells import plain_cell, safe_cell
from pooling.formats.source import (
    display_name,
    open_decompressed,
    open_file,
    sha256_file,
    strip_compression_suffix,
)
from pooling.judging.assignments import assigned_items, load_assignments, not_assigned, role_of
from pooling.judging.history import UNJUDGEABLE, Judgment, effective_judgments
from pooling.judging.judgments import counted, write
from pooling.judging.queue import topic_queue
from pooling.judging.rounds import Round, get_round
from pooling.judging.validation import (
    JudgmentRefused,
    off_scale,
    on_scale,
    scale_hint,
    unjudgeable_refused,
    unjudgeable_sent,
    unstorable_text,
    wrong_part,
)
from pooling.store.core import Store

BATCH_COLUMNS = ["round_id", "query_id", "doc_id", "position", "topic_title", "topic_description",
                 "topic_narrative", "doc_title", "doc_text", "grade", "note"]

SUBTOPIC_BATCH_COLUMNS = [*BATCH_COLUMNS[:3], "subtopic", "subtopic_text", *BATCH_COLUMNS[3:]]


def part_columns(rnd: Round) -> list[str]:
    """A batch's columns for a round judged on parts: the part's id and text after the unit's
    id, named after the part (`subtopic`, `nugget`)."""
    part = rnd.item.part or "subtopic"
    return [*BATCH_COLUMNS[:3], part, f"{part}_text", *BATCH_COLUMNS[3:]]

_ITEMS_VIEW = "_batch_items"


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
    items = crowd_items(store, rnd, assessor_id) if rnd.crowd else assigned_items(
        store, round_id, assessor_id)
    done = effective_judgments(store, round_id, assessor_id=assessor_id, answers=True)
    mine = set(zip(done["query_id"].to_pylist(), done["doc_id"].to_pylist(), strict=True))
    if rnd.item.has_parts:  # a document is done when every subtopic has a grade
        per = effective_judgments(store, round_id, assessor_id=assessor_id, per_part=True)
        graded = set(zip(*(per[c].to_pylist() for c in ("query_id", "doc_id", "part")),
                         strict=True))
        mine = {(q, d) for q, d in mine
                if all((q, d, s) in graded for s in rnd.parts_of(q))}
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
    if rnd.item.unit_texts is not None:  # a unit that is not a document: its own texts
        for row in rows:
            shown = rnd.item.view(store, row["query_id"], row["doc_id"]) or (None, None)
            row["doc_title"], row["doc_text"] = shown
    columns = BATCH_COLUMNS
    if rnd.item.has_parts:
        columns = part_columns(rnd)
        part, part_text = columns[3], columns[4]
        rows = [{c: (n if c == part else t if c == part_text else row.get(c)) for c in columns}
                for row in rows for n, t in rnd.parts.get(row["query_id"], [])]
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        if path.suffix == ".jsonl":
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            writer.writerows({k: safe_cell(v) if isinstance(v, str) else v for k, v in row.items()}
                             for row in rows)
    tmp.replace(path)
    return len(rows)


# -- import -------------------------------------------------------------------------------


def crowd_items(store: Store, rnd: Round, assessor_id: str) -> pa.Table:
    """A worker's batch of a crowd round: per topic, what the crowd rule hands them now
    (`pooling.judging.queue.topic_queue`), gold mixed in; position is the order handed."""
    rows: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "position": []}
    for q in rnd.topics:
        pairs = topic_queue(store, rnd, assessor_id, q).next_pairs()
        rows["query_id"] += [q] * len(pairs)
        rows["doc_id"] += [d for _, d in pairs]
        rows["position"] += list(range(1, len(pairs) + 1))
    return pa.table(rows, schema=pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
                                            ("position", pa.int64())]))


def read_batch(path: str | Path, rnd: Round, assessor_id: str) -> BatchRows:
    """The graded rows of a batch file as judgments; rows left blank are skipped, and rows for
    another round, with a grade that is not an integer or off the round's scale, or with a note
    but no grade (it would be lost) are problems."""
    source = display_name(path)
    out = BatchRows([], [], [])
    file_sha = sha256_file(path)
    for line, row in _batch_rows(path, source, out.problems):
        grade_text = str(row.get("grade") if row.get("grade") is not None else "").strip()
        try:  # JSONL may say "unjudgeable": true, as the API does (and 1 is no boolean)
            flagged = unjudgeable_sent(row.get("unjudgeable"))
        except JudgmentRefused as exc:
            out.problems.append(Problem(source, line, str(exc)))
            continue
        if flagged:
            if grade_text and grade_text.lower() != UNJUDGEABLE:
                out.problems.append(Problem(source, line, "send a grade or unjudgeable, not both"))
                continue
            grade_text = UNJUDGEABLE
        if not grade_text:
            if str(row.get("note") or "").strip():  # never drop what a person typed
                out.problems.append(Problem(source, line, "a note without a grade: give the row a "
                                            "grade, or move the note to a graded row"))
            continue
        if row.get("round_id") not in (None, "", rnd.round_id):
            out.problems.append(Problem(source, line, f"row is for round {row['round_id']!r}, "
                                        f"not {rnd.round_id!r}"))
            continue
        kind, grade = "judge", None
        if grade_text.lower() == UNJUDGEABLE:  # "broken link / can't judge": no grade
            why = unjudgeable_refused(rnd)
            if why:
                out.problems.append(Problem(source, line, why))
                continue
            kind = UNJUDGEABLE
        else:
            try:
                grade = int(grade_text)
            except ValueError:
                out.problems.append(Problem(source, line, f"{scale_hint(rnd)}, found "
                                            f"{grade_text!r}"))
                continue
            if not on_scale(rnd, grade):
                out.problems.append(Problem(source, line, off_scale(rnd, grade)))
                continue
        q, d = str(row.get("query_id") or ""), str(row.get("doc_id") or "")
        note = (row.get("note") or None) and str(row.get("note"))
        sub = str(row.get(rnd.item.part or "subtopic") or "").strip() or None
        content = [file_sha, rnd.round_id, assessor_id, q, d, grade if kind == "judge" else kind,
                   note]
        # A plain round's ids are as they always were; a subtopic row's names its subtopic.
        sid = hashlib.sha256(json.dumps(content if sub is None else [*content, sub]).encode())
        j = Judgment(rnd.round_id, assessor_id, q, d, grade, kind=kind, note=note,
                     submission_id=f"batch-{sid.hexdigest()[:32]}", part=sub)
        why = unstorable_text(j) or wrong_part(rnd, q, sub)
        if why:
            out.problems.append(Problem(source, line, why))
            continue
        out.lines.append(line)
        out.judgments.append(j)
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
    with store.transaction():
        if batch.judgments:
            role = role_of(store, assessor_id)
            mine = load_assignments(store, rnd, assessor_id=None if role == "organiser" else assessor_id)
            for line, j in zip(batch.lines, batch.judgments, strict=True):
                if not mine.may_judge(assessor_id, role, j.query_id, j.doc_id):
                    problems.append(Problem(source, line, not_assigned(rnd, assessor_id, j.query_id,
                                                                       j.doc_id)))
        if problems:
            problems.sort(key=lambda p: p.line or 0)
            raise FormatError(problems, hint="Nothing was imported; fix these rows and import "
                              "again.")
        # Each row's id is derived from its content, so a stored id is the same judgment;
        # rows are numbered in file order, interleaving safely with the server's judgments.
        return counted(write(store.con, batch.judgments, as_table=True))


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
        log = ProblemLog(source)
        log.problems = problems  # one list: the reader's problems are the batch's
        for number, text in iter_lines(path, log):
            if not text.strip():
                continue
            try:
                row = loads_strict(text)
            except json.JSONDecodeError as exc:
                problems.append(Problem(source, number, f"not valid JSON: {exc.msg}"))
                continue
            except ValueError as exc:
                problems.append(Problem(source, number, f"{exc}"))
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
