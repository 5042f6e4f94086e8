"""Shared plumbing of the readers: streaming lines, collecting problems, building Arrow tables.

Readers decode line by line (not through a text stream) so that bad UTF-8 becomes a problem at
its line, like any other, instead of a bare `UnicodeDecodeError` with no location.
"""

from __future__ import annotations

import bisect
import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, BinaryIO

import pyarrow as pa

from pooling.errors import FormatError, Problem
from pooling.formats.ids import id_problem
from pooling.formats.source import PathLike, display_name, open_decompressed, open_input

DEFAULT_BATCH_SIZE = 10_000
MAX_PROBLEMS = 1000  # an input with more is the wrong file: reading stops there
TEXT_LINE_BYTES = 1 << 26  # a line of JSONL, TSV or SGML text (a whole document) is at most this
PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")


class ProblemLog:
    """Collects every problem of one input so that they can be reported together."""

    def __init__(self, source: str):
        self.source = source
        self.problems: list[Problem] = []

    def add(self, line: int | None, message: str) -> None:
        """Note a problem; past MAX_PROBLEMS, stop reading by raising them all (a file of
        millions of bad lines must not hold millions of problems)."""
        self.problems.append(Problem(self.source, line, message))
        if len(self.problems) >= MAX_PROBLEMS:
            self.problems.append(Problem(self.source, line, f"reading stopped here after "
                                         f"{MAX_PROBLEMS:,} problems: is this the right file?"))
            self.raise_if_any()

    def good_id(self, line: int | None, value: str, what: str) -> bool:
        """Whether `value` follows the id rule (`pooling.formats.ids`); if not, a problem."""
        why = id_problem(value, what)
        if why is not None:
            self.add(line, why)
        return why is None

    def raise_if_any(self, hint: str | None = None) -> None:
        """Raise one `FormatError` listing every problem so far in line order, if there is any."""
        if self.problems:
            in_order = sorted(self.problems, key=lambda p: -1 if p.line is None else p.line)
            raise FormatError(in_order, hint=hint)


class FirstSeen:
    """Remembers the line where each id was first seen, to report duplicates naming both lines."""

    def __init__(self, log: ProblemLog, what: str):
        self.log = log
        self.what = what
        self.lines: dict[Any, int] = {}

    def is_new(self, key: Any, line: int, shown: str | None = None) -> bool:
        """True the first time `key` is seen; later times add a duplicate problem and give False."""
        first = self.lines.setdefault(key, line)
        if first == line:
            return True
        self.log.add(line, f"duplicate {self.what} {shown or repr(key)} (first at line {first})")
        return False


@contextmanager
def open_binary(path: PathLike) -> Iterator[BinaryIO]:
    """A binary stream over a file (or stdin for `-`), decompressed when it starts with a
    compression format's magic bytes (see `pooling.formats.source`)."""
    if str(path) == "-":
        raw: BinaryIO = sys.stdin.buffer
        owned = False
    else:
        raw = open_input(path)
        owned = True
    try:
        yield open_decompressed(raw, display_name(path))
    finally:
        if owned:
            raw.close()


def iter_lines(path: PathLike, log: ProblemLog,
               limit: int = TEXT_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """Each line of a file as (1-based line number, text without the line ending).

    Lines that are not valid UTF-8 become problems and are skipped. A line longer than
    `limit` bytes stops the reading at once, at its line (it is never held whole).
    """
    with open_binary(path) as fh:
        number = 0
        while raw := fh.readline(limit + 1):
            number += 1
            if len(raw) > limit and not raw.endswith(b"\n"):
                log.add(number, f"line runs past {limit >> 20} MiB without a line end: is this "
                        "the right file?")
                log.raise_if_any()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                log.add(number, utf8_error(raw, exc))
                continue
            yield number, text.rstrip("\r\n")


def utf8_error(raw: bytes, exc: UnicodeDecodeError) -> str:
    """The problem of a line that is not UTF-8: the byte and its column."""
    return (f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); save the "
            "file as UTF-8")


