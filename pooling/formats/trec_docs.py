"""TREC SGML documents: `<DOC> <DOCNO> X </DOCNO> ... <TEXT> ... </TEXT> </DOC>`, streamed.

Mapping of a document's elements (tag names are case-insensitive):
- `<DOCNO>` → doc_id (exactly one, required).
- title ← the first of `<HEADLINE>`, `<TITLE>`, `<HEAD>`, `<HL>`, `<TI>` found anywhere in the
  document (FBIS nests `<TI>` inside `<HEADER>`), inner tags removed.
- url ← `<URL>`, else the first `http(s)://` token of `<DOCHDR>` (web collections).
- With `<TEXT>` elements: text ← their content and any loose text, in order; every other
  top-level element (`<DATE>`, `<BYLINE>`, ...) → extra as `{"date": "..."}`.
- Without `<TEXT>` (web pages): text ← all content but DOCNO/DOCHDR/URL; no extra.
Inner tags (`<P>`, HTML) are removed, `<!-- comments -->` dropped, entities left as they are;
whitespace is collapsed and paragraph breaks are kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pyarrow as pa

from pooling.formats.common import (
    DEFAULT_BATCH_SIZE,
    TEXT_LINE_BYTES,
    FirstSeen,
    ProblemLog,
    batches_of,
    collapse,
    extra_json,
    iter_lines,
    paragraphs,
    table_of,
)
from pooling.formats.schemas import DOCUMENTS_SCHEMA
from pooling.formats.source import PathLike, display_name

DOC_TAG = re.compile(r"<(/?)DOC(?:\s[^<>]*)?>", re.IGNORECASE)
OPEN_TAG = re.compile(r"<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>")
CLOSE_TAG = re.compile(r"</([A-Za-z][\w.:-]*)\s*>")
ANY_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
BLOCK_TAG = re.compile(r"</?(?:P|BR|DIV|LI|TR|H\d)(?:\s[^<>]*)?/?>", re.IGNORECASE)
URL_TOKEN = re.compile(r"https?://\S+")

TITLE_TAGS = ("HEADLINE", "TITLE", "HEAD", "HL", "TI")
META_TAGS = {"DOCNO", "DOCHDR", "URL"}
# Elements whose closing tag must exist; an unclosed one is a problem, not loose text.
MUST_CLOSE = {"DOCNO", "TEXT", "DOCHDR", "URL", *TITLE_TAGS}

HINT = (
    "Expected TREC documents like `<DOC> <DOCNO> id </DOCNO> <TEXT> ... </TEXT> </DOC>`, "
    "each <DOC> closed and each DOCNO unique."
)


def iter_trec_documents(
    path: PathLike, batch_size: int = DEFAULT_BATCH_SIZE
) -> Iterator[pa.RecordBatch]:
    """Stream a TREC SGML collection as record batches of DOCUMENTS_SCHEMA, in file order.

    Valid documents are yielded as they are read; when the input had problems, a `FormatError`
    listing all of them is raised after the last batch (load inside a transaction).
    """
    log = ProblemLog(display_name(path))
    yield from batches_of(_document_rows(path, log), DOCUMENTS_SCHEMA, batch_size)
    log.raise_if_any(HINT)


def read_trec_documents(path: PathLike) -> pa.Table:
    """Read a whole TREC SGML collection into a table of DOCUMENTS_SCHEMA."""
    return table_of(iter_trec_documents(path), DOCUMENTS_SCHEMA)


_LINE_COST = 64  # bytes a held line costs beyond its text (a Python string and its pointer)


def _document_rows(path: PathLike, log: ProblemLog) -> Iterator[dict[str, str | None]]:
    """Split the stream at <DOC>/</DOC> and turn each document's body into a row."""
    seen = FirstSeen(log, "DOCNO")
    body: list[str] | None = None  # lines of the open document
    start = 0  # line of its <DOC>
    stray = False  # inside a run of text outside documents (reported once per run)
    any_text = False
    any_doc = False
    size = 0  # memory of the open document so far (its characters, and per line _LINE_COST)

    def finish() -> Iterator[dict[str, str | None]]:
        row = _parse_body("\n".join(body or []), start, log)
        if (row is not None and log.good_id(start, row["doc_id"], "doc_id")
                and seen.is_new(row["doc_id"], start)):
            yield row

    for number, line in iter_lines(path, log):
        any_text = any_text or bool(line.strip())
        pos = 0
        for match in DOC_TAG.finditer(line):
            closing = match.group(1) == "/"
            segment = line[pos : match.start()]
            pos = match.end()
            if body is not None:
                body.append(segment)
                if not closing:
                    log.add(start, f"<DOC> is not closed before the next <DOC> at line {number}")
                yield from finish()
                body = None
            else:
                stray = _check_outside(segment, number, stray, log)
                if closing:
                    log.add(number, "</DOC> without an opening <DOC>")
            if not closing:
                body, start, stray, any_doc, size = [], number, False, True, 0
        if body is not None:
            body.append(line[pos:])
            size += len(line) + _LINE_COST
            if size > TEXT_LINE_BYTES:  # a document is held whole: bound its memory
                log.add(start, f"<DOC> runs past {TEXT_LINE_BYTES >> 20} MiB (or a million lines) without </DOC> "
                        f"(at line {number}): is this the right file?")
                log.raise_if_any(HINT)
        else:
            stray = _check_outside(line[pos:], number, stray, log)

    if body is not None:
        log.add(start, "<DOC> is not closed: expected </DOC> before the end of the file")
        yield from finish()
    if not any_text:
        log.add(None, "file is empty: expected <DOC> ... </DOC> documents")
    elif not any_doc:
        log.add(None, "no <DOC> found: expected TREC SGML documents")


