"""The one rule for ids and names: topics, documents, subtopics, runs, rounds, qrels versions,
gold versions and assessors.

An id is text a person can read back and type: not empty, no whitespace at either end (a
space typed by mistake would make a second name that looks like the first), and no control
character (NUL, \\x01, DEL, ...: a C tool such as trec_eval cuts a line at a NUL, and a
terminal shows none of them). A name that names a file in a release (a run, a qrels version,
a round) is at most `MAX_NAME_BYTES` bytes of UTF-8, so that file can be written on every
file system (most allow 255 bytes, and a release adds a suffix such as `.sampled.qrels`).
Whitespace inside a name is allowed (round "week 2"); ids read from whitespace-separated
files cannot hold any anyway.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import PoolingError, Problem

MAX_NAME_BYTES = 200
# C0 controls, DEL and C1 controls (the Unicode category Cc).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_RE2 = r"[\x00-\x1f\x7f-\x9f]"


class IdError(PoolingError):
    """An id or a name that breaks the id rule (see the module docstring)."""


def shown(value: str, limit: int = 60) -> str:
    """`value` quoted for a message, cut to `limit` characters (an id may be a megabyte)."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + f"... ({len(value):,} characters)"


def id_problem(value: str, what: str, *, names_file: bool = False) -> str | None:
    """Why `value` cannot be `what` (e.g. "run id", "--name"), or None when it can.

    names_file: the id names a file in a release, so its length is bounded too.
    """
    if not value:
        return f"{what} is empty; give a name"
    if value != value.strip():
        return (f"{what} {shown(value)} starts or ends with whitespace; give it without "
                f"(e.g. {shown(value.strip())})")
    bad = _CONTROL.search(value)
    if bad is not None:
        return (f"{what} {shown(value)} holds the control character U+{ord(bad.group()):04X} at "
                f"character {bad.start() + 1}; ids are printable text")
    if names_file and (size := len(value.encode("utf-8", "surrogatepass"))) > MAX_NAME_BYTES:
        return (f"{what} {shown(value)} is {size:,} bytes long; a name is at most "
                f"{MAX_NAME_BYTES} bytes (it names a file in a release): give a shorter one")
    return None


def check_id(value: str, what: str, *, names_file: bool = False) -> str:
    """`value` when it follows the id rule, else `IdError` saying why (see `id_problem`)."""
    why = id_problem(value, what, names_file=names_file)
    if why is not None:
        raise IdError(why)
    return value


def any_breaks_rule(values: pa.Array | pa.ChunkedArray) -> bool:
    """Whether any id of `values` breaks the id rule (vectorised; `id_problem` says why)."""
    return bool(pc.any(pc.equal(pc.utf8_length(values), 0)).as_py()
                or not pc.all(pc.equal(pc.utf8_trim_whitespace(values), values)).as_py()
                or pc.any(pc.match_substring_regex(values, _CONTROL_RE2)).as_py())


def id_column_problems(table: pa.Table, columns: list[str], source: str,
                       line_column: str = "line", limit: int = 20) -> list[Problem]:
    """Problems at file:line for ids of `columns` holding a control character (vectorised:
    a whole column is checked in one pass; ids read from whitespace-separated text are never
    empty and hold no whitespace)."""
    problems: list[Problem] = []
    for column in columns:
        values = table.column(column)
        bad = pc.match_substring_regex(values, _CONTROL_RE2)
        if not pc.any(bad).as_py():
            continue
        rows = table.filter(bad).select([column, line_column]).slice(0, limit).to_pylist()
        problems += [Problem(source, r[line_column], id_problem(r[column], column) or column)
                     for r in rows]
    return sorted(problems, key=lambda p: p.line or 0)[:limit]
