"""CLEF topics: `<queries><query><id>151001</id><en>…</en><fr>…</fr>…</query></queries>`.

The CLEF labs (and CLEF eHealth) give one text field per language, named by its code. The
title is the chosen language's text (`language`, default `en`, else the first language of
the topic); the other languages go to `extra`. The `<topics><topic><identifier>…<title>…
<description>…<narrative>…` variant is read too. Ids are stripped of surrounding space.
"""

from __future__ import annotations

import re

import pyarrow as pa

from pooling.formats.common import ProblemLog, extra_json
from pooling.formats.schemas import TOPICS_SCHEMA
from pooling.formats.source import PathLike, display_name
from pooling.formats.xml_tree import Node, parse_xml, unique_rows

HINT = ("Expected CLEF topics like <queries><query><id>151001</id><en>…</en><fr>…</fr></query>"
        "</queries>, each id unique; choose the language of the title with --language.")
LANGUAGE = re.compile(r"^[a-z]{2}(?:[-_][A-Za-z]{2})?$")
IDS = ("id", "identifier", "num", "qid")
FIELDS = {"title": ("title", "query"), "description": ("description", "desc"),
          "narrative": ("narrative", "narr")}


def read_clef_topics(path: PathLike, language: str | None = None) -> pa.Table:
    """CLEF XML topics as TOPICS_SCHEMA (see the module docstring); every problem at its line."""
    log = ProblemLog(display_name(path))
    root = parse_xml(path, HINT)
    records = [n for n in root.children if n.tag.lower() in ("query", "topic")]
    if not records:
        log.add(root.line, f"<{root.tag}> holds no <query> or <topic> element")
    rows = unique_rows(records, lambda record: _row(record, language, log), log, "topic id")
    log.raise_if_any(HINT)
    return pa.Table.from_pylist(rows, schema=TOPICS_SCHEMA)


def _row(record: Node, language: str | None, log: ProblemLog) -> dict | None:
    ident = record.find(*IDS)
    query_id = ident.text if ident is not None else record.attrs.get("id", "").strip()
    if not query_id:
        log.add(record.line, f"<{record.tag}> has no <id>")
        return None
    languages = {c.tag: c.text for c in record.children if LANGUAGE.match(c.tag) and c.tag.lower() not in IDS}
    named = {k: (record.find(*tags).text if record.find(*tags) is not None else "") for k, tags in FIELDS.items()}
    extra: dict[str, str] = {}
    if languages:
        chosen = language or ("en" if "en" in languages else next(iter(languages)))
        title = languages.get(chosen, "")
        if not title:
            have = ", ".join(k for k, v in languages.items() if v) or "none"
            log.add(record.line, f"topic {query_id} has no text in language {chosen!r} (it has: {have})")
            return None
        extra = {k: v for k, v in languages.items() if k != chosen and v}
        extra["language"] = chosen
    else:
        title = named["title"]
        if not title:
            log.add(record.line, f"topic {query_id} has no title or language field")
            return None
    known = set(IDS) | {t for tags in FIELDS.values() for t in tags} | set(languages)
    extra.update({c.tag: c.text for c in record.children if c.tag.lower() not in known and c.text})
    return {"query_id": query_id, "title": title, "description": named["description"] or None,
            "narrative": named["narrative"] or None, "extra": extra_json(extra)}