def _check_outside(text: str, line: int, stray: bool, log: ProblemLog) -> bool:
    """Report the first line of each run of non-blank text outside documents."""
    if not text.strip():
        return stray
    if not stray:
        log.add(line, f"text outside <DOC> ... </DOC>: {text.strip()[:40]!r}")
    return True


def _parse_body(body: str, start: int, log: ProblemLog) -> dict[str, str | None] | None:
    """The row of one document's body (the text between <DOC> and </DOC>), or None."""
    # Comments become blank lines so that offsets still map onto line numbers.
    body = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), body)

    def line_of(offset: int) -> int:
        return start + body.count("\n", 0, offset)

    elements, loose = _top_level(body, line_of, log)
    docnos = [(line_of(off), content) for name, content, off in elements if name == "DOCNO"]
    if not docnos:
        log.add(start, "document has no <DOCNO>")
        return None
    for line, _ in docnos[1:]:
        log.add(line, f"second <DOCNO> in the document (first at line {docnos[0][0]})")
    doc_id = collapse(docnos[0][1])
    if not doc_id or len(doc_id.split()) != 1:
        log.add(docnos[0][0], f"<DOCNO> should hold one id, found {doc_id!r}")
        return None

    has_text = any(name == "TEXT" for name, _, _ in elements)
    title_element = _title(body)
    text_parts: list[tuple[int, str]] = list(loose)
    extra: dict[str, str] = {}
    url: str | None = None
    for name, content, offset in elements:
        if name == "URL":
            url = collapse(_strip_tags(content)) or url
        elif name == "DOCHDR":
            found = URL_TOKEN.search(content)
            url = url or (found.group(0) if found else None)
        elif name == "DOCNO":
            continue
        elif not has_text or name == "TEXT":
            text_parts.append((offset, content))
        elif title_element is None or title_element[0] != offset:
            value = paragraphs(_strip_tags(content))
            key = name.lower()
            extra[key] = f"{extra[key]}\n\n{value}" if key in extra else value
    text = paragraphs("\n\n".join(_strip_tags(c) for _, c in sorted(text_parts)))
    title = collapse(_strip_tags(title_element[1])) if title_element else None
    return {
        "doc_id": doc_id,
        "title": title or None,
        "text": text,
        "url": url,
        "extra": extra_json({k: v for k, v in extra.items() if v}),
    }


def _top_level(
    body: str, line_of: Callable[[int], int], log: ProblemLog
) -> tuple[list[tuple[str, str, int]], list[tuple[int, str]]]:
    """Top-level elements as (TAG, content, offset) and loose text as (offset, text).

    A tag with no closing tag anywhere in the body is loose text (HTML's <p>, <br>), except
    the tags in MUST_CLOSE, which are problems.
    """
    closers = {m.group(1).upper() for m in CLOSE_TAG.finditer(body)}
    elements: list[tuple[str, str, int]] = []
    loose: list[tuple[int, str]] = []
    pos = 0
    while True:
        match = OPEN_TAG.search(body, pos)
        if match is None:
            loose.append((pos, body[pos:]))
            return elements, loose
        name = match.group(1).upper()
        close = None
        if name in closers:
            close = re.compile(rf"</{re.escape(match.group(1))}\s*>", re.IGNORECASE).search(
                body, match.end()
            )
        if close is None:
            if name in MUST_CLOSE:
                log.add(line_of(match.start()), f"<{match.group(1)}> is not closed")
            loose.append((pos, body[pos : match.end()]))
            pos = match.end()
            continue
        loose.append((pos, body[pos : match.start()]))
        elements.append((name, body[match.end() : close.start()], match.start()))
        pos = close.end()


def _title(body: str) -> tuple[int, str] | None:
    """(offset, content) of the first title element, trying TITLE_TAGS in order."""
    for tag in TITLE_TAGS:
        found = re.search(rf"<{tag}(?:\s[^<>]*)?>(.*?)</{tag}\s*>", body, re.IGNORECASE | re.DOTALL)
        if found:
            return found.start(), found.group(1)
    return None


def _strip_tags(text: str) -> str:
    """Text without markup; block tags (<P>, <BR>, ...) become paragraph breaks."""
    return ANY_TAG.sub(" ", BLOCK_TAG.sub("\n\n", text))
