"""A small element tree with line numbers, for the XML topic formats' file:line errors.

`xml.etree` drops line numbers; expat keeps them. Tags are kept as written; `text` is the
element's whole text content (its children's included), whitespace collapsed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from pooling.errors import FormatError, Problem
from pooling.formats.common import open_binary
from pooling.formats.source import PathLike, display_name

MAX_XML_BYTES = 1 << 24  # an XML topics file (decompressed) is at most this


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list[Node] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)  # own text and children's, in order

    @property
    def text(self) -> str:
        return " ".join("".join(self.parts).split())

    def find(self, *names: str) -> Node | None:
        """The first child whose tag (case-insensitive) is one of `names`."""
        wanted = {n.lower() for n in names}
        return next((c for c in self.children if c.tag.lower() in wanted), None)


def parse_xml(path: PathLike, hint: str) -> Node:
    """The document element of an XML file; malformed XML is a FormatError at its line."""
    source = display_name(path)
    stack: list[Node] = []
    root: list[Node] = []
    parser = expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        node = Node(tag, dict(attrs), parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(node)
        else:
            root.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        node = stack.pop()
        if stack:
            stack[-1].parts.append(" " + "".join(node.parts) + " ")

    def data(text: str) -> None:
        if stack:
            stack[-1].parts.append(text)

    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler = data
    try:
        with open_binary(path) as fh:  # fed piece by piece: a compressed bomb is never whole
            read = 0
            while chunk := fh.read(1 << 20):
                read += len(chunk)
                if read > MAX_XML_BYTES:
                    raise FormatError([Problem(source, parser.CurrentLineNumber, (
                        f"the file runs past {MAX_XML_BYTES >> 20} MiB, and a topics file is "
                        "never that big: is this the right file?"))], hint=hint)
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise FormatError([Problem(source, exc.lineno, f"not well-formed XML: {expat.errors.messages[exc.code]}")],
                          hint=hint) from exc
    if not root:
        raise FormatError([Problem(source, None, "no XML element found")], hint=hint)
    return root[0]


def unique_rows(records: Iterable[Node], make_row: Callable[[Node], dict[str, Any] | None],
                log: Any, what: str) -> list[dict[str, Any]]:
    """The rows `make_row` gives (None: a problem it logged), each query_id once; a repeat is
    a problem naming both lines."""
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for record in records:
        row = make_row(record)
        if row is None:
            continue
        first = seen.setdefault(row["query_id"], record.line)
        if first != record.line:
            log.add(record.line, f"duplicate {what} {row['query_id']!r} (first at line {first})")
            continue
        rows.append(row)
    return rows
