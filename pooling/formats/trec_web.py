"""TREC Web / Session track topics: `<topic number="151" type="faceted"><query>…</query>
<description>…</description><subtopic number="1" type="inf">…</subtopic>…</topic>`.

query_id from the `number` attribute, title from `<query>`, description from
`<description>`; the topic's `type` and its subtopics (number, type, text) go to `extra`.
"""

from __future__ import annotations

import json

import pyarrow as pa

from pooling.formats.common import ProblemLog, extra_json
from pooling.formats.schemas import TOPICS_SCHEMA
from pooling.formats.source import PathLike, display_name
from pooling.formats.xml_tree import parse_xml

HINT = ('Expected TREC Web topics like <topic number="151" type="faceted"><query>…</query>'
        "<description>…</description><subtopic number=\"1\" type=\"inf\">…</subtopic></topic>.")


def read_trec_web_topics(path: PathLike) -> pa.Table:
    """TREC Web/Session XML topics as TOPICS_SCHEMA; every problem at its line."""
    log = ProblemLog(display_name(path))
    root = parse_xml(path, HINT)
    records = [root] if root.tag == "topic" else [c for c in root.children if c.tag == "topic"]
    if not records:
        log.add(root.line, f"<{root.tag}> holds no <topic> element")
    rows, seen = [], {}
    for record in records:
        number = record.attrs.get("number", "").strip()
        query = record.find("query")
        if not number:
            log.add(record.line, '<topic> has no number="…" attribute')
            continue
        if query is None or not query.text:
            log.add(record.line, f"topic {number} has no <query> text")
            continue
        if number in seen:
            log.add(record.line, f"duplicate topic number {number!r} (first at line {seen[number]})")
            continue
        seen[number] = record.line
        description = record.find("description")
        subtopics = [{"number": s.attrs.get("number"), "type": s.attrs.get("type"), "text": s.text}
                     for s in record.children if s.tag == "subtopic"]
        extra: dict = {k: v for k, v in record.attrs.items() if k != "number"}
        if subtopics:
            extra["subtopics"] = subtopics
        rows.append({"query_id": number, "title": query.text,
                     "description": description.text if description is not None else None,
                     "narrative": None, "extra": extra_json(extra)})
    log.raise_if_any(HINT)
    return pa.Table.from_pylist(rows, schema=TOPICS_SCHEMA)


def recorded_subtopics(extra: str | None) -> list[tuple[str, str]]:
    """A stored topic's subtopics as (number, text), from its `extra` JSON where this reader
    puts them (a subtopic without a number is numbered by its place); [] when it has none."""
    data = json.loads(extra or "{}")
    subs = data.get("subtopics") if isinstance(data, dict) else None
    return [(str(s.get("number") or i), str(s.get("text") or ""))
            for i, s in enumerate(subs or [], start=1) if isinstance(s, dict)]
