"""Opening inputs: paths, `-` for stdin, and compressed files transparently, always as bytes.

Every reader opens its files through `open_input`, which accepts regular files only: a
directory, a device (`/dev/zero` never ends), a named pipe (its open waits for a writer) or a
file the user may not read is refused with one sentence naming the path. Line-oriented
formats also bound their lines (`check_line_lengths`), so a wrong file fails at file:line.

gzip, bzip2, xz and zstd data is recognised by its first bytes, whatever the file is called,
and decompressed (`decompress`, `open_decompressed`). A file cut short or corrupt raises
`DamagedInputError` naming the file and how many lines came out whole, never the
decompressor's own `EOFError` or `OSError`.
"""

from __future__ import annotations

import bz2
import hashlib
import io
import lzma
import os
import stat
import sys
import zlib
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO, Any, BinaryIO

from pooling.errors import FormatError, InputFileError, Problem
from pooling.output_files import write_atomically


class DamagedInputError(FormatError):
    """A compressed input that cannot be read to its end: cut short, or corrupt.

    Its message names the file, the cause and how many lines were read before the damage,
    e.g. `runs.gz: truncated gzip stream after 1200 lines; ...`.
    """

    def __init__(self, source: str, message: str):
        super().__init__([Problem(source, None, message)])

GZIP_MAGIC = b"\x1f\x8b"
# First bytes of each compressed format read transparently (name as the format's tools say it).
MAGIC: dict[str, bytes] = {
    "gzip": GZIP_MAGIC,
    "bzip2": b"BZh",
    "xz": b"\xfd7zXZ\x00",
    "zstd": b"\x28\xb5\x2f\xfd",
}
MAGIC_BYTES = 6  # enough of a file's start to tell its compression
# File name endings of compressed files (ignored when a format is told by its extension).
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
_TEST_COMMAND = {"gzip": "gzip -t", "bzip2": "bzip2 -t", "xz": "xz -t", "zstd": "zstd -t"}
_CHUNK = 1 << 16  # compressed bytes fed to a decompressor at a time when streaming
MAX_LINE_BYTES = 1 << 20  # no run or qrels line comes near this; a longer one is a wrong file
LONG_LINE_SCAN = 1 << 28  # bytes of a too-long line read (not held) to tell its length
BLOCK_BYTES = 1 << 23  # decompressed text a line reader takes at a time (see `line_blocks`)

PathLike = str | os.PathLike[str]


def display_name(path: PathLike) -> str:
    """The name used for a source in messages (the path as the user gave it)."""
    return "<stdin>" if str(path) == "-" else str(path)


def check_input(path: PathLike) -> None:
    """Refuse, naming the path, anything but a regular file (or `-` for stdin)."""
    if str(path) != "-":
        check_file(path)


