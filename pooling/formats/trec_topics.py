"""TREC SGML topics: `<top> <num> Number: 303 <title> ... <desc> ... <narr> ... </top>`.

The ad hoc / Robust style leaves field tags unclosed (a field runs to the next tag); closed
tags (`</title>`) are tolerated too. Labels such as "Number:", "Topic:", "Description:" and
"Narrative:" are stripped. Tags other than num/title/desc/narr (e.g. TREC-1's `<dom>`, `<con>`)
go to `extra` as `{"dom": "..."}`, minus a leading one-word label like "Domain:".
Whitespace is collapsed to single spaces; blank-line paragraph breaks are kept as a blank line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa

from pooling.formats.common import FirstSeen, ProblemLog, extra_json, iter_lines, paragraphs
from pooling.formats.schemas import TOPICS_SCHEMA
from pooling.formats.source import PathLike, display_name

TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9_-]*)\s*>")

# Field tag -> label that may start its text (stripped, case-insensitive).
KNOWN_LABELS = {
    "num": re.compile(r"^\s*number\s*:", re.IGNORECASE),
    "title": re.compile(r"^\s*(?:topic|title)\s*:", re.IGNORECASE),
    "desc": re.compile(r"^\s*description\s*:", re.IGNORECASE),
    "narr": re.compile(r"^\s*narrative\s*:", re.IGNORECASE),
}
# Labels of other tags: one word, maybe "(s)", then a colon ("Domain:", "Concept(s):").
OTHER_LABEL = re.compile(r"^\s*[A-Za-z]+(?:\(s\))?\s*:(?=\s)")

HINT = (
    "Expected TREC topics like `<top> <num> Number: 301 <title> ... <desc> Description: ... "
    "<narr> Narrative: ... </top>`, one <num> and one <title> per topic, each number unique."
)


@dataclass
class _OpenTopic:
    """A topic being read: where it started and the text of each field so far."""

    line: int
    fields: dict[str, tuple[int, list[str]]] = field(default_factory=dict)
    open_tag: str | None = None
    parts: list[str] | None = None  # where text goes now; None between fields


def read_trec_topics(path: PathLike) -> pa.Table:
    """Read a TREC SGML topic file into a table of TOPICS_SCHEMA, in file order.

    Raises `FormatError` listing every problem (missing or duplicate <num>, missing <title>,
    unclosed <top>, text outside a topic, ...) with its line.
    """
    log = ProblemLog(display_name(path))
    seen = FirstSeen(log, "topic number")
    rows: list[dict[str, str | None]] = []
    topic: _OpenTopic | None = None
    anything = False

    def finish(t: _OpenTopic) -> None:
        row = _topic_row(t, log)
        if (row is not None and log.good_id(t.line, row["query_id"], "query_id")
                and seen.is_new(row["query_id"], t.line)):
            rows.append(row)

    for number, line in iter_lines(path, log):
        anything = anything or bool(line.strip())
        pos = 0
        for match in TAG.finditer(line):
            _add_text(topic, line[pos : match.start()], number, log)
            pos = match.end()
            closing, name = match.group(1) == "/", match.group(2).lower()
            if name == "top":
                if topic is not None:
                    if not closing:
                        log.add(
                            topic.line,
                            f"<top> is not closed before the next <top> at line {number}",
                        )
                    finish(topic)
                    topic = None
                elif closing:
                    log.add(number, "</top> without an opening <top>")
                if not closing:
                    topic = _OpenTopic(number)
            elif topic is None:
                log.add(number, f"<{match.group(1)}{name}> outside <top> ... </top>")
            elif closing:
                if name == topic.open_tag and topic.parts is not None:
                    topic.open_tag, topic.parts = None, None
                else:
                    log.add(number, f"</{name}> does not close an open <{name}>")
            else:
                _open_field(topic, name, number, log)
        _add_text(topic, line[pos:] + "\n", number, log)

    if topic is not None:
        log.add(topic.line, "<top> is not closed: expected </top> before the end of the file")
        finish(topic)
    if not anything:
        log.add(None, "file is empty: expected at least one <top> ... </top>")
    elif not rows and not log.problems:
        log.add(None, "no <top> found: expected TREC topics")
    log.raise_if_any(HINT)
    return pa.Table.from_pylist(rows, schema=TOPICS_SCHEMA)


def _add_text(topic: _OpenTopic | None, text: str, line: int, log: ProblemLog) -> None:
    if topic is not None and topic.parts is not None:
        topic.parts.append(text)
    elif text.strip():
        where = "outside <top> ... </top>" if topic is None else "outside any field of the topic"
        log.add(line, f"text {where}: {text.strip()[:40]!r}")


def _open_field(topic: _OpenTopic, name: str, line: int, log: ProblemLog) -> None:
    topic.open_tag, topic.parts = name, []
    if name in topic.fields:
        first = topic.fields[name][0]
        log.add(line, f"second <{name}> in the topic (first at line {first}); it is ignored")
    else:
        topic.fields[name] = (line, topic.parts)


def _field_text(name: str, parts: list[str]) -> str:
    """The text of a field without its label, whitespace collapsed, paragraphs kept."""
    text = "".join(parts)
    label = KNOWN_LABELS.get(name, OTHER_LABEL)
    text = label.sub("", text, count=1)
    return paragraphs(text)


def _topic_row(topic: _OpenTopic, log: ProblemLog) -> dict[str, str | None] | None:
    """The row of a finished topic, or None (after logging why) when it has no usable number."""
    texts = {name: _field_text(name, parts) for name, (_, parts) in topic.fields.items()}
    query_id = texts.pop("num", None)
    title = texts.pop("title", None)
    ok = True
    if query_id is None:
        log.add(topic.line, "topic has no <num>")
        ok = False
    elif not query_id or len(query_id.split()) != 1:
        found = f"found {query_id!r}" if query_id else "it is empty"
        log.add(topic.fields["num"][0], f"<num> should hold one topic number, {found}")
        ok = False
    if not title:
        shown = f"topic {query_id}" if ok else "topic"
        log.add(topic.fields.get("title", (topic.line,))[0], f"{shown} has no <title> text")
        ok = False
    if not ok:
        return None
    return {
        "query_id": query_id,
        "title": title,
        "description": texts.pop("desc", None) or None,
        "narrative": texts.pop("narr", None) or None,
        "extra": extra_json(texts),
    }
