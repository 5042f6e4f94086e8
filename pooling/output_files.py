"""Files the toolkit writes: atomically, and with the mode any new file of the user gets.

Every output file (exports, reports, CSV, Parquet, plots) is written to a temporary file
beside its destination and renamed into place, so a reader never sees half a file and a
failed write leaves the old file as it was. The temporary file is created with mode 0666,
which the kernel narrows by the process umask (0644 under umask 022), as `open(path, "w")`
would: `tempfile.mkstemp` would make every output 0600, unreadable to the user's group.
Secrets (tokens, keys) are written elsewhere, deliberately 0600.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

PathLike = str | os.PathLike[str]
_NEW_FILE_MODE = 0o666  # narrowed by the umask, as for any file a program creates
_KEEP_OF_NAME = 100  # characters of the destination's name kept in the temporary name


def write_atomically(path: PathLike, write: Callable[[Path], object]) -> Path:
    """Call `write(tmp)` to fill a new temporary file beside `path`, then rename it to `path`.

    `write` may open `tmp` itself (it exists, empty) or hand it to a library that writes
    paths (Parquet, matplotlib). On any failure the temporary file is removed and `path` is
    left untouched. Returns `path`.
    """
    path = Path(path)
    tmp = _new_temporary(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text(path: PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write `text` to `path` atomically (no newline translation)."""
    return write_bytes(path, text.encode(encoding))


def write_bytes(path: PathLike, data: bytes) -> Path:
    """Write `data` to `path` atomically."""
    return write_atomically(path, lambda tmp: tmp.write_bytes(data))


def _new_temporary(path: Path) -> Path:
    """A new, empty file beside `path` with the umask-derived mode; an error about a missing
    or unwritable folder names `path`, not the temporary name."""
    for _ in range(100):
        # The destination's suffix ends the name too: libraries that write paths (matplotlib)
        # choose their format by it.
        tmp = path.with_name(
            f".{path.name[:_KEEP_OF_NAME]}.{os.urandom(4).hex()}.tmp{path.suffix[:_KEEP_OF_NAME]}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _NEW_FILE_MODE)
        except FileExistsError:
            continue
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        os.close(fd)
        return tmp
    raise FileExistsError(f"{path}: no free temporary name beside it; remove its stale "
                          f".{path.name}.*.tmp files")
