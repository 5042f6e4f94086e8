"""Topic id maps: the same topic written two ways (`151` in runs, `151001` in the qrels).

A map file has two whitespace- or tab-separated columns per line, the id as written and its
canonical id; blank lines and `#` comments are skipped. Ids not in the map are kept as they
are. Applying a map reports which written ids it changed, so the store can record it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem
from pooling.formats.source import PathLike, display_name, read_bytes, sha256_bytes

HINT = "A topic map has two columns a line: the topic id as written, then its canonical id."


@dataclass(frozen=True)
class TopicMap:
    """Written topic id -> canonical topic id, read from `source` (sha256 of its bytes)."""

    mapping: dict[str, str]
    source: str = "<map>"
    sha256: str | None = None

    def apply(self, table: pa.Table, column: str = "query_id") -> tuple[pa.Table, dict[str, str]]:
        """The table with `column` mapped, and the {written: canonical} pairs that were used."""
        if not self.mapping or table.num_rows == 0:
            return table, {}
        values = table[column]
        present = set(pc.unique(values).to_pylist())
        used = {w: c for w, c in self.mapping.items() if w in present and w != c}
        if not used:
            return table, {}
        written = pa.array(list(used), pa.string())
        canonical = pa.array(list(used.values()), pa.string())
        index = pc.index_in(values.cast(pa.string()), value_set=written)
        mapped = pc.if_else(pc.is_null(index), values.cast(pa.string()), pc.take(canonical, index))
        position = table.column_names.index(column)
        return table.set_column(position, column, mapped), used

    def record(self, used: dict[str, str]) -> dict[str, object]:
        """What the store keeps of an application: the map's file, checksum and used pairs."""
        return {"source": self.source, "sha256": self.sha256, "applied": dict(sorted(used.items()))}


@dataclass
class MappedCount:
    """How many ids a map changed over several inputs (for notes on the terminal)."""

    by_source: dict[str, dict[str, str]] = field(default_factory=dict)

    def add(self, source: str, used: dict[str, str]) -> None:
        if used:
            self.by_source.setdefault(source, {}).update(used)

    def notes(self) -> list[str]:
        return [
            f"{source}: topic map changed {len(used)} topic id(s), e.g. "
            + ", ".join(f"{w} -> {c}" for w, c in list(used.items())[:3])
            for source, used in self.by_source.items()
        ]


def read_topic_map(path: PathLike) -> TopicMap:
    """Read a two-column topic map; every malformed or contradictory line is reported."""
    source = display_name(path)
    data = read_bytes(path)
    problems: list[Problem] = []
    mapping: dict[str, str] = {}
    first_line: dict[str, int] = {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError([Problem(source, None, f"not UTF-8 text ({exc.reason})")], hint=HINT) from exc
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 2:
            problems.append(Problem(source, number, f"expected 2 columns (as written, canonical), found {len(fields)}"))
            continue
        written, canonical = fields
        if written in mapping and mapping[written] != canonical:
            problems.append(Problem(
                source, number,
                f"topic {written!r} is mapped to {canonical!r} here but to {mapping[written]!r} "
                f"at line {first_line[written]}",
            ))
            continue
        mapping.setdefault(written, canonical)
        first_line.setdefault(written, number)
    if problems:
        raise FormatError(problems, hint=HINT)
    if not mapping:
        raise FormatError([Problem(source, None, "no mapping lines found")], hint=HINT)
    return TopicMap(mapping, source, sha256_bytes(data))


def details_json(**parts: object) -> str | None:
    """The JSON text of an import's details (None when there is nothing to record)."""
    kept = {k: v for k, v in parts.items() if v}
    return json.dumps(kept, sort_keys=True) if kept else None
