"""NTCIR topics: `<TOPIC><NUM>…</NUM><TITLE>…</TITLE><DESC>…</DESC><NARR>…</NARR></TOPIC>`.

Tag names in any case, an optional wrapping root (`<TOPICS>`), attributes ignored (`<TITLE
CASE="b">`); NARR may hold nested elements (`<BACK>`, `<RELE>`, `<TERM>`) whose text is kept.
Other fields (`<LANG>`, `<CONC>`, `<RDOC>`, ...) go to `extra`.
"""

from __future__ import annotations

import pyarrow as pa

from pooling.formats.common import ProblemLog, extra_json
from pooling.formats.schemas import TOPICS_SCHEMA
from pooling.formats.source import PathLike, display_name
from pooling.formats.xml_tree import Node, parse_xml, unique_rows

HINT = "Expected NTCIR topics like <TOPIC><NUM>0001</NUM><TITLE>…</TITLE><DESC>…</DESC><NARR>…</NARR></TOPIC>."
USED = {"num", "title", "desc", "narr"}


def read_ntcir_topics(path: PathLike) -> pa.Table:
    """NTCIR topics as TOPICS_SCHEMA; every problem at its line."""
    log = ProblemLog(display_name(path))
    root = parse_xml(path, HINT)
    records = [root] if root.tag.lower() == "topic" else [c for c in root.children if c.tag.lower() == "topic"]
    if not records:
        log.add(root.line, f"<{root.tag}> holds no <TOPIC> element")
    rows = unique_rows(records, lambda record: _row(record, log), log, "topic number")
    log.raise_if_any(HINT)
    return pa.Table.from_pylist(rows, schema=TOPICS_SCHEMA)


def _row(record: Node, log: ProblemLog) -> dict | None:
    num, title = record.find("num"), record.find("title")
    if num is None or not num.text:
        log.add(record.line, "<TOPIC> has no <NUM>")
        return None
    if title is None or not title.text:
        log.add(record.line, f"topic {num.text} has no <TITLE> text")
        return None
    desc, narr = record.find("desc"), record.find("narr")
    extra = {c.tag.lower(): c.text for c in record.children if c.tag.lower() not in USED and c.text}
    return {"query_id": num.text, "title": title.text, "description": desc.text if desc is not None else None,
            "narrative": narr.text if narr is not None else None, "extra": extra_json(extra)}
