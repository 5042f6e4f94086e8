"""trec_eval-compatible reading of run and qrels files.

The rules: docs/trec_eval-semantics.md#reading-runs-and-qrels.

Runs: whitespace-separated `qid iter docno rank score tag [anything…]`, at least 6 fields,
blank lines and `#` comment lines skipped, scores read like C `atof`, `-` reads stdin.
Qrels: exactly 4 fields, grades read like C `atol`, a blank line is an error, and only one
`#` comment line is skipped before each data line (trec_eval's quirk, kept on purpose).
Clean runs (single spaces, 6 fields) stream through pyarrow's multi-threaded CSV reader in
pieces, so a caller can work on one piece while the next is parsed (`scan_run`); anything
else goes through a vectorised whitespace tokenizer that reports every bad line.
Compressed files (gzip, bzip2, xz, zstd) are decompressed as they are read, and every file is
read in blocks with its lines bounded (`line_blocks`), so a small file that expands to
gigabytes is refused at its first bad block; a damaged one raises `DamagedInputError`. A line
starting with a UTF-8 byte-order mark is read as trec_eval reads it (the BOM is part of the
topic id) and noted (`bom_lines`, `bom_warning`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from pooling.errors import Problem
from pooling.evaluation.ahead import Ahead
from pooling.formats.source import (
    MAGIC_BYTES,
    MAX_LINE_BYTES,
    PathLike,
    check_line_lengths,
    compression_of,
    display_name,
    line_blocks,
    long_lines,
    open_input,
)
from pooling.formats.trec_eval_text import (  # noqa: F401  (TrecInputError, RUN_LINE: re-exported)
    BLOCK_BYTES,
    QRELS_LINE,
    RUN_LINE,
    TrecInputError,
    atof_column,
    line_fields,
    read_run_rows,
    text_lines,
)

_QRELS_FIELDS = ["query_id", "iter", "doc_id", "relevance"]
_RUN_FIELDS = ["query_id", "iter", "doc_id", "rank", "score", "tag"]
_ATOL = re.compile(rb"^\s*([+-]?\d+)")
BOM = b"\xef\xbb\xbf"  # UTF-8 byte-order mark


@dataclass(frozen=True)
class TrecRun:
    """A parsed run: `table` has query_id, doc_id, score (float64) in file order."""

    table: pa.Table
    run_id: str  # tag of the last data line, as trec_eval's `runid`
    source: str
    bom_lines: tuple[int, ...] = ()  # lines starting with a byte-order mark (see `bom_lines`)


@dataclass(frozen=True)
class TrecQrels:
    """Parsed qrels: `table` has query_id, doc_id, relevance (int64)."""

    table: pa.Table
    source: str
    bom_lines: tuple[int, ...] = ()


def read_run(path: PathLike, *, fast: bool = True) -> TrecRun:
    """Read a TREC run the way trec_eval 10.0 does (`-` is stdin, compression is detected).

    fast=False goes straight to the strict reader (for a file `scan_run` turned down).
    """
    name = display_name(path)
    clean = _read_run_fast(path) if fast else None
    if clean is not None:
        return TrecRun(clean[0], clean[1], name)
    return parse_run(path, name)


def read_qrels(path: PathLike) -> pa.Table:
    """Read TREC qrels the way trec_eval 10.0 does: columns query_id, doc_id, relevance."""
    return load_qrels(path).table


def load_qrels(path: PathLike) -> TrecQrels:
    """`read_qrels` with the file's name and the lines that start with a byte-order mark.

    Read block by block (`line_blocks`): the first block with a bad line stops the reading.
    """
    name = display_name(path)
    tables: list[pa.Table] = []
    boms: list[int] = []
    after_skipped = False  # the line before the block was a `#` line trec_eval skipped
    for first, block in line_blocks(path, name, QRELS_LINE, size=BLOCK_BYTES):
        fast = None if after_skipped else _read_qrels_fast(block)
        if fast is not None:
            tables.append(fast)
        else:
            tokens, after_skipped = qrels_line_fields(
                block, name, 4, QRELS_LINE, _QRELS_HINT, first_line=first,
                after_skipped=after_skipped)
            tables.append(_qrels_table(tokens))
        boms += [line + first - 1 for line in bom_lines(block)]
    if not tables:
        raise TrecInputError([Problem(name, None, f"no lines; expected {QRELS_LINE}")])
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    return TrecQrels(table, name, tuple(boms))


def bom_lines(data: bytes | bytearray, begin: int = 0, end: int | None = None) -> list[int]:
    """1-based numbers of the lines of `data` that start with a UTF-8 byte-order mark."""
    return [data.count(b"\n", 0, at) + 1 for at in _bom_starts(data, begin, end)]


def has_bom_line(data: bytes | bytearray, begin: int = 0, end: int | None = None) -> bool:
    """Whether a line of data[begin:end] starts with a byte-order mark (one `memchr` pass
    over ASCII text: cheap enough for the fast path)."""
    return next(_bom_starts(data, begin, end), None) is not None


def _bom_starts(data: bytes | bytearray, begin: int, end: int | None) -> Iterator[int]:
    end = len(data) if end is None else end
    at = data.find(b"\xef", begin, end)
    while at >= 0:
        if data[at : at + 3] == BOM and (at == 0 or data[at - 1] == 0x0A):
            yield at
        at = data.find(b"\xef", at + 1, end)


def bom_warning(source: str, lines: Sequence[int]) -> str:
    """The warning for lines that start with a byte-order mark (trec_eval keeps it in the id)."""
    where = (f"line {lines[0]} starts" if len(lines) == 1
             else f"{len(lines)} lines (the first: line {lines[0]}) start")
    return (f"{source}: {where} with a UTF-8 byte-order mark (BOM); trec_eval reads the BOM as "
            "part of the topic id, so such a line's topic matches no topic of the other file: "
            "save the file without the BOM")


# --------------------------------------------------------------------------- runs


_PIECE = 16 << 20  # bytes of text parsed at a time by the streaming run reader
_RUN_CSV = dict(
    read_options=pcsv.ReadOptions(column_names=_RUN_FIELDS, block_size=1 << 22),
    parse_options=pcsv.ParseOptions(
        delimiter=" ", quote_char=False, escape_char=False, double_quote=False
    ),
    # doc_id as bytes: trec_eval compares doc_ids as bytes, and skipping UTF-8 validation
    # and dictionary-encoding of query_id cuts the parse by a third.
    convert_options=pcsv.ConvertOptions(
        column_types={"query_id": pa.string(), "doc_id": pa.binary(), "score": pa.float64()},
        include_columns=["query_id", "doc_id", "score"],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    ),
)


def scan_run(path: PathLike, on_piece: Callable[[pa.Table, float], None]) -> str | None:
    """Stream a clean run file to `on_piece` a few hundred thousand lines at a time.

    Each piece has columns query_id (run-end encoded strings: a run's lines come grouped by
    topic, so each group's query_id is handled once), doc_id (binary: trec_eval's doc_ids
    are bytes, so they are neither validated nor decoded) and score (float64).

    `on_piece(table, share)` also gets the share of the file's bytes read so far, so the
    caller can size its arrays once instead of growing them.
    Returns the run tag, or None when the file needs the slow path (stdin, or not clean: see
    `_clean`); pieces already handed over must then be discarded by the caller. A background
    thread parses the next piece while `on_piece` works on this one, so the caller's per-row
    work overlaps with parsing. Clean means single spaces and six fields on every line, no
    tab, CR, VT or FF, no comments, no line starting with a byte-order mark, no blank fields
    in the columns read. (A five-token line
    padded by a doubled space into an empty iter, rank or tag field is accepted here, where
    trec_eval would call it malformed.)
    """
    with RunReader(path) as reader:
        return reader.scan(on_piece)


class RunReader:
    """A run file parsed piece by piece in a background thread from the moment it is opened.

    Opening the next run before the current one is ranked lets its parsing overlap that
    work; `scan` then hands the pieces over (see `scan_run`). The thread stays at most one
    piece ahead of the consumer. Stdin is never read here (`scan` returns None).
    """

    def __init__(self, path: PathLike, then: Callable[[], None] | None = None):
        """`then` is called from the reader's thread once it has parsed the whole file (or
        given up on it): the place to open the next file's reader."""
        self.path = path
        self._ahead: Ahead | None = None
        if str(path) != "-":
            self._ahead = Ahead(self._pieces, name="run-reader", then=then)
        elif then is not None:
            then()

    def __enter__(self) -> RunReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def scan(self, on_piece: Callable[[pa.Table, float], None]) -> str | None:
        """Hand every piece to `on_piece`; the run tag, or None if the file needs the slow path."""
        if self._ahead is None:
            return None
        try:
            tail = b""
            for table, text, share in self._ahead:
                if table is None:
                    return None
                if table.num_rows:
                    tail = bytes(text[-65536:])
                    on_piece(table, share)
            return _last_tag(tail) if tail else None
        finally:
            self.close()

    def close(self) -> None:
        """Stop the reader's thread and wait for it."""
        if self._ahead is not None:
            self._ahead.close()

    def _pieces(self) -> Iterator[tuple[pa.Table | None, memoryview, float]]:
        """(table, text, share) per piece; a None table, last, when the file is not clean."""
        for raw, begin, end, share in _text_pieces(self.path):
            text = memoryview(raw)[begin:end]
            # A BOM line goes to the strict reader: Arrow's CSV reader drops a BOM at the
            # start of its input, where trec_eval keeps it in the topic id.
            irregular = (_odd_whitespace(raw, begin, end) or has_bom_line(raw, begin, end)
                         or any(long_lines(raw, begin=begin, end=end)))
            table = None if irregular else _parse_piece(text)
            yield table, text, share
            if table is None:
                return


