"""Runs scanned by the C kernel (`_kernel.c`): each judged document's place, nothing else.

A clean run file is read in C, in two halves on two cores when it is big; a stored run's
Arrow columns go through the same code. The kernel hands back, per judged retrieved
document, its topic, its 0-based position in trec_eval's order and its qrels row, plus the
lines per topic, which is all a `Ranking` holds. Whenever the kernel declines (a file that
is not clean, a doc_id twice in a topic, a topic's lines apart, no compiler at install
time, or `POOLING_KERNEL=off`), callers take the NumPy path, which gives the same values and
says what is wrong with the input.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pooling.formats.source import MAGIC_BYTES, MAX_LINE_BYTES, compression_of, long_lines

try:
    from pooling.evaluation import _kernel
except ImportError:  # built without a C compiler: the NumPy path does the work
    _kernel = None

_SPLIT_BYTES = 8 << 20  # a file at least this big is scanned in two halves on two threads
_WINDOW = 1 << 20  # bytes read around the middle of a file to find a topic boundary


def enabled() -> bool:
    """Whether the kernel is built and not turned off (`POOLING_KERNEL=off`)."""
    return _kernel is not None and os.environ.get("POOLING_KERNEL", "on").lower() != "off"


@dataclass(frozen=True)
class KernelScan:
    """A run as the kernel leaves it: lines per qrels topic, and its judged documents."""

    rows: int  # data lines, topics outside the qrels included
    num_ret: np.ndarray  # int64 per qrels topic
    topic: np.ndarray  # int64 per judged retrieved document: its qrels topic
    pos: np.ndarray  # int64: 0-based position, ties by doc_id descending (trec_eval)
    pos_asc: np.ndarray  # int64: the same with ties by doc_id ascending (ir_measures)
    qrow: np.ndarray  # int64: its row in the QrelsIndex
    tag: bytes | None  # the last line's tag


def qrels_table(doc_id: pa.Array, topic: np.ndarray, topics: list[str]) -> object:
    """The kernel's hash table of the judgments (doc_id, topic index) and of the topics.

    The table reads the doc_ids from the array's own buffers (it holds them, it does not
    copy them): with millions of judgments, copies would be the evaluator's memory peak.
    """
    encoded = [t.encode() for t in topics]
    topic_offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(t) for t in encoded], out=topic_offsets[1:])
    if pa.types.is_string(doc_id.type) or pa.types.is_large_string(doc_id.type):
        doc_id = doc_id.cast(pa.large_binary() if pa.types.is_large_string(doc_id.type)
                             else pa.binary())  # the same buffers, seen as bytes
    width = 8 if pa.types.is_large_binary(doc_id.type) else 4
    _, offsets, data = doc_id.buffers()
    start = doc_id.offset
    if offsets is None:  # an empty array
        offsets, width, start = np.zeros(1, np.int32), 4, 0
    return _kernel.qrels_table(b"".join(encoded), topic_offsets,
                               data if data is not None else b"", offsets, width, start,
                               np.ascontiguousarray(topic, np.int64))


def qrels_duplicates(table: object) -> np.ndarray:
    """Rows of the qrels that judge a (topic, doc_id) an earlier row judges."""
    return np.frombuffer(_kernel.qrels_duplicates(table), np.int64)


def line_facts(data: bytes | bytearray, max_line: int) -> tuple[int, bool, bool]:
    """(lines, whether a line is longer than max_line bytes, whether a tab, CR, VT or FF
    occurs) of a text: one pass in C, or a few `find` passes without the kernel."""
    if enabled():
        lines, longest, odd_whitespace = _kernel.line_facts(data)
        return lines, longest > max_line, odd_whitespace
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return (lines, any(long_lines(data, max_line)),
            any(data.find(c) >= 0 for c in (b"\t", b"\r", b"\v", b"\f")))


def eligible(run: object) -> bool:
    """A run the kernel may read: an uncompressed regular file (not stdin)."""
    if not enabled() or not isinstance(run, (str, os.PathLike)) or str(run) == "-":
        return False
    try:
        if not os.path.isfile(run):  # before opening: opening a FIFO would wait for a writer
            return False
        with open(run, "rb") as fh:
            return compression_of(fh.read(MAGIC_BYTES)) is None
    except OSError:
        return False  # the general path says what is wrong with it


def scan_file(table: object, path: str | os.PathLike[str]) -> KernelScan | None:
    """The run file scanned against the qrels table, or None when the kernel declines."""
    size = os.path.getsize(path)
    cut = _topic_boundary(path, size) if size >= _SPLIT_BYTES else None
    ranges = [(0, cut), (cut, -1)] if cut else [(0, -1)]
    scanners = [_kernel.scanner(table) for _ in ranges]
    statuses: list[int | BaseException] = [0] * len(ranges)

    def scan(i: int) -> None:
        try:
            statuses[i] = _kernel.scan_file(scanners[i], os.fspath(path), *ranges[i],
                                            MAX_LINE_BYTES)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            statuses[i] = exc

    helper = None
    if len(ranges) == 2:
        helper = threading.Thread(target=scan, args=(0,), name="kernel-scan")
        helper.start()
    scan(len(ranges) - 1)
    if helper is not None:
        helper.join()
    for status in statuses:
        if isinstance(status, BaseException):
            raise status
    return merge([_kernel.finish(s) for s in scanners])


def scan_columns(table: object, batches: Iterable[pa.RecordBatch | pa.Table], *,
                 unique: bool = False) -> KernelScan | None:
    """A run given as Arrow batches (query_id, doc_id, score) scanned against the qrels
    table, or None when the kernel declines (nulls, NaN, a topic's rows apart...).
    unique: no doc_id is twice in a topic (a stored run), so that is not checked."""
    scanner = _kernel.scanner(table, unique)
    for batch in batches:
        columns = [batch.column(name) for name in ("query_id", "doc_id", "score")]
        pieces = [c.chunks if isinstance(c, pa.ChunkedArray) else [c] for c in columns]
        if len({len(p) for p in pieces}) != 1:
            pieces = [[pa.concat_arrays(p)] if p else [] for p in pieces]
        for qid, doc, score in zip(*pieces, strict=True):
            if not len(score):
                continue
            qid_args, doc_args = _string_args(qid), _string_args(doc)
            if qid_args is None or doc_args is None or score.null_count or (
                    score.type != pa.float64()):
                return None
            values = score.buffers()[1]
            if _kernel.scan_columns(scanner, *qid_args, *doc_args, values, score.offset,
                                    len(score)):
                return None
    return merge([_kernel.finish(scanner)])


def _string_args(array: pa.Array) -> tuple | None:
    """(offsets, data, offset width, array offset) of a string/binary array without nulls."""
    if array.null_count:
        return None
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_binary(kind):
        width = 4
    elif pa.types.is_large_string(kind) or pa.types.is_large_binary(kind):
        width = 8
    else:
        return None
    _, offsets, data = array.buffers()
    return offsets, data if data is not None else b"", width, array.offset


def merge(parts: list[tuple]) -> KernelScan | None:
    """One scan from the scanners of consecutive parts of a run; None if any declined or a
    topic's lines are in two parts."""
    rows = 0
    num_ret = None
    judged: list[list[np.ndarray]] = [[], [], [], []]
    tag = None
    for status, n, counts, *arrays, last_tag in parts:
        if status:
            return None
        counts = np.frombuffer(counts, np.int64)
        if num_ret is None:
            num_ret = counts.copy()
        else:
            if np.any((num_ret > 0) & (counts > 0)):
                return None
            num_ret += counts
        for into, raw in zip(judged, arrays, strict=True):
            into.append(np.frombuffer(raw, np.int64))
        if n:
            rows += n
            tag = last_tag
    if not rows or tag is None:
        return None
    topic, pos, pos_asc, qrow = (np.concatenate(a) for a in judged)
    return KernelScan(rows, num_ret, topic, pos, pos_asc, qrow, tag)


def _topic_boundary(path: str | os.PathLike[str], size: int) -> int | None:
    """A byte offset near the middle of the file where a line of a new topic starts."""
    with open(path, "rb") as fh:
        fh.seek(size // 2)
        window = fh.read(_WINDOW)
    start = window.find(b"\n") + 1
    if start <= 0:
        return None
    topic = None
    at = start
    while True:
        end = window.find(b"\n", at)
        if end < 0:
            return None
        field = window[at:end].split(b" ", 1)[0]
        if topic is None:
            topic = field
        elif field != topic:
            return size // 2 + at
        at = end + 1
