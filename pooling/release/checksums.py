"""SHA256SUMS: every file of a release with its checksum, as `sha256sum -c` reads it.

Written last, over every file the release holds; checked first when a release is imported,
so a changed, missing or added file is refused before anything is read from it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pooling.errors import PoolingError
from pooling.release.layout import CHECKSUMS

_CHUNK = 1 << 20


class ChecksumError(PoolingError):
    """A release whose files do not match its SHA256SUMS."""


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file, read in chunks (runs can be gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def release_files(root: Path) -> list[str]:
    """Every file under `root` but SHA256SUMS itself, as sorted POSIX relative paths."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and p.relative_to(root).as_posix() != CHECKSUMS)


def write_checksums(root: Path) -> int:
    """Write `root/SHA256SUMS` over every other file; returns how many files it lists."""
    names = release_files(root)
    lines = [f"{file_sha256(root / name)}  {name}\n" for name in names]
    (root / CHECKSUMS).write_text("".join(lines), encoding="utf-8")
    return len(names)


def verify_checksums(root: Path) -> list[str]:
    """Check every file against `root/SHA256SUMS`; returns the files checked.

    Refused, naming the file: a checksum that does not match, a listed file that is
    missing, a file that is not listed, and a release without SHA256SUMS.
    """
    sums = root / CHECKSUMS
    if not sums.is_file():
        raise ChecksumError(f"{root} has no {CHECKSUMS}: it is not a release written by "
                            "`pooling release`, or it is incomplete; release the store again")
    listed: dict[str, str] = {}
    for number, line in enumerate(sums.read_text(encoding="utf-8").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ChecksumError(f"{sums}, line {number}: not `SHA256  FILE`; the checksum file "
                                "is damaged, so nothing in the release can be trusted")
        listed[name.removeprefix("*")] = digest.lower()
    for name, digest in listed.items():
        path = root / name
        if ".." in Path(name).parts or not path.is_file():
            raise ChecksumError(f"{name}: listed in {CHECKSUMS} but missing from {root}; the "
                                "release is incomplete, fetch it again")
        if file_sha256(path) != digest:
            raise ChecksumError(f"{name}: its checksum does not match {CHECKSUMS} (the file was "
                                "changed or damaged); fetch the release again, nothing was "
                                "imported")
    unlisted = [n for n in release_files(root) if n not in listed]
    if unlisted:
        raise ChecksumError(f"{unlisted[0]}: in {root} but not in {CHECKSUMS}"
                            f"{f' (and {len(unlisted) - 1} more)' if len(unlisted) > 1 else ''}; "
                            "remove what was added, or fetch the release again")
    return sorted(listed)
