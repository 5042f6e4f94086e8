"""Fault-injection points for crash tests; inert unless POOLING_KILL_AT is set.

`POOLING_KILL_AT=rows:N` SIGKILLs the process once N rows of an import have been written;
`POOLING_KILL_AT=commit:MS` SIGKILLs it MS milliseconds after COMMIT starts;
`POOLING_KILL_AT=at:POINT` SIGKILLs it when it reaches the named point (`reached`). Tests use these
to prove that an import killed at any point leaves the store exactly as it was.
"""

from __future__ import annotations

import os
import signal
import threading

_SPEC = os.environ.get("POOLING_KILL_AT", "")


def _kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def rows_written(total: int) -> None:
    """Called after each batch of rows is written inside an import transaction."""
    if _SPEC.startswith("rows:") and total >= int(_SPEC[5:]):
        _kill()


def before_commit() -> None:
    """Called just before COMMIT; arms a timer that kills the process during the commit."""
    if _SPEC.startswith("commit:"):
        delay = float(_SPEC[7:]) / 1000.0
        if delay <= 0:
            _kill()
        timer = threading.Timer(delay, _kill)
        timer.daemon = True
        timer.start()


def reached(point: str) -> None:
    """Called at a named point of a long write (`release:runs`, `import-release:judgments`):
    `POOLING_KILL_AT=at:POINT` SIGKILLs the process there, half-way through its output."""
    if _SPEC == f"at:{point}":
        _kill()