def _parse_piece(text: memoryview) -> pa.Table | None:
    """One piece as a table with query_id run-end encoded; None if it is not clean."""
    try:
        table = pcsv.read_csv(pa.BufferReader(text), **_RUN_CSV)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError):
        return None
    if not table.num_rows:
        return table
    table = _grouped_query_ids(table)
    return table if _clean(table) else None


def _read_run_fast(path: PathLike) -> tuple[pa.Table, str] | None:
    """The whole clean run as one table (see `scan_run`); None when it needs the slow path."""
    pieces: list[pa.Table] = []
    run_id = scan_run(path, lambda table, _: pieces.append(table))
    if run_id is None:
        return None
    table = pa.concat_tables(pieces)
    pieces.clear()
    try:  # callers of the whole table get plain text columns (the scan keeps the bytes)
        doc_id = pc.cast(table.column("doc_id"), pa.string())
    except pa.ArrowInvalid:
        return None  # not UTF-8: the strict reader says where
    # One contiguous score array now, so the engine's NumPy view of it costs no second copy.
    # (doc_id stays chunked: combining it would double its memory at the peak.)
    score = table.column("score").combine_chunks()
    query_id = pc.run_end_decode(table.column("query_id"))
    return pa.table({"query_id": query_id, "doc_id": doc_id,
                     "score": pa.chunked_array([score])}), run_id


