"""Answer runs: generated answers with their sentences and citations, read into two tables.

Four forms are read, each to the same canonical tables (`ANSWERS_SCHEMA`, `SENTENCES_SCHEMA`):

- `rag24`: the TREC 2024 RAG track's JSONL. A line is one answer: `run_id`, `topic_id`,
  `topic` (the question), `references` (the segment ids the answer may cite),
  `response_length` (words), and `answer`, a list of sentences `{"text", "citations"}`
  where each citation is an index into `references`.
- `rag25`: the 2025 variant, where a citation is a segment id itself. The fields may also
  sit under a `metadata` object (with `narrative_id` / `narrative` for the topic). A
  segment cited but absent from `references` is refused; without `references`, the cited
  segments in first-cited order are the references.
- `json`: plain responses as one JSON object `{topic: {run: text}}` (the iKAT files).
- `tsv`: plain responses as `topic<TAB>run<TAB>text` lines.

A plain response has no sentences of its own: `pooling.formats.sentences` splits it by its
stated rule, and it cites nothing. Each answer keeps its input as given (`raw`: the JSON
line, or the response text), so it is written back in the form it came in
(`write_answers`). Every problem of a file is reported at file:line and nothing is returned
until the whole file reads cleanly.

ANSWERS_SCHEMA: run_id, query_id, topic (text or null), response_length (null when not
given), reference_ids (list of segment ids, ranked as given), line (of the answer in its
file), raw. SENTENCES_SCHEMA: run_id, query_id, sentence (0-based), text, citations
(segment ids), cited (indexes into reference_ids, as the 2024 form numbers them).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from pooling.errors import FormatError, Problem
from pooling.formats.common import (
    FirstSeen,
    KeyLines,
    ProblemLog,
    iter_lines,
    json_id,
    json_records,
    json_type,
    loads_strict,
    open_binary,
)
from pooling.formats.ids import shown
from pooling.formats.sentences import split_sentences
from pooling.formats.source import PathLike, display_name

ANSWER_FORMATS = ("rag24", "rag25", "json", "tsv")

ANSWERS_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("query_id", pa.string()), ("topic", pa.string()),
    ("response_length", pa.int64()), ("reference_ids", pa.list_(pa.string())),
    ("line", pa.int64()), ("raw", pa.string()),
])
SENTENCES_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("query_id", pa.string()), ("sentence", pa.int32()),
    ("text", pa.string()), ("citations", pa.list_(pa.string())),
    ("cited", pa.list_(pa.int32())),
])

RAG_HINT = ('Expected one JSON object a line, like {"run_id": "r1", "topic_id": "2024-105741", '
            '"topic": "...", "references": ["seg1", "seg2"], "response_length": 12, '
            '"answer": [{"text": "...", "citations": [0, 1]}]}, each run answering a topic once.')
JSON_HINT = 'Expected one JSON object {"topic id": {"run id": "response text", ...}, ...}.'
TSV_HINT = "Expected lines 'topic<TAB>run<TAB>response text', each run answering a topic once."
MAX_JSON_BYTES = 1 << 30  # a whole-file JSON of responses is read at once: at most this
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class AnswerFile:
    """One answer file read: its form, its answers and their sentences (module doc)."""

    source: str
    format: str
    answers: pa.Table
    sentences: pa.Table

    @property
    def run_ids(self) -> list[str]:
        """The runs the file answers for, in first-seen order."""
        return list(dict.fromkeys(self.answers.column("run_id").to_pylist()))


def sniff_format(path: PathLike) -> str:
    """The form of an answer file from its start: a first line that is a JSON object with an
    answer's fields (`run_id`, `topic_id`, `answer`, ...) is `rag24`/`rag25` (told apart by
    its citations), any other `{` an object of topics (`json`), anything else `tsv`."""
    with open_binary(path) as fh:
        head = fh.read(1 << 16)
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if not text.startswith("{"):
        return "tsv"
    first = text.split("\n", 1)[0]
    try:
        record = json.loads(first)
    except ValueError:
        return "json"
    if isinstance(record, dict) and _RAG_KEYS & set(record):
        return "rag25" if _cites_ids(record) else "rag24"
    return "json"


_RAG_KEYS = {"run_id", "topic_id", "narrative_id", "answer", "references", "metadata"}


def _cites_ids(record: Mapping[str, Any]) -> bool:
    answer = record.get("answer")
    if not isinstance(answer, list):
        return False
    return any(isinstance(c, str) for s in answer if isinstance(s, dict)
               for c in (s.get("citations") or []) if isinstance(s.get("citations"), list))


def read_answers(path: PathLike, format: str | None = None) -> AnswerFile:
    """Read an answer file of `format` (sniffed when None) into canonical tables, or raise
    `FormatError` listing its problems at file:line."""
    fmt = format or sniff_format(path)
    if fmt not in ANSWER_FORMATS:
        raise FormatError([Problem(display_name(path), None,
                                   f"unknown answer format {fmt!r}; use one of {', '.join(ANSWER_FORMATS)}")])
    source = display_name(path)
    rows = _Rows(source)
    if fmt in ("rag24", "rag25"):
        _read_rag(path, rows)
        hint = RAG_HINT
    elif fmt == "json":
        _read_json(path, rows)
        hint = JSON_HINT
    else:
        _read_tsv(path, rows)
        hint = TSV_HINT
    rows.log.raise_if_any(hint)
    if not rows.answers:
        raise FormatError([Problem(source, None, "holds no answer")], hint=hint)
    return AnswerFile(source, fmt, rows.answer_table(), rows.sentence_table())


class _Rows:
    """The answers and sentences of one file as they are read, and its problems."""

    def __init__(self, source: str):
        self.log = ProblemLog(source)
        self.seen = FirstSeen(self.log, "answer of")
        self.answers: list[dict[str, Any]] = []
        self.sentences: list[dict[str, Any]] = []

    def add(self, line: int, run_id: str, query_id: str, topic: str | None,
            length: int | None, references: list[str],
            sentences: list[tuple[str, list[str], list[int] | None]], raw: str) -> None:
        self.answers.append({"run_id": run_id, "query_id": query_id, "topic": topic,
                             "response_length": length, "reference_ids": references,
                             "line": line, "raw": raw})
        for n, (text, citations, cited) in enumerate(sentences):
            self.sentences.append({"run_id": run_id, "query_id": query_id, "sentence": n,
                                   "text": text, "citations": citations, "cited": cited})

    def first(self, line: int, run_id: str | None, query_id: str | None) -> bool:
        """Whether this is the first answer of the run for the topic (a repeat is a problem,
        whether or not the first one read cleanly)."""
        if run_id is None or query_id is None:
            return False
        return self.seen.is_new((run_id, query_id), line,
                                f"run {shown(run_id)} for topic {shown(query_id)}")

    def answer_table(self) -> pa.Table:
        return pa.Table.from_pylist(self.answers, schema=ANSWERS_SCHEMA)

    def sentence_table(self) -> pa.Table:
        return pa.Table.from_pylist(self.sentences, schema=SENTENCES_SCHEMA)


def _field(record: Mapping[str, Any], *names: str) -> Any:
    """The first of `names` present in `record` or its `metadata` object (the 2025 form)."""
    meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    for name in names:
        if name in record:
            return record[name]
        if name in meta:
            return meta[name]
    return None


def _read_rag(path: PathLike, rows: _Rows) -> None:
    log = rows.log
    for line, text, record in json_records(path, log):
        missing = [name for name, keys in (("run_id", ("run_id",)),
                                           ("topic_id", ("topic_id", "narrative_id")),
                                           ("answer", ("answer",)))
                   if _field(record, *keys) is None]
        if missing:
            log.add(line, f"missing field {', '.join(repr(m) for m in missing)}")
            continue
        run_id = json_id(log, line, _field(record, "run_id"), "run_id")
        query_id = json_id(log, line, _field(record, "topic_id", "narrative_id"), "topic_id")
        first = rows.first(line, run_id, query_id)
        topic = _field(record, "topic", "narrative")
        if topic is not None and not isinstance(topic, str):
            log.add(line, f"'topic' must be the question as a string, found {json_type(topic)}")
            topic = None
        length = _field(record, "response_length")
        if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 0):
            log.add(line, f"'response_length' must be a whole number of words, found {json.dumps(length)}")
            length = None
        references = _references(log, line, _field(record, "references"))
        sentences = _sentences(log, line, record["answer"] if "answer" in record
                               else _field(record, "answer"), references)
        if not first or references is None or sentences is None:
            continue
        if _field(record, "references") is None:
            references = list(dict.fromkeys(c for _, cites, _ in sentences for c in cites))
            sentences = [(t, cites, [references.index(c) for c in cites]) for t, cites, _ in sentences]
        rows.add(line, run_id, query_id, topic or None, length, references, sentences, text)


def _references(log: ProblemLog, line: int, value: Any) -> list[str] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        log.add(line, f"'references' must be a list of segment ids, found {json_type(value)}")
        return None
    out: list[str] = []
    first: dict[str, int] = {}
    for i, ref in enumerate(value):
        ref_id = json_id(log, line, ref, f"references[{i}]")
        if ref_id is None:
            return None
        if ref_id in first:
            log.add(line, f"references[{i}] {shown(ref_id)} repeats references[{first[ref_id]}]; "
                    "list each segment once")
            return None
        first[ref_id] = i
        out.append(ref_id)
    return out


def _sentences(log: ProblemLog, line: int, value: Any, references: list[str] | None
               ) -> list[tuple[str, list[str], list[int] | None]] | None:
    if not isinstance(value, list):
        log.add(line, f"'answer' must be a list of sentences, found {json_type(value)}")
        return None
    out: list[tuple[str, list[str], list[int] | None]] = []
    ok = True
    for n, sentence in enumerate(value):
        where = f"answer[{n}]"
        if not isinstance(sentence, dict) or not isinstance(sentence.get("text"), str):
            log.add(line, f"{where} must be an object with a 'text' string and 'citations'")
            ok = False
            continue
        cites = sentence.get("citations", [])
        if not isinstance(cites, list):
            log.add(line, f"{where}.citations must be a list, found {json_type(cites)}")
            ok = False
            continue
        ids: list[str] = []
        indexes: list[int] = []
        for c in cites:
            if isinstance(c, bool) or not isinstance(c, (int, str)):
                log.add(line, f"{where}.citations holds {json.dumps(c)}; a citation is an index "
                        "into 'references' or a segment id")
                ok = False
            elif isinstance(c, int):
                if references is None:
                    ok = False
                elif not 0 <= c < len(references):
                    log.add(line, f"{where} cites index {c}, outside 'references' (it holds "
                            f"{len(references)}: 0 to {len(references) - 1})")
                    ok = False
                else:
                    ids.append(references[c])
                    indexes.append(c)
            elif references and c not in references:
                log.add(line, f"{where} cites segment {shown(c)}, which is not among "
                        "'references'; list it there")
                ok = False
            else:
                ids.append(c)
                indexes.append(references.index(c) if references else -1)
        text = sentence["text"]
        if _CONTROL.search(text):
            log.add(line, f"{where}.text holds a control character; answers are printable text")
            ok = False
        out.append((text, ids, indexes))
    return out if ok else None


def _read_json(path: PathLike, rows: _Rows) -> None:
    log = rows.log
    with open_binary(path) as fh:
        data = fh.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        log.add(None, f"is over {MAX_JSON_BYTES >> 20:,} MiB of JSON in one object; give the "
                "responses as JSONL or TSV, a line each")
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        log.add(None, f"not valid UTF-8 at byte {exc.start}; save the file as UTF-8")
        return
    try:
        document = loads_strict(text)
    except ValueError as exc:
        where = getattr(exc, "lineno", None)
        log.add(where, f"not JSON: {getattr(exc, 'msg', exc)}")
        return
    if not isinstance(document, dict):
        log.add(1, f"expected an object of topics, found {json_type(document)}")
        return
    lines = KeyLines(text)
    for topic_key, runs in document.items():
        topic_line = lines.find(topic_key)
        query_id = json_id(log, topic_line, topic_key, "topic id")
        if not isinstance(runs, dict):
            log.add(topic_line, f"topic {shown(topic_key)}: expected an object of runs, found "
                    f"{json_type(runs)}")
            continue
        for run_key, response in runs.items():
            line = lines.find(run_key, fallback=topic_line)
            run_id = json_id(log, line, run_key, "run id")
            if not rows.first(line, run_id, query_id):
                continue
            if not isinstance(response, str):
                log.add(line, f"topic {shown(topic_key)}, run {shown(run_key)}: the response must "
                        f"be text, found {json_type(response)}")
                continue
            _add_plain(rows, line, run_id, query_id, response)


def _read_tsv(path: PathLike, rows: _Rows) -> None:
    log = rows.log
    for line, text in iter_lines(path, log):
        if not text.strip():
            continue
        fields = text.split("\t", 2)
        if len(fields) < 3:
            log.add(line, f"expected 3 tab-separated fields (topic, run, text), found {len(fields)}")
            continue
        query_id = json_id(log, line, fields[0], "topic id")
        run_id = json_id(log, line, fields[1], "run id")
        if rows.first(line, run_id, query_id):
            _add_plain(rows, line, run_id, query_id, fields[2])


def _add_plain(rows: _Rows, line: int, run_id: str, query_id: str, response: str) -> None:
    if _CONTROL.search(response):
        rows.log.add(line, f"the response of run {shown(run_id)} for topic {shown(query_id)} "
                     "holds a control character; answers are printable text")
        return
    sentences = [(s, [], None) for s in split_sentences(response)]
    rows.add(line, run_id, query_id, None, len(response.split()), [], sentences, response)


def write_answers(out: io.TextIOBase, format: str, answers: pa.Table) -> None:
    """Write answers (ANSWERS_SCHEMA, in the order to write) in `format`, each as it came in:
    a JSONL form writes each answer's line as given, `json` the object of topics, `tsv` a
    line per answer."""
    raws = answers.column("raw").to_pylist()
    if format in ("rag24", "rag25"):
        for raw in raws:
            out.write(raw.rstrip("\r\n") + "\n")
        return
    topics = answers.column("query_id").to_pylist()
    runs = answers.column("run_id").to_pylist()
    if format == "tsv":
        for q, r, raw in zip(topics, runs, raws, strict=True):
            out.write(f"{q}\t{r}\t{raw}\n")
        return
    if format != "json":
        raise ValueError(f"unknown answer format {format!r}")
    document: dict[str, dict[str, str]] = {}
    for q, r, raw in zip(topics, runs, raws, strict=True):
        document.setdefault(q, {})[r] = raw
    json.dump(document, out, ensure_ascii=False, indent=2)
    out.write("\n")


def answer_texts(sentences: pa.Table) -> Iterator[tuple[str, str, str]]:
    """(run_id, query_id, the answer's text: its sentences joined by a space) per answer."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for r, q, t in zip(sentences.column("run_id").to_pylist(),
                       sentences.column("query_id").to_pylist(),
                       sentences.column("text").to_pylist(), strict=True):
        grouped.setdefault((r, q), []).append(t.strip())
    for (r, q), texts in grouped.items():
        yield r, q, " ".join(texts)
