"""Opening inputs: paths, `-` for stdin, and gzip transparently, always as bytes."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, BinaryIO

GZIP_MAGIC = b"\x1f\x8b"

PathLike = str | os.PathLike[str]


def display_name(path: PathLike) -> str:
    """The name used for a source in messages (the path as the user gave it)."""
    return "<stdin>" if str(path) == "-" else str(path)


def read_bytes(path: PathLike) -> bytes:
    """Whole content of a file (or stdin for `-`), gunzipped when it is gzip data."""
    if str(path) == "-":
        raw = sys.stdin.buffer.read()
    else:
        raw = Path(path).read_bytes()
    return gunzip_if_needed(raw)


def gunzip_if_needed(raw: bytes) -> bytes:
    """Decompress gzip data (detected by magic bytes, not by file name)."""
    if raw[:2] == GZIP_MAGIC:
        return gzip.decompress(raw)
    return raw


def open_text(path: PathLike, encoding: str = "utf-8") -> io.TextIOBase:
    """A text stream over a possibly gzipped file, for line-oriented readers."""
    fh: BinaryIO = open(path, "rb")  # noqa: SIM115 - returned to the caller
    magic = fh.peek(2)[:2] if hasattr(fh, "peek") else b""
    if magic == GZIP_MAGIC:
        fh = gzip.GzipFile(fileobj=fh)  # type: ignore[assignment]
    return io.TextIOWrapper(fh, encoding=encoding, errors="strict", newline=None)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: PathLike) -> str:
    """Checksum of a file's bytes as stored on disk (compressed if it is compressed)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_lines(lines: Iterable[str], out: PathLike | IO[str]) -> None:
    """Write text lines to an open stream, or atomically to a path (temp file, then rename)."""
    if hasattr(out, "write"):
        out.writelines(lines)  # type: ignore[union-attr]
        return
    path = Path(out)  # type: ignore[arg-type]
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(lines)
    tmp.replace(path)
