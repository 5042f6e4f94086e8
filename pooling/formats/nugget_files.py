"""Nugget files: nuggetizer's JSONL of nuggets and of assignments, and the iKAT nugget JSON.

- **Nuggets** (nuggetizer's `create_nuggets.py` output, one topic a line): `qid`, `query`,
  `nuggets` as `[{"text", "importance"}]`, most important first. Importance is `vital` or
  `okay`.
- **Assignments** (its `assign_nuggets.py` output, one answer a line): `qid`, `query`,
  `run_id` (else the file's name stands for it, as nuggetizer names a run after its answer
  file), `answer_text`, `response_length` and `nuggets` as `[{"text", "importance",
  "assignment"}]`, assignment `support`, `partial_support` or `not_support` (a model's
  `failed` counts as none, as nuggetizer counts it).
- **iKAT nuggets** (TREC iKAT 2024's gold nuggets): one JSON object `{topic: {"[i]":
  {"text", "relevance"}}}`, `relevance` the grade (1-4) of the passage the nugget came from.
  A nugget bank needs an importance: `importance_from_grade` maps the grade by a rule the
  organiser states; the default (`IKAT_DEFAULT_VITAL`) calls nuggets of passages graded 3 or
  4 vital and the others okay, as a passage graded highly holds the answer's core.

Every problem is reported at file:line, and nothing is returned until the file reads cleanly.
NUGGETS_SCHEMA: query_id, query (or null), position (0-based, the order given), text,
importance, grade (the iKAT passage grade, or null), line. `AssignmentFile.answers` holds
every answer (run_id, query_id, line), those assigned no nugget included, and
`AssignmentFile.nuggets` (ASSIGNED_SCHEMA) each assigned nugget: its answer's row, its
position, text and labels as given, and as canonical values (`vital`, `grade` 2/1/0).

A clean assignments file is parsed by Arrow's JSON reader in one pass; anything it cannot
read, or any value out of place, sends the file through the line reader, which explains
every problem at file:line (the answers' lines are known only on that path).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem
from pooling.formats.common import (
    FirstSeen,
    KeyLines,
    ProblemLog,
    json_id,
    json_records,
    json_type,
    loads_strict,
    missing_fields,
    open_binary,
)
from pooling.formats.ids import any_breaks_rule, shown
from pooling.formats.source import PathLike, display_name

IMPORTANCE = ("vital", "okay")
ASSIGNMENTS = ("support", "partial_support", "not_support", "failed")
IKAT_DEFAULT_VITAL = 3  # passage grades at or above this make a vital nugget
MAX_JSON_BYTES = 1 << 30

NUGGETS_SCHEMA = pa.schema([
    ("query_id", pa.string()), ("query", pa.string()), ("position", pa.int32()),
    ("text", pa.string()), ("importance", pa.string()), ("grade", pa.int32()),
    ("line", pa.int64()),
])
ASSIGNED_SCHEMA = pa.schema([
    ("answer", pa.int64()), ("position", pa.int32()), ("text", pa.string()),
    ("importance", pa.string()), ("assignment", pa.string()), ("vital", pa.bool_()),
    ("grade", pa.int8()),
])
# Support grades as the judging scale stores them; a model's `failed` counts as none.
FULL_SUPPORT, PARTIAL_SUPPORT, NO_SUPPORT = 2, 1, 0
SUPPORT_GRADES = {"not_support": NO_SUPPORT, "partial_support": PARTIAL_SUPPORT,
                  "support": FULL_SUPPORT, "failed": NO_SUPPORT}
ANSWER_KEYS_SCHEMA = pa.schema([("run_id", pa.string()), ("query_id", pa.string()),
                                ("line", pa.int64())])

NUGGETS_HINT = ('Expected one JSON object a line, like {"qid": "2024-105741", "query": "...", '
                '"nuggets": [{"text": "...", "importance": "vital"}]}, each qid once.')
ASSIGNED_HINT = ('Expected one JSON object a line, like {"qid": "2024-105741", "run_id": "r1", '
                 '"nuggets": [{"text": "...", "importance": "vital", "assignment": "support"}]}, '
                 "each run answering a qid once.")
IKAT_HINT = 'Expected one JSON object {"topic id": {"[1]": {"text": "...", "relevance": "2"}, ...}}.'


@dataclass(frozen=True)
class NuggetFile:
    """One nugget file read: its nuggets (NUGGETS_SCHEMA) and every topic it names, those
    it gives no nugget included (an answer to one scores 0, and counts)."""

    source: str
    nuggets: pa.Table
    topics: list[str]


@dataclass(frozen=True)
class AssignmentFile:
    """One assignments file read: each answer, and the nuggets assigned to it."""

    source: str
    answers: pa.Table  # ANSWER_KEYS_SCHEMA
    nuggets: pa.Table  # ASSIGNED_SCHEMA


def _nugget_list(log: ProblemLog, line: int, value: Any, fields: Mapping[str, tuple[str, ...]]
                 ) -> list[dict[str, str]] | None:
    """The `nuggets` list of a record: each an object with a `text` string and each of
    `fields` one of its allowed values; None with problems noted."""
    if not isinstance(value, list):
        log.add(line, f"'nuggets' must be a list, found {json_type(value)}")
        return None
    out, ok = [], True
    for i, nugget in enumerate(value):
        if not isinstance(nugget, dict) or not isinstance(nugget.get("text"), str):
            log.add(line, f"nuggets[{i}] must be an object with a 'text' string")
            ok = False
            continue
        row = {"text": nugget["text"]}
        for name, allowed in fields.items():
            got = nugget.get(name)
            if got not in allowed:
                found = "nothing" if name not in nugget else json.dumps(got)
                log.add(line, f"nuggets[{i}].{name} must be one of {', '.join(allowed)}, found "
                        f"{found}")
                ok = False
            row[name] = got
        out.append(row)
    return out if ok else None


def read_nuggets(path: PathLike) -> NuggetFile:
    """A nuggetizer nuggets JSONL file, nuggets in file order (module doc)."""
    source = display_name(path)
    log = ProblemLog(source)
    seen = FirstSeen(log, "qid")
    rows: list[dict[str, Any]] = []
    topics: list[str] = []
    for line, _, record in json_records(path, log):
        if missing_fields(log, line, record, ("qid", "nuggets")):
            continue
        query_id = json_id(log, line, record["qid"], "qid")
        query = record.get("query")
        if query is not None and not isinstance(query, str):
            log.add(line, f"'query' must be a string, found {json_type(query)}")
        nuggets = _nugget_list(log, line, record["nuggets"], {"importance": IMPORTANCE})
        if query_id is None or not seen.is_new(query_id, line, shown(query_id)) or nuggets is None:
            continue
        topics.append(query_id)
        for position, nugget in enumerate(nuggets):
            rows.append({"query_id": query_id, "query": query if isinstance(query, str) else None,
                         "position": position, "text": nugget["text"],
                         "importance": nugget["importance"], "grade": None, "line": line})
    log.raise_if_any(NUGGETS_HINT)
    if not topics:
        raise FormatError([Problem(source, None, "holds no topic")], hint=NUGGETS_HINT)
    return NuggetFile(source, pa.Table.from_pylist(rows, schema=NUGGETS_SCHEMA), sorted(topics))


def read_assignments(path: PathLike, run_id: str | None = None) -> AssignmentFile:
    """A nuggetizer assignments JSONL file (module doc); `run_id` names the run of records
    without one (default: the file's name without its extensions)."""
    source = display_name(path)
    default_run = run_id or _stem(path)
    fast = _fast_assignments(path, source, default_run)
    if fast is not None:
        return fast
    log = ProblemLog(source)
    seen = FirstSeen(log, "answer of")
    answers: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for line, _, record in json_records(path, log):
        if missing_fields(log, line, record, ("qid", "nuggets")):
            continue
        query_id = json_id(log, line, record["qid"], "qid")
        run = json_id(log, line, record["run_id"], "run_id") if "run_id" in record else default_run
        nuggets = _nugget_list(log, line, record["nuggets"],
                               {"importance": (*IMPORTANCE, "failed"), "assignment": ASSIGNMENTS})
        if query_id is None or run is None:
            continue
        if not seen.is_new((run, query_id), line, f"run {shown(run)} for qid {shown(query_id)}"):
            continue
        if nuggets is None:
            continue
        for position, nugget in enumerate(nuggets):
            rows.append({"answer": len(answers), "position": position, "text": nugget["text"],
                         "importance": nugget["importance"], "assignment": nugget["assignment"],
                         "vital": nugget["importance"] == "vital",
                         "grade": SUPPORT_GRADES[nugget["assignment"]]})
        answers.append({"run_id": run, "query_id": query_id, "line": line})
    log.raise_if_any(ASSIGNED_HINT)
    if not answers:
        raise FormatError([Problem(source, None, "holds no answer")], hint=ASSIGNED_HINT)
    return AssignmentFile(source, pa.Table.from_pylist(answers, schema=ANSWER_KEYS_SCHEMA),
                          pa.Table.from_pylist(rows, schema=ASSIGNED_SCHEMA))


_ARROW_SCHEMA = pa.schema([
    ("qid", pa.string()), ("run_id", pa.string()),
    ("nuggets", pa.list_(pa.struct([("text", pa.string()), ("importance", pa.string()),
                                     ("assignment", pa.string())]))),
])
FAST_BYTES = 1 << 28  # larger files stream through the line reader instead


def _fast_assignments(path: PathLike, source: str, default_run: str) -> AssignmentFile | None:
    """The file read by Arrow's JSON reader when it is clean, else None (module doc)."""
    import pyarrow.json as pj

    with open_binary(path) as fh:
        data = fh.read(FAST_BYTES + 1)
    if len(data) > FAST_BYTES or not data.strip():
        return None
    options = pj.ParseOptions(explicit_schema=_ARROW_SCHEMA, unexpected_field_behavior="ignore")
    try:
        table = pj.read_json(pa.BufferReader(data), parse_options=options)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows == 0 or table.column("qid").null_count or table.column("nuggets").null_count:
        return None
    run = table.column("run_id")
    if run.null_count == len(run):
        run = pa.chunked_array([pa.array([default_run] * table.num_rows, pa.string())])
    elif run.null_count:
        return None
    answers = pa.table({"run_id": run.combine_chunks(), "query_id": table.column("qid").combine_chunks(),
                        "line": pa.nulls(table.num_rows, pa.int64())})
    if _ids_or_keys_bad(answers):
        return None
    nuggets = table.column("nuggets").combine_chunks()
    flat = pc.list_flatten(nuggets)
    lengths = pc.list_value_length(nuggets).to_numpy(zero_copy_only=False)
    text, importance, assignment = (flat.field(i) for i in range(3))
    if text.null_count or not pc.all(pc.is_in(importance, pa.array([*IMPORTANCE, "failed"]))).as_py() \
            or not pc.all(pc.is_in(assignment, pa.array(ASSIGNMENTS))).as_py():
        return None if len(flat) else _empty_nuggets(source, answers)
    answer = np.repeat(np.arange(table.num_rows, dtype=np.int64), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows = pa.table({
        "answer": answer, "position": (np.arange(len(flat)) - starts).astype(np.int32),
        "text": text, "importance": importance, "assignment": assignment,
        "vital": pc.equal(importance, "vital"),
        "grade": pa.array(support_grades(assignment), pa.int8()),
    }, schema=ASSIGNED_SCHEMA)
    return AssignmentFile(source, answers.cast(ANSWER_KEYS_SCHEMA), rows)


def _empty_nuggets(source: str, answers: pa.Table) -> AssignmentFile:
    return AssignmentFile(source, answers.cast(ANSWER_KEYS_SCHEMA), ASSIGNED_SCHEMA.empty_table())


def _ids_or_keys_bad(answers: pa.Table) -> bool:
    """Whether an id breaks the id rule or a run answers a topic twice (the line reader
    then says where)."""
    if any(any_breaks_rule(answers.column(name)) for name in ("run_id", "query_id")):
        return True
    keys = pc.binary_join_element_wise(answers.column("run_id"), answers.column("query_id"), "\x00")
    return len(pc.unique(keys)) != len(keys)


def support_grades(labels: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """nuggetizer's assignment labels as support grades (2, 1, 0), vectorised."""
    names = list(SUPPORT_GRADES)
    codes = pc.index_in(labels, value_set=pa.array(names)).to_numpy(zero_copy_only=False)
    return np.array([SUPPORT_GRADES[n] for n in names], dtype=np.int8)[codes]


def _stem(path: PathLike) -> str:
    name = Path(str(path)).name
    for suffix in (".gz", ".bz2", ".xz", ".zst", ".jsonl", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name or "run"


_IKAT_KEY = re.compile(r"^\[(\d+)\]$")


def importance_from_grade(grade: int, vital_from: int = IKAT_DEFAULT_VITAL) -> str:
    """An iKAT nugget's importance from its passage's grade: vital at or above `vital_from`."""
    return "vital" if grade >= vital_from else "okay"


def read_ikat_nuggets(path: PathLike, vital_from: int = IKAT_DEFAULT_VITAL) -> NuggetFile:
    """The iKAT nugget JSON: each topic's nuggets in the order of their numbers, each vital
    when its passage's grade is `vital_from` or more (module doc)."""
    source = display_name(path)
    log = ProblemLog(source)
    with open_binary(path) as fh:
        data = fh.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise FormatError([Problem(source, None, f"is over {MAX_JSON_BYTES >> 20:,} MiB of JSON "
                                   "in one object: is this the right file?")])
    try:
        text = data.decode("utf-8")
        document = loads_strict(text)
    except UnicodeDecodeError as exc:
        raise FormatError([Problem(source, None, f"not valid UTF-8 at byte {exc.start}")]) from None
    except ValueError as exc:
        raise FormatError([Problem(source, getattr(exc, "lineno", None),
                                   f"not JSON: {getattr(exc, 'msg', exc)}")], hint=IKAT_HINT) from None
    if not isinstance(document, dict):
        raise FormatError([Problem(source, 1, f"expected an object of topics, found "
                                   f"{json_type(document)}")], hint=IKAT_HINT)
    lines = KeyLines(text)
    rows: list[dict[str, Any]] = []
    for topic, nuggets in document.items():
        tline = lines.find(topic)
        query_id = json_id(log, tline, topic, "topic id")
        if not isinstance(nuggets, dict):
            log.add(tline, f"topic {shown(topic)}: expected an object of numbered nuggets, found "
                    f"{json_type(nuggets)}")
            continue
        numbered = []
        for key, nugget in nuggets.items():
            nline = lines.find(key)
            match = _IKAT_KEY.match(key)
            if match is None:
                log.add(nline, f"topic {shown(topic)}: nugget key {shown(key)} is not a number in "
                        "brackets like \"[1]\"")
                continue
            if not isinstance(nugget, dict) or not isinstance(nugget.get("text"), str):
                log.add(nline, f"topic {shown(topic)} nugget {key}: expected an object with a "
                        "'text' string and a 'relevance' grade")
                continue
            grade = nugget.get("relevance")
            try:
                grade_value = int(str(grade))
            except ValueError:
                log.add(nline, f"topic {shown(topic)} nugget {key}: 'relevance' must be a grade "
                        f"(a whole number), found {json.dumps(grade)}")
                continue
            numbered.append((int(match.group(1)), nugget["text"], grade_value, nline))
        if query_id is None:
            continue
        for position, (_, nugget_text, grade_value, nline) in enumerate(sorted(numbered)):
            rows.append({"query_id": query_id, "query": None, "position": position,
                         "text": nugget_text, "importance": importance_from_grade(grade_value, vital_from),
                         "grade": grade_value, "line": nline})
    log.raise_if_any(IKAT_HINT)
    topics = sorted(str(k) for k in document)
    if not topics:
        raise FormatError([Problem(source, None, "holds no topic")], hint=IKAT_HINT)
    return NuggetFile(source, pa.Table.from_pylist(rows, schema=NUGGETS_SCHEMA), topics)


def write_nuggets(out: io.TextIOBase, nuggets: pa.Table, queries: Mapping[str, str | None]) -> None:
    """nuggetizer's nuggets JSONL: a line per topic (in the table's order), its nuggets in
    their order. `nuggets` needs query_id, text, importance (ordered by topic, position)."""
    grouped: dict[str, list[dict[str, str]]] = {}
    for q, t, imp in zip(nuggets.column("query_id").to_pylist(), nuggets.column("text").to_pylist(),
                         nuggets.column("importance").to_pylist(), strict=True):
        grouped.setdefault(q, []).append({"text": t, "importance": imp})
    for q, items in grouped.items():
        out.write(json.dumps({"qid": q, "query": queries.get(q) or "", "nuggets": items},
                             ensure_ascii=False) + "\n")