def _text_pieces(path: PathLike) -> Iterator[tuple[bytes | bytearray, int, int, float]]:
    """The file's bytes (decompressed) in pieces of about `_PIECE` bytes, each ending a line:
    (buffer, begin, end) of the piece, with the share of all the bytes read so far."""
    with open_input(path) as fh:
        compressed = compression_of(fh.peek(MAGIC_BYTES)[:MAGIC_BYTES]) is not None
        size = max(os.fstat(fh.fileno()).st_size, 1)
        if compressed:  # decompressed piece by piece; the share is of the compressed bytes
            held = None  # one piece held back, so that the last is known to be the last
            for _, piece in line_blocks(fh, display_name(path), RUN_LINE, size=_PIECE):
                if held is not None:
                    yield held, 0, len(held), min(fh.tell() / size, 0.999)
                held = piece
            if held is not None:
                yield held, 0, len(held), 1.0
            return
        fh.seek(0)
        carry = b""
        done = 0
        while True:
            buf = bytearray(len(carry) + _PIECE)
            buf[: len(carry)] = carry
            n = fh.readinto(memoryview(buf)[len(carry) :])
            end = len(carry) + n
            done += n
            if n == 0:
                if end:
                    yield buf, 0, end, 1.0
                return
            cut = buf.rfind(b"\n", 0, end)
            if cut < 0:  # one line longer than a piece: read on, up to the bound on a line
                if end > MAX_LINE_BYTES:
                    yield buf, 0, end, min(done / size, 1.0)  # irregular: the strict reader says where
                    return
                carry = bytes(buf[:end])
                continue
            carry = bytes(buf[cut + 1 : end])
            yield buf, 0, cut + 1, min((done - len(carry)) / size, 1.0)