def json_object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` for `json.loads` refusing a key given twice (the standard reader
    keeps the last one silently, dropping what was typed first)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} is given twice; give it once")
        out[key] = value
    return out


def loads_strict(text: str | bytes) -> Any:
    """`json.loads` refusing duplicate keys: a `ValueError` (a `json.JSONDecodeError` for
    text that is not JSON) says what is wrong. JSON nested deeper than Python's parser
    recurses (a line of a million `[`, built to crash a reader) is a `ValueError` too."""
    try:
        return json.loads(text, object_pairs_hook=json_object_pairs)
    except RecursionError:
        raise ValueError("arrays and objects are nested too deeply to read; no real record "
                         "nests so deep") from None


def json_type(value: Any) -> str:
    """What a JSON value is, as a message names it ("a string", "null", "a list", ...)."""
    if value is None:
        return "null"
    return {bool: "true/false", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def json_id(log: ProblemLog, line: int | None, value: Any, what: str) -> str | None:
    """`value` as an id (a JSON string or integer, following the id rule), or None with the
    problem noted at `line`."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        log.add(line, f"{what} must be a string, found {json_type(value)}")
        return None
    return str(value) if log.good_id(line, str(value), what) else None


def json_records(path: PathLike, log: ProblemLog) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line, its text, its object) for each non-blank line of a JSON Lines file; a line that
    is not a JSON object (or is nested too deep, or repeats a key) is a problem, skipped."""
    for line, text in iter_lines(path, log):
        if not text.strip():
            continue
        try:
            record = loads_strict(text)
        except ValueError as exc:
            log.add(line, f"not a JSON object: {exc}")
            continue
        if not isinstance(record, dict):
            log.add(line, f"expected a JSON object, found {json_type(record)}")
            continue
        yield line, text, record


class KeyLines:
    """The line on which each key of a whole-file JSON document is written, found in the
    order the keys are read (a message names the line a person would open)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.cursor = 0

    def find(self, key: str, fallback: int = 1) -> int:
        """The line of `key`'s next occurrence as a JSON string after the last one found
        (`fallback` when it is not there)."""
        needle = json.dumps(key, ensure_ascii=False)
        at = self.text.find(needle, self.cursor)
        if at < 0:
            return fallback
        self.cursor = at + len(needle)
        return bisect.bisect_right(self.starts, at)


def missing_fields(log: ProblemLog, line: int, record: Mapping[str, Any],
                   fields: Sequence[str]) -> bool:
    """Whether `record` lacks any of `fields` (noted as one problem naming them all)."""
    missing = [name for name in fields if name not in record]
    if missing:
        log.add(line, f"missing field {', '.join(repr(m) for m in missing)}")
    return bool(missing)


def extra_json(fields: Mapping[str, Any]) -> str | None:
    """The `extra` column's value: the further fields as a JSON object text, or null when none."""
    if not fields:
        return None
    return json.dumps(dict(fields), ensure_ascii=False, separators=(",", ":"))


def collapse(text: str) -> str:
    """Whitespace runs (newlines included) become one space; ends are stripped."""
    return " ".join(text.split())


def paragraphs(text: str) -> str:
    """Like `collapse`, but blank-line paragraph breaks are kept as one blank line."""
    parts = (collapse(p) for p in PARAGRAPH_BREAK.split(text))
    return "\n\n".join(p for p in parts if p)


def batches_of(
    rows: Iterable[Mapping[str, Any]], schema: pa.Schema, batch_size: int = DEFAULT_BATCH_SIZE
) -> Iterator[pa.RecordBatch]:
    """Group row dicts (keyed by the schema's column names) into record batches of that schema."""
    names = schema.names
    buffer: list[Mapping[str, Any]] = []
    for row in rows:
        buffer.append(row)
        if len(buffer) >= batch_size:
            yield _batch(buffer, names, schema)
            buffer = []
    if buffer:
        yield _batch(buffer, names, schema)


def _batch(rows: list[Mapping[str, Any]], names: list[str], schema: pa.Schema) -> pa.RecordBatch:
    columns = {name: [row.get(name) for row in rows] for name in names}
    return pa.RecordBatch.from_pydict(columns, schema=schema)


def table_of(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> pa.Table:
    """Collect record batches into one table (an empty table of `schema` when there are none)."""
    return pa.Table.from_batches(list(batches), schema=schema)
