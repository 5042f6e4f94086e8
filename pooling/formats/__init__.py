"""Input formats: a registry of readers keyed by (kind, format name), and format sniffing.

Every reader turns one file into a table of the kind's canonical schema (pooling.formats.schemas).
`read_table(kind, path, format=None)` picks the reader: by the given format name, else by the
file's extension (`.gz`, `.bz2`, `.xz`, `.zst` ignored), else by its first bytes. Add a reader with `register(...)`
(or `READERS[(kind, name)] = Reader(...)`); registration order is sniffing priority.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from pooling.errors import FormatError, Problem
from pooling.formats import (
    clef_xml,
    jsonl,
    letor,
    ntcir,
    smart,
    trec_docs,
    trec_qrels,
    trec_topics,
    trec_web,
    tsv,
)
from pooling.formats.source import (
    DamagedInputError,
    PathLike,
    display_name,
    open_decompressed,
    open_input,
    sniff_decompressed,
    strip_compression_suffix,
)

SNIFF_BYTES = 1 << 16


@dataclass(frozen=True)
class Reader:
    """One input format of one kind of table.

    read:        path → canonical table of the kind.
    extensions:  file name endings (lower case, after removing a compression ending such as
                 `.gz`) that mean this format.
    sniff:       True when the first ~64 KiB of text look like this format.
    iter_batches: optional streaming variant (path, batch_size) → record batches.
    options:     keyword options `read` takes (e.g. a language, a field mapping).
    """

    kind: str
    name: str
    description: str
    read: Callable[[PathLike], pa.Table]
    extensions: tuple[str, ...] = ()
    sniff: Callable[[str], bool] | None = None
    iter_batches: Callable[[PathLike, int], Iterator[pa.RecordBatch]] | None = None
    options: tuple[str, ...] = ()


READERS: dict[tuple[str, str], Reader] = {}


def register(reader: Reader) -> Reader:
    READERS[(reader.kind, reader.name)] = reader
    return reader


def _first_line(head: str) -> str:
    return next((line for line in head.splitlines() if line.strip()), "").strip()


def _looks_jsonl(head: str) -> bool:
    return head.lstrip().startswith("{")


def _looks_tsv(head: str) -> bool:
    first = _first_line(head)
    return "\t" in first and not first.startswith(("<", "{"))


def _looks_smart(head: str) -> bool:
    return re.match(r"\.I\s+\S+$", _first_line(head)) is not None


def _looks_letor(head: str) -> bool:
    return re.match(r"\S+\s+qid:\S", _first_line(head)) is not None


SNIFF_LINES = 100  # data lines a qrels file is told by


def _qrels_field_counts(head: str) -> list[int]:
    """Fields of the first data lines (blank and `#` lines skipped; a line cut off at the end
    of the head is left out)."""
    lines = head.splitlines()
    if len(head.encode()) >= SNIFF_BYTES and not head.endswith("\n"):
        lines = lines[:-1]
    counts = []
    for line in lines:
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            counts.append(len(fields))
            if len(counts) == SNIFF_LINES:
                break
    return counts


def _looks_smart_qrels(head: str) -> bool:
    """A SMART relevance file: `query doc [grade]`, every line two or three fields."""
    counts = _qrels_field_counts(head)
    return bool(counts) and all(n in (2, 3) for n in counts)


def _looks_trec_qrels(head: str) -> bool:
    """TREC qrels, `query_id iter doc_id relevance`: anything with data not SMART-shaped (a
    damaged TREC file is then read as TREC, and its bad lines named)."""
    return bool(_qrels_field_counts(head)) and not _looks_smart_qrels(head)


register(Reader(
    "topics", "trec", "TREC SGML topics: <top> <num> <title> <desc> <narr> </top>",
    trec_topics.read_trec_topics, (".sgml", ".sgm", ".xml", ".trec"),
    lambda head: re.search(r"<top>", head, re.IGNORECASE) is not None,
))  # fmt: skip
register(Reader(
    "topics", "clef", "CLEF XML: <queries><query><id>…</id><en>…</en><fr>…</fr></query></queries> "
    "(title in the chosen --language, the others in extra)",
    clef_xml.read_clef_topics, (".xml",),
    lambda head: re.search(r"<queries[\s>]|<query>\s*<id>|<topic>\s*<identifier>", head) is not None,
    options=("language",),
))  # fmt: skip
register(Reader(
    "topics", "ntcir", "NTCIR XML: <TOPIC><NUM>…</NUM><TITLE>…</TITLE><DESC>…</DESC><NARR>…</NARR>",
    ntcir.read_ntcir_topics, (".xml",),
    lambda head: re.search(r"<TOPIC[\s>]", head) is not None and re.search(r"<NUM>", head, re.I) is not None,
))  # fmt: skip
register(Reader(
    "topics", "trec-web", 'TREC Web/Session XML: <topic number="…" type="…"><query>…<description>…'
    "<subtopic>… (type and subtopics in extra)",
    trec_web.read_trec_web_topics, (".xml",),
    lambda head: re.search(r"<topic\s+number=", head) is not None,
))  # fmt: skip
register(Reader(
    "topics", "jsonl", "JSON Lines: query_id|qid|id|_id, title|query|text, description, narrative "
    "(or any field names with --field canonical=key)",
    jsonl.read_jsonl_topics, (".jsonl", ".ndjson"), _looks_jsonl, options=("fields",),
))  # fmt: skip
register(Reader(
    "topics", "tsv", "query_id<TAB>text, no header",
    tsv.read_tsv_topics, (".tsv",), _looks_tsv,
))  # fmt: skip
register(Reader(
    "topics", "smart", "SMART queries (.I id, .W text): numbered 1..N by position, as SMART "
    "relevance files count them; the .I id kept as extra smart_id",
    smart.read_smart_topics, (".qry",), _looks_smart,
))  # fmt: skip
register(Reader(
    "documents", "trec", "TREC SGML: <DOC> <DOCNO> ... <TEXT> ... </DOC>",
    trec_docs.read_trec_documents, (".sgml", ".sgm", ".xml", ".trec"),
    lambda head: re.search(r"<DOC(?:\s[^<>]*)?>", head, re.IGNORECASE) is not None,
    trec_docs.iter_trec_documents,
))  # fmt: skip
register(Reader(
    "documents", "jsonl", "JSON Lines: doc_id|docno|docid|id|_id, title, text|contents|body, url",
    jsonl.read_jsonl_documents, (".jsonl", ".ndjson"), _looks_jsonl, jsonl.iter_jsonl_documents,
))  # fmt: skip
register(Reader(
    "documents", "tsv", "doc_id<TAB>text or doc_id<TAB>title<TAB>text, no header",
    tsv.read_tsv_documents, (".tsv",), _looks_tsv, tsv.iter_tsv_documents,
))  # fmt: skip
register(Reader(
    "documents", "smart", "SMART records: .I id, .T title, .A authors, .B source, .W text",
    smart.read_smart_documents, (".all",), _looks_smart, smart.iter_smart_documents,
))  # fmt: skip
register(Reader(
    "qrels", "letor", "LETOR/SVMlight: label qid:Q 1:v 2:v ... # docid = D (labels as grades)",
    lambda path: letor.read_letor(path).qrels, (".letor", ".svm", ".svmlight"), _looks_letor,
))  # fmt: skip
register(Reader(
    "qrels", "trec", "TREC qrels: query_id iter doc_id relevance",
    trec_qrels.read_trec_qrels, (), _looks_trec_qrels,
))  # fmt: skip
register(Reader(
    "qrels", "smart", "SMART relevance file: query doc grade (or query doc), as Cranfield's "
    "cranqrel; --grades cranfield (default), binary or as-is",
    smart.read_smart_qrels, (), _looks_smart_qrels, options=("grades",),
))  # fmt: skip


def formats_of(kind: str) -> list[str]:
    """The registered format names of a kind, in sniffing order."""
    return [name for (k, name) in READERS if k == kind]


def reader_for(kind: str, path: PathLike, format: str | None = None) -> Reader:
    """The reader for a file: the named format, else the one its extension or content shows."""
    source = display_name(path)
    known = formats_of(kind)
    if format is not None:
        if (kind, format) not in READERS:
            raise FormatError(
                [Problem(source, None, f"unknown {kind} format {format!r}")],
                hint=f"Use one of: {', '.join(known) or 'none registered'}.",
            )
        return READERS[(kind, format)]
    candidates = [READERS[(kind, name)] for name in known]
    suffix = _suffix(path)
    by_extension = [r for r in candidates if suffix in r.extensions]
    if len(by_extension) == 1:
        return by_extension[0]
    head = _head(path)
    if not head.strip():
        raise FormatError([Problem(source, None, "file is empty")], hint=f"Expected {kind}.")
    for reader in by_extension or candidates:
        if reader.sniff is not None and reader.sniff(head):
            return reader
    raise FormatError(
        [
            Problem(
                source, None, f"cannot tell the {kind} format from the file name or its first lines"
            )
        ],
        hint=f"Name the format: one of {', '.join(known)}.",
    )


def read_table(kind: str, path: PathLike, format: str | None = None, **options: object) -> pa.Table:
    """Read a file of `kind` into its canonical table (see `reader_for` for the choice);
    `options` go to readers that take them (options set to None are not passed)."""
    reader = reader_for(kind, path, format)
    given = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(given) - set(reader.options))
    if unknown:
        takes = ", ".join(reader.options) or "none"
        raise FormatError(
            [Problem(display_name(path), None,
                     f"the {reader.name} {kind} format takes no option {', '.join(unknown)} (it takes: {takes})")],
            hint="Drop the option, or name the format it is for with --format.",
        )
    return reader.read(path, **given)


def read_topics(path: PathLike, format: str | None = None, **options: object) -> pa.Table:
    """Topics as TOPICS_SCHEMA: query_id, title, description, narrative, extra (JSON text).

    Options: language (clef), fields (jsonl: {canonical column: the file's key})."""
    return read_table("topics", path, format, **options)


@dataclass(frozen=True)
class QrelsReading:
    """Qrels read from a file: the table (query_id, doc_id, relevance[, line]), the format it
    was read as, and the SMART grade mapping used (None for other formats)."""

    table: pa.Table
    format: str
    grades: str | None = None


def read_qrels(path: PathLike, format: str | None = None, grades: str | None = None) -> QrelsReading:
    """Qrels from a TREC, SMART or LETOR file, the format told from the content unless given.

    grades: the SMART grade mapping (cranfield by default, binary or as-is; see
    `pooling.formats.smart.read_smart_qrels`); refused for the other formats. A TREC reading
    that fails on lines of two or three fields, the format not named, says how to read the
    file as SMART.
    """
    reader = reader_for("qrels", path, format)
    if reader.name != "smart":
        if grades is not None:
            raise FormatError(
                [Problem(display_name(path), None, f"--grades {grades} maps the grades of a SMART "
                         f"relevance file, and this file is read as {reader.name} qrels")],
                hint="Drop --grades, or read the file as SMART with --format smart.")
        try:
            return QrelsReading(reader.read(path), reader.name)
        except FormatError as exc:
            if format is None and reader.name == "trec" and _short_lines(exc):
                raise _advised(exc, "The format was told from the first lines: if this is a "
                               "SMART relevance file (query doc grade), import it with "
                               "--format smart.") from None
            raise
    mapping = grades or "cranfield"
    try:
        return QrelsReading(reader.read(path, mapping), "smart", mapping)  # type: ignore[call-arg]
    except FormatError as exc:
        advice = []
        if isinstance(exc, DamagedInputError):  # the file, not its format: one line says so
            raise
        if format is None:
            advice.append("The format was told from the first lines (two or three fields "
                          "each): if this is TREC qrels, name it with --format trec.")
        if grades is None:
            advice.append("Grades are read as Cranfield's (1 best .. 4, -1 not relevant); "
                          "--grades binary or --grades as-is read other grades.")
        if not advice:
            raise
        raise _advised(exc, " ".join(advice)) from None


def _advised(exc: FormatError, advice: str) -> FormatError:
    """The same problems, with advice after the reader's own hint."""
    hint = f"{exc.hint.rstrip('.')}. {advice}" if exc.hint else advice
    return FormatError(exc.problems, hint=hint)


def _short_lines(exc: FormatError) -> bool:
    """Whether a TREC qrels reading failed on lines of two or three fields (SMART's shape)."""
    return any(re.match(r"expected 4 fields .*, found [23]$", p.message) for p in exc.problems)


def read_documents(path: PathLike, format: str | None = None) -> pa.Table:
    """Documents as DOCUMENTS_SCHEMA: doc_id, title, text, url, extra (JSON text)."""
    return read_table("documents", path, format)


def iter_documents(
    path: PathLike, format: str | None = None, batch_size: int = 10_000
) -> Iterator[pa.RecordBatch]:
    """Documents as record batches of DOCUMENTS_SCHEMA, for collections too big for memory.

    A `FormatError` listing all problems is raised after the last batch: load in a transaction.
    """
    reader = reader_for("documents", path, format)
    if reader.iter_batches is None:
        yield from reader.read(path).to_batches(batch_size)
    else:
        yield from reader.iter_batches(path, batch_size)


def _suffix(path: PathLike) -> str:
    return Path(strip_compression_suffix(Path(str(path)).name.lower())).suffix


def _head(path: PathLike) -> str:
    """The first ~64 KiB of a file as text (decompressed; stdin is peeked, not consumed).

    A compressed file is decompressed until that much text came out (a bzip2 block can hold
    900 KiB), so a damaged one fails here already, with its own error."""
    if str(path) == "-":
        raw = sys.stdin.buffer.peek(SNIFF_BYTES)[:SNIFF_BYTES]
        return sniff_decompressed(raw, SNIFF_BYTES).decode("utf-8", errors="replace")
    with open_input(path) as fh:
        raw = open_decompressed(fh, display_name(path)).read(SNIFF_BYTES)
    return raw.decode("utf-8", errors="replace")


__all__ = [
    "READERS",
    "Reader",
    "formats_of",
    "iter_documents",
    "QrelsReading",
    "read_documents",
    "read_qrels",
    "read_table",
    "read_topics",
    "reader_for",
    "register",
]
