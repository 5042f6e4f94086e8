"""Progress reporting: the library reports, the CLI draws (rich progress bars on a terminal)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class Progress(Protocol):
    """Receives progress of long work: a task is started, advanced, and finished."""

    def start(self, description: str, total: int | None = None) -> None: ...

    def advance(self, amount: int = 1) -> None: ...

    def finish(self) -> None: ...


class NoProgress:
    """Progress that draws nothing (the library's default)."""

    def start(self, description: str, total: int | None = None) -> None:
        pass

    def advance(self, amount: int = 1) -> None:
        pass

    def finish(self) -> None:
        pass


class RichProgress:
    """A rich progress bar per task, on stderr so stdout stays clean for data."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import (
            Progress as _Progress,
        )

        from pooling.terminal.console import Console

        self._bar = _Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            # A live display is redrawn in place: its lines must be cropped to the terminal.
            console=Console(stderr=True, soft_wrap=False),
            transient=True,
        )
        self._task = None

    def __enter__(self) -> RichProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def start(self, description: str, total: int | None = None) -> None:
        self.finish()
        self._task = self._bar.add_task(description, total=total)

    def advance(self, amount: int = 1) -> None:
        if self._task is not None:
            self._bar.advance(self._task, amount)

    def finish(self) -> None:
        if self._task is not None:
            self._bar.remove_task(self._task)
            self._task = None


@contextmanager
def terminal_progress(enabled: bool = True) -> Iterator[Progress]:
    """Rich bars when stderr is a terminal and `enabled`; silent otherwise."""
    import sys

    if enabled and sys.stderr.isatty():
        with RichProgress() as bar:
            yield bar
    else:
        yield NoProgress()