def check_file(path: PathLike) -> None:
    """Refuse, naming the path, anything but a regular file (`-` is a file's name here).

    Checked before opening: opening a named pipe blocks until something writes to it.
    """
    name = str(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputFileError(f"{name}: no such file; check the path") from None
    except NotADirectoryError:
        raise InputFileError(f"{name}: no such file (a part of the path is a file, not a "
                             "directory); check the path") from None
    except PermissionError:
        raise InputFileError(f"{name}: permission denied on a directory of the path; make it "
                             "readable (chmod a+rx) or copy the file somewhere you may read") from None
    except OSError as exc:
        raise InputFileError(f"{name}: cannot be read ({exc.strerror}); check the path") from None
    kind = _not_regular(mode, name)
    if kind:
        raise InputFileError(f"{name}: {kind}")


def _not_regular(mode: int, name: str) -> str | None:
    """What is wrong with a file of this mode as an input, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"is a directory, not a file; give the files in it (e.g. {name}/*)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "character" if stat.S_ISCHR(mode) else "block"
        return (f"is a {kind} device, not a regular file (it may never end); give a file, or `-` "
                "to read standard input")
    if stat.S_ISFIFO(mode):
        return ("is a named pipe (FIFO), not a regular file (reading it waits for a writer); save "
                "its content to a file, or pipe it in and give `-`")
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file; give a file"
    return "is not a regular file; give a file"


def open_input(path: PathLike) -> BinaryIO:
    """An input file opened for reading bytes, after `check_input`; `-` is stdin."""
    if str(path) == "-":
        return sys.stdin.buffer
    return open_file(path)


def open_file(path: PathLike) -> BinaryIO:
    """A file opened for reading bytes after `check_file` (`-` is a file's name here)."""
    check_file(path)
    try:
        return open(path, "rb")  # noqa: SIM115 - returned to the caller
    except PermissionError:
        raise InputFileError(f"{path}: permission denied; make it readable (chmod a+r) or copy "
                             "it somewhere you may read it") from None
    except IsADirectoryError:  # it became one since the check
        raise InputFileError(f"{path}: is a directory, not a file") from None


def read_bytes(path: PathLike) -> bytes:
    """Whole content of a file (or stdin for `-`), decompressed when it is compressed data."""
    if str(path) == "-":
        raw = sys.stdin.buffer.read()
    else:
        raw = read_file_bytes(path)
    return decompress(raw, display_name(path))


def read_file_bytes(path: PathLike) -> bytes:
    """A file's bytes as stored (gzip kept), refused as `open_file` refuses."""
    with open_file(path) as fh:
        return fh.read()


def long_lines(
    data: bytes | bytearray, limit: int = MAX_LINE_BYTES, begin: int = 0, end: int | None = None
) -> Iterator[tuple[int, int]]:
    """(offset, length) of each line of data[begin:end] longer than `limit` bytes.

    Looks once per limit/2 bytes: a longer line holds a whole aligned stretch of that size
    without a newline, so a file without one costs a few `find` calls per MiB.
    """
    end = len(data) if end is None else end
    step = limit // 2 + 1
    at = begin
    while at + step <= end:
        if data.find(b"\n", at, at + step) >= 0:
            at += step
            continue
        start = max(data.rfind(b"\n", begin, at) + 1, begin)
        stop = data.find(b"\n", at, end)
        stop = end if stop < 0 else stop
        if stop - start > limit:
            yield start, stop - start
            at = stop
        else:
            at += step


def check_line_lengths(data: bytes, source: str, expected: str, limit: int = MAX_LINE_BYTES,
                       first_line: int = 1) -> None:
    """Refuse data with a line longer than `limit`, naming file:line and the line `expected`
    (e.g. "a run line (query_id Q0 doc_id rank score tag)"); `data` starts at `first_line`."""
    problems = [
        Problem(source, data.count(b"\n", 0, start) + first_line,
                f"line is {length:,} bytes long; {expected} is at most {_size(limit)}")
        for start, length in islice(long_lines(data, limit), 5)
    ]
    if problems:
        raise FormatError(problems)


def line_blocks(
    data: PathLike | bytes | BinaryIO, source: str, expected: str, *,
    limit: int = MAX_LINE_BYTES, size: int = BLOCK_BYTES,
) -> Iterator[tuple[int, bytes]]:
    """An input's whole lines in blocks of about `size` bytes, each with its first line's number.

    `data` is a path (`-`: stdin), bytes already read, or an open binary stream that can
    `peek` (left open); compressed data is decompressed as it is read. A line longer than `limit` raises `FormatError` at its file:line as soon as it is
    read, so neither a runaway line nor a small compressed file that expands to gigabytes is
    ever held whole: a reader that stops at the first block with a problem keeps at most a
    block or two in memory, whatever the input holds.
    """
    owned: BinaryIO | None = None
    if isinstance(data, (bytes, bytearray, memoryview)):
        stream: BinaryIO = io.BufferedReader(io.BytesIO(data))  # type: ignore[arg-type]
    elif hasattr(data, "read"):
        stream = data  # type: ignore[assignment]
    else:
        owned = stream = open_input(data)
    try:
        yield from _blocks(open_decompressed(stream, source), source, expected, limit, size)
    finally:
        if owned is not None and str(data) != "-":
            owned.close()


def _blocks(stream: BinaryIO, source: str, expected: str, limit: int,
            size: int) -> Iterator[tuple[int, bytes]]:
    """`line_blocks` of a stream of plain bytes."""
    line = 1
    pending = b""
    while chunk := stream.read(size):
        buf = pending + chunk if pending else chunk
        cut = buf.rfind(b"\n") + 1
        block, pending = buf[:cut], buf[cut:]
        if block:
            check_line_lengths(block, source, expected, limit, first_line=line)
        if len(pending) > limit:
            length = _line_length(stream, pending, size)
            where = line + block.count(b"\n")
            if length is None:
                raise FormatError([Problem(source, where, (
                    f"line runs past {_size(LONG_LINE_SCAN)} without a line end; {expected} is "
                    f"at most {_size(limit)}: is this the right file?"))])
            raise FormatError([Problem(source, where, f"line is {length:,} bytes long; "
                                       f"{expected} is at most {_size(limit)}")])
        if block:
            yield line, block
            line += block.count(b"\n")
    if pending:
        yield line, pending


def _line_length(stream: BinaryIO, start: bytes, size: int) -> int | None:
    """The length of a line too long to hold, `start` being its first bytes: read on (and let
    go) up to its end, or None when it runs past LONG_LINE_SCAN bytes."""
    length = len(start)
    while length <= LONG_LINE_SCAN and (chunk := stream.read(size)):
        end = chunk.find(b"\n")
        if end >= 0:
            return length + end
        length += len(chunk)
    return length if length <= LONG_LINE_SCAN else None


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n:,} bytes"


def compression_of(head: bytes) -> str | None:
    """The compression format whose magic bytes start `head` ("gzip", "bzip2", "xz",
    "zstd"), or None for plain data."""
    for name, magic in MAGIC.items():
        if head[: len(magic)] == magic:
            return name
    return None


def strip_compression_suffix(name: str) -> str:
    """A file name without its compression ending (`runs.tsv.gz` -> `runs.tsv`)."""
    lower = name.lower()
    for suffix in COMPRESSED_SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def decompress(raw: bytes, source: str = "<input>") -> bytes:
    """`raw` decompressed when it starts with a compression format's magic bytes, else as is.

    Concatenated members (gzip, bgzip's many), streams (bzip2, xz) and frames (zstd) are all
    read; trailing zero bytes (padding) are ignored. Damage raises `DamagedInputError`
    naming `source`.
    """
    kind = compression_of(raw[:MAGIC_BYTES])
    if kind is None:
        return raw
    view = memoryview(raw)
    at = 0

    def read(n: int) -> memoryview:
        nonlocal at
        chunk = view[at : at + n]
        at += len(chunk)
        return chunk

    # The first member in one call (the usual single-member file costs no joining); the
    # rest piece by piece, so a file of many members is not copied once per member. Lines
    # are counted only for a message about damage.
    parts: list[bytes] = []
    decoded = _Decoded(read, kind, source, first=len(raw), lines=lambda: _count_lines(parts))
    try:
        for piece in decoded.pieces():
            parts.append(piece)
    except DamagedInputError as exc:
        if decoded.corrupt is None:
            raise
        raise _corrupt(kind, raw, source, decoded.corrupt) from exc.__cause__
    return parts[0] if len(parts) == 1 else b"".join(parts)


def sniff_decompressed(raw: bytes, limit: int) -> bytes:
    """The first `limit` decompressed bytes of (the start of) a possibly compressed file, for
    guessing its format: never raises, gives what it can."""
    kind = compression_of(raw[:MAGIC_BYTES])
    if kind is None:
        return raw[:limit]
    try:
        decoder = _decoder(kind, "<sniff>")
        return bytes(decoder.decompress(raw))[:limit]
    except Exception:  # a damaged start: the real read reports it, with the file's name
        return b""


def open_decompressed(fh: BinaryIO, source: str) -> BinaryIO:
    """`fh` itself when it holds plain data, else a buffered stream of its decompressed bytes.

    `fh` must support `peek` (an opened file or stdin does). Damage found while reading
    raises `DamagedInputError`.
    """
    head = fh.peek(MAGIC_BYTES)[:MAGIC_BYTES] if hasattr(fh, "peek") else b""
    kind = compression_of(head)
    if kind is None:
        return fh
    return io.BufferedReader(_Decompressing(fh, kind, source), buffer_size=1 << 16)


class _Decoded:
    """The decompressed pieces of one input of one compression format, member after member,
    and how many lines came out whole so far (for the message when the data is damaged)."""

    def __init__(self, read: Any, kind: str, source: str, first: int = _CHUNK,
                 lines: Any = None):
        """`lines()`, when given, counts the lines out so far (else each piece is counted)."""
        self._input = _Input(read)
        self._kind, self._source, self._first = kind, source, first
        self._counted = 0
        self._count = lines
        self.corrupt: BaseException | None = None  # the decompressor's error, if corrupt

    @property
    def lines(self) -> int:
        return self._count() if self._count is not None else self._counted

    def pieces(self) -> Iterator[bytes]:
        kind, source, given = self._kind, self._source, self._input
        decoder = _decoder(kind, source)
        # The first read whole, then at most _CHUNK at a time: a decompressor copies what it
        # does not use, so this keeps a file of many members (bgzip) linear.
        size = self._first
        while True:
            chunk = given.take(size)
            size = _CHUNK
            if not len(chunk):
                raise _truncated(kind, source, self.lines)
            try:
                out = decoder.decompress(chunk)
            except Exception as exc:
                if not _is_damage(exc):
                    raise
                self.corrupt = exc
                raise DamagedInputError(
                    source, _corrupt_message(kind, source, self.lines, exc)) from exc
            if out:
                if self._count is None:
                    self._counted += out.count(b"\n")
                yield out
            if decoder.eof:  # the end of a member, stream or frame: another may follow
                given.push(decoder.unused_data)
                if not self._another_member():
                    return
                decoder = _decoder(kind, source)

    def _another_member(self) -> bool:
        """After the end of a member: whether another one follows (False at the end of the
        data, zero-byte padding included); anything else is damage."""
        head = self._input.peek(MAGIC_BYTES)
        if compression_of(head) == self._kind:
            return True
        while len(chunk := self._input.take(_CHUNK)):
            if bytes(chunk).strip(b"\x00"):
                raise _trailing(self._kind, self._source, self.lines)
        return False


class _Input:
    """Bytes from a `read(n)` function, with some of them given back (`push`) or looked at
    ahead (`peek`), handed on as views: nothing is copied."""

    def __init__(self, read: Any):
        self._read = read
        self._pending: list[memoryview] = []

    def take(self, n: int) -> memoryview:
        if not self._pending:
            return memoryview(self._read(n))
        head = self._pending.pop(0)
        if len(head) > n:
            self._pending.insert(0, head[n:])
        return head[:n]

    def push(self, data: Any) -> None:
        if len(data):
            self._pending.insert(0, memoryview(data))

    def peek(self, n: int) -> bytes:
        have = sum(len(v) for v in self._pending)
        while have < n and len(more := memoryview(self._read(_CHUNK))):
            self._pending.append(more)
            have += len(more)
        return b"".join(bytes(v[: n]) for v in self._pending)[:n]


class _Decompressing(io.RawIOBase):
    """A raw stream of the decompressed bytes of `fh` (see `_Decoded`)."""

    def __init__(self, fh: BinaryIO, kind: str, source: str):
        self._fh = fh
        self._pieces = _Decoded(fh.read, kind, source).pieces()
        self._out = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not len(self._out):
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._out = memoryview(piece)
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            super().close()


def _decoder(kind: str, source: str) -> Any:
    """A fresh decompressor for one member, stream or frame of `kind`."""
    if kind == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if kind == "bzip2":
        return bz2.BZ2Decompressor()
    if kind == "xz":
        return lzma.LZMADecompressor(lzma.FORMAT_XZ)
    try:
        import zstandard
    except ImportError:
        raise InputFileError(
            f"{source}: is zstd-compressed, and reading zstd needs the zstandard package: "
            f"pip install zstandard (or decompress the file first: zstd -d {source})") from None
    return zstandard.ZstdDecompressor().decompressobj()


def _is_damage(exc: BaseException) -> bool:
    """Whether a decompressor's exception means damaged data (zstandard's ZstdError is
    matched by name: the package is optional)."""
    return isinstance(exc, (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError)) or (
        type(exc).__name__ == "ZstdError")


def _count_lines(parts: list[bytes]) -> int:
    return sum(part.count(b"\n") for part in parts)


def _trailing(kind: str, source: str, lines: int) -> DamagedInputError:
    return DamagedInputError(
        source, f"unexpected data after the end of the {kind} stream (after {lines} lines); "
        f"the file is damaged, or is two files stuck together: check it with "
        f"`{_TEST_COMMAND[kind]} {source}`")


def _truncated(kind: str, source: str, lines: int) -> DamagedInputError:
    return DamagedInputError(
        source, f"truncated {kind} stream after {lines} lines; the file ends before its "
        f"compressed data does (an interrupted download or copy?): fetch or copy it again")


def _corrupt(kind: str, raw: bytes, source: str, exc: BaseException) -> DamagedInputError:
    """The error for corrupt data, with the lines that came out before it (decompressed
    again piece by piece: a one-shot decompression keeps nothing when it fails)."""
    lines = 0
    decoder = _decoder(kind, source)
    view = memoryview(raw)
    step = 1 << 12
    for at in range(0, len(view), step):
        try:
            lines += decoder.decompress(view[at : at + step]).count(b"\n")
        except Exception:
            break
        if decoder.eof:  # the damage is in a later member: start the next one
            tail = bytes(decoder.unused_data)
            if compression_of(tail[:MAGIC_BYTES]) != kind:
                break
            decoder = _decoder(kind, source)
            try:
                lines += decoder.decompress(tail).count(b"\n")
            except Exception:
                break
    return DamagedInputError(source, _corrupt_message(kind, source, lines, exc))


def _corrupt_message(kind: str, source: str, lines: int, exc: BaseException) -> str:
    cause = str(exc).split(": ", 1)[-1].strip() or type(exc).__name__
    if "check" in cause.lower():  # a checksum over the whole data: the damage is anywhere
        where = f"(its checksum does not match its content: {cause})"
    else:
        where = ("at its start" if lines == 0 else f"after {lines} lines") + f" ({cause})"
    return (f"corrupt {kind} data {where}; the file is damaged: fetch or copy it again "
            f"(`{_TEST_COMMAND[kind]} {source}` checks it)")


def open_text(path: PathLike, encoding: str = "utf-8") -> io.TextIOBase:
    """A text stream over a possibly compressed file, for line-oriented readers."""
    fh = open_decompressed(open_input(path), display_name(path))
    return io.TextIOWrapper(fh, encoding=encoding, errors="strict", newline=None)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: PathLike) -> str:
    """Checksum of a file's bytes as stored on disk (compressed if it is compressed)."""
    h = hashlib.sha256()
    with open_file(path) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_lines(lines: Iterable[str], out: PathLike | IO[str]) -> None:
    """Write text lines to an open stream, or atomically to a path (temp file, then rename)."""
    if hasattr(out, "write"):
        out.writelines(lines)  # type: ignore[union-attr]
        return
    def fill(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.writelines(lines)

    write_atomically(out, fill)  # type: ignore[arg-type]
