"""SHA256SUMS: every file of a release with its checksum, as `sha256sum -c` reads it.

Written last, over every file the release holds; checked first when a release is imported,
so a changed, missing or added file is refused before anything is read from it. Only regular
files inside the release are ever read: a listed name that is absolute, climbs out (`..`) or
is not in its plain form, and a symbolic link anywhere in the release, are refused.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

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


@dataclass(frozen=True)
class CheckedRelease:
    """A release whose files all matched SHA256SUMS: the only files an import may read."""

    root: Path
    files: frozenset[str]

    def path(self, name: str, what: str) -> Path:
        """The checked file `name` (a relative name the manifest gives for `what`); a name
        that is not one of the checked files (a path outside, a pattern) is refused."""
        if not isinstance(name, str) or name not in self.files:
            raise ChecksumError(f"{what}: the manifest names {name!r}, which is not one of the "
                                f"files {CHECKSUMS} lists (a manifest names files inside the "
                                "release, not paths or patterns); fetch the release again")
        return self.root / name


def release_files(root: Path) -> list[str]:
    """Every file under `root` but SHA256SUMS itself, as sorted POSIX relative paths; a
    symbolic link is listed too (as what it is), never followed."""
    names = []
    for folder, dirs, files in os.walk(root):
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            relative = Path(folder, name).relative_to(root).as_posix()
            if relative != CHECKSUMS:
                names.append(relative)
    return sorted(names)


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
    if not stat.S_ISREG(sums.lstat().st_mode):
        raise ChecksumError(f"{sums} is a symbolic link; a release holds regular files only, "
                            "fetch it again")
    listed: dict[str, str] = {}
    for number, line in enumerate(sums.read_text(encoding="utf-8").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        name = name.removeprefix("*")
        if not sep or len(digest) != 64:
            raise ChecksumError(f"{sums}, line {number}: not `SHA256  FILE`; the checksum file "
                                "is damaged, so nothing in the release can be trusted")
        if not _plain_name(name):
            raise ChecksumError(f"{sums}, line {number}: {name!r} is not a file inside the "
                                "release (expected a relative name such as qrels/truth.qrels, "
                                "without `..`); nothing outside a release is read, fetch it "
                                "again")
        if name in listed:
            raise ChecksumError(f"{sums}, line {number}: {name} is listed twice; the checksum "
                                "file is damaged, fetch the release again")
        listed[name] = digest.lower()
    for name, digest in listed.items():
        path = root / name
        _refuse_links(root, name)
        if not path.is_file():
            raise ChecksumError(f"{name}: listed in {CHECKSUMS} but missing from {root}; the "
                                "release is incomplete, fetch it again")
        if file_sha256(path) != digest:
            raise ChecksumError(f"{name}: its checksum does not match {CHECKSUMS} (the file was "
                                "changed or damaged); fetch the release again, nothing was "
                                "imported")
    present = release_files(root)
    for name in present:
        _refuse_links(root, name)
    unlisted = [n for n in present if n not in listed]
    if unlisted:
        raise ChecksumError(f"{unlisted[0]}: in {root} but not in {CHECKSUMS}"
                            f"{f' (and {len(unlisted) - 1} more)' if len(unlisted) > 1 else ''}; "
                            "remove what was added, or fetch the release again")
    return sorted(listed)


def check_release(root: Path) -> CheckedRelease:
    """`verify_checksums`, as the set of files an import may read."""
    return CheckedRelease(root, frozenset(verify_checksums(root)))


def _plain_name(name: str) -> bool:
    """A relative POSIX name in its plain form: no leading `/`, no `.`/`..`/empty parts."""
    parts = name.split("/")
    return bool(name) and "\\" not in name and "\0" not in name and all(
        p not in ("", ".", "..") for p in parts) and PurePosixPath(name).as_posix() == name


def _refuse_links(root: Path, name: str) -> None:
    """Refuse `name` when it or a folder on its way is a symbolic link or not a regular file."""
    here = root
    parts = name.split("/")
    for i, part in enumerate(parts):
        here = here / part
        try:
            mode = here.lstat().st_mode
        except FileNotFoundError:
            return  # reported as missing
        if stat.S_ISLNK(mode):
            raise ChecksumError(f"{'/'.join(parts[:i + 1])}: a symbolic link in {root}; a "
                                "release holds regular files only and links are never "
                                "followed, fetch the release again")
        if i == len(parts) - 1 and not stat.S_ISREG(mode):
            raise ChecksumError(f"{name}: not a regular file in {root}; fetch the release "
                                "again")