def _odd_whitespace(raw: bytes | bytearray, begin: int, end: int) -> bool:
    """A tab, CR, VT or FF in raw[begin:end]: trec_eval splits fields on them, the CSV
    reader (single spaces) would not."""
    return any(raw.find(c, begin, end) >= 0 for c in (b"\t", b"\r", b"\v", b"\f"))


def _grouped_query_ids(table: pa.Table) -> pa.Table:
    """The piece with query_id run-end encoded (runs of equal query_ids)."""
    values, ends = equal_runs(table.column("query_id").combine_chunks())
    encoded = pa.RunEndEncodedArray.from_arrays(pa.array(ends.astype(np.int32)), values)
    return table.set_column(0, "query_id", encoded)


def equal_runs(values: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(value of each run of equal adjacent values, the row where each run ends)."""
    n = len(values)
    if n == 0:
        return values, np.empty(0, np.int64)
    same = pc.fill_null(pc.equal(values.slice(1), values.slice(0, n - 1)), False)
    ends = np.append(np.flatnonzero(~same.to_numpy(zero_copy_only=False)) + 1, n)
    return values.take(pa.array(ends - 1)), ends


def _clean(table: pa.Table) -> bool:
    """No empty or comment query_id, no empty doc_id or one that is not UTF-8, no missing or
    NaN score. (doc_id is kept as bytes, but an id that is not text goes to the strict
    reader, which refuses it at its line as every reader of ids does.)

    query_id is run-end encoded: a comment line's '#' token differs from its neighbours, so
    it is one of the encoded values.
    """
    values = table.column("query_id").combine_chunks().values
    if values.null_count or (len(values) and (
        pc.min(pc.binary_length(values)).as_py() == 0
        or pc.any(pc.starts_with(values, "#")).as_py()
    )):
        return False
    doc_id = table.column("doc_id")
    if doc_id.null_count or pc.min(pc.binary_length(doc_id)).as_py() == 0:
        return False
    try:
        pc.cast(doc_id, pa.string())  # checks the bytes are UTF-8; the bytes are what is kept
    except pa.ArrowInvalid:
        return False
    score = table.column("score")
    return not (score.null_count or pc.any(pc.is_nan(score)).as_py())


def _last_tag(tail: bytes) -> str | None:
    """Run tag (6th field) of the last data line in the file's tail; None (the strict
    reader, which says where) when there is none or it is not UTF-8."""
    for line in reversed(tail.splitlines()[1:] if len(tail) >= 65536 else tail.splitlines()):
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            try:
                return fields[5].decode() if len(fields) >= 6 else None
            except UnicodeDecodeError:
                return None
    return None


# -------------------------------------------------------------------------- qrels


def _read_qrels_fast(data: bytes, keep_iter: bool = False) -> pa.Table | None:
    """CSV reader for clean qrels (single spaces, 4 fields, integer grades, no comments);
    keep_iter keeps the 2nd column as `iter` (the judgment group of -R qrels_jg)."""
    if not data or b"#" in data or any(long_lines(data)) or has_bom_line(data):
        return None  # (Arrow's CSV reader would drop a leading BOM that trec_eval keeps)
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(column_names=_QRELS_FIELDS, block_size=1 << 24),
            parse_options=pcsv.ParseOptions(
                delimiter=" ", quote_char=False, escape_char=False, double_quote=False,
                ignore_empty_lines=False,
            ),
            convert_options=pcsv.ConvertOptions(
                column_types={"query_id": pa.string(), "iter": pa.string(), "doc_id": pa.string(),
                              "relevance": pa.int64()},
                include_columns=["query_id", *(["iter"] if keep_iter else []), "doc_id",
                                 "relevance"],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError):
        return None
    if table.column("relevance").null_count:
        return None
    for name in ("query_id", "iter", "doc_id") if keep_iter else ("query_id", "doc_id"):
        if table.num_rows and pc.min(pc.binary_length(table.column(name))).as_py() == 0:
            return None
    return table.combine_chunks()



_QRELS_HINT = "Qrels lines are: query_id iter doc_id relevance (no blank lines)."


def parse_qrels(data: bytes, name: str = "<qrels>", keep_iter: bool = False) -> pa.Table:
    """Qrels bytes to (query_id, doc_id, relevance) with trec_eval's rules and quirks;
    keep_iter adds the 2nd column as `iter`, after query_id."""
    return _qrels_table(qrels_fields(data, name, 4, QRELS_LINE, _QRELS_HINT), keep_iter)


def _qrels_table(tokens: pa.ListArray, keep_iter: bool = False) -> pa.Table:
    grades = pc.list_element(tokens, 3)
    try:
        relevance = pc.cast(grades, pa.int64())
    except pa.ArrowInvalid:
        relevance = pa.array([_atol(s) for s in grades.to_pylist()], pa.int64())
    columns = {"query_id": pc.list_element(tokens, 0)}
    if keep_iter:
        columns["iter"] = pc.list_element(tokens, 1)
    return pa.table({**columns, "doc_id": pc.list_element(tokens, 2), "relevance": relevance})


def qrels_fields(data: bytes, name: str, fields: int, line: str, hint: str) -> pa.ListArray:
    """The whitespace-separated fields of each line of a relevance file, read by trec_eval's
    qrels rules: exactly `fields` per line, a blank line is an error, and only one `#`
    comment line is skipped before each data line. `line` says what a line holds."""
    check_line_lengths(data, name, line)
    if not data:
        raise TrecInputError([Problem(name, None, f"no lines; expected {line}")])
    return qrels_line_fields(data, name, fields, line, hint)[0]


def qrels_line_fields(data: bytes, name: str, fields: int, line: str, hint: str, *,
                      first_line: int = 1, after_skipped: bool = False
                      ) -> tuple[pa.ListArray, bool]:
    """`qrels_fields` of a block of lines starting at `first_line`; `after_skipped` says the
    line before it was a skipped `#` line (so a `#` line first is data). Also gives whether
    the block's last line was a skipped `#` line, for the next block."""
    lines = text_lines(data, name, first_line)
    # One '#' line (column 0) is skipped before each data line; a second one in a row is data.
    comment = pc.starts_with(lines, "#").to_numpy(zero_copy_only=False)
    idx = np.arange(len(comment))
    last_data = np.maximum.accumulate(np.where(comment, -2 if after_skipped else -1, idx))
    skipped = comment & ((idx - last_data) % 2 == 1)
    tokens, count = line_fields(lines.filter(pa.array(~skipped)))
    line_no = np.flatnonzero(~skipped) + first_line
    bad = np.flatnonzero(count != fields)
    if len(bad):
        raise TrecInputError(
            [
                Problem(name, int(line_no[i]), f"expected {fields} fields, found {count[i]}")
                for i in bad[:1000]
            ],
            hint=hint,
        )
    return tokens, bool(len(skipped) and skipped[-1])


def _atol(text: str) -> int:
    """C `atol`: the leading integer, 0 when there is none (`1.7` → 1, `abc` → 0)."""
    m = _ATOL.match(text.encode())
    return int(m.group(1)) if m else 0


def parse_run(data: PathLike | bytes, name: str = "<run>") -> TrecRun:
    """Parse a run from bytes already in memory (stdin, tests) or a path, block by block."""
    rows, boms = read_run_rows(data, name)
    return TrecRun(rows.select(["query_id", "doc_id", "score"]), rows["tag"][-1].as_py(), name,
                   tuple(boms))
