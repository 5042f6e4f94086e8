"""Work directories beside an output: written in full, then renamed into place.

A release, and a store rebuilt from one, is first written into a hidden directory beside
its destination (`.NAME.RANDOM.partial`), created with the mode any new directory of the
user gets (0755 under umask 022). The directory holds a lock file that its writer keeps
locked (`flock`) while it writes; the kernel drops the lock when the writer ends, however it
ends (SIGKILL included). A later run beside the same destination removes every work
directory whose lock it can take: a writer that died left it, and nobody will finish it.
A work directory without a lock file is being created by another process and is left alone.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK = ".lock"  # inside a work directory, locked by its writer as long as it writes
_NEW_DIR_MODE = 0o777  # narrowed by the umask, as for any directory a program creates
_SUFFIX = ".partial"


def work_dirs(destination: Path) -> list[Path]:
    """The work directories beside `destination`, live or left behind."""
    prefix = f".{destination.name}."
    parent = destination.parent
    if not parent.is_dir():
        return []
    return sorted(p for p in parent.iterdir() if p.name.startswith(prefix)
                  and p.name.endswith(_SUFFIX) and p.is_dir() and not p.is_symlink())


def sweep(destination: Path) -> list[Path]:
    """Remove the work directories beside `destination` that their writer left behind (their
    lock is free); returns those removed. Live ones, and ones still being created, stay."""
    removed = []
    for work in work_dirs(destination):
        try:
            fd = os.open(work / LOCK, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # no lock file yet: another process is creating it
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its writer is alive
            shutil.rmtree(work, ignore_errors=True)
            removed.append(work)
        finally:
            os.close(fd)
    return removed


@contextmanager
def work_dir(destination: Path) -> Iterator[Path]:
    """A new, locked work directory beside `destination` (after sweeping the stale ones),
    removed on the way out: rename what should survive out of it before leaving."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    sweep(destination)
    work = _new_dir(destination)
    fd = os.open(work / LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
        os.close(fd)


def _new_dir(destination: Path) -> Path:
    for _ in range(100):
        work = destination.with_name(f".{destination.name}.{os.urandom(4).hex()}{_SUFFIX}")
        try:
            os.mkdir(work, _NEW_DIR_MODE)
        except FileExistsError:
            continue
        return work
    raise FileExistsError(f"{destination}: no free work directory name beside it; remove its "
                          f".{destination.name}.*{_SUFFIX} directories")
