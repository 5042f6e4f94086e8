"""The rich Console every command writes through: it never cuts a path, an id or a number.

Off a terminal (a pipe, a file) lines are never wrapped, whatever $COLUMNS says: messages
come out whole and tables at their natural width, so scripts and `grep` see one record per
line. On a terminal messages are soft-wrapped (the terminal folds them, no newline is
added), and a table fits the terminal: columns of ids or paths (`run_id`, `doc_id`,
`source`, ...), of numbers and of intervals (`0.3101 ± 0.044`) keep each cell on one line,
no header or word is cut, and only text columns wrap. A table too wide for that is drawn
with lighter lines, then as its narrower form if the command gave one (`set_narrower`, e.g.
a leaderboard without its intervals), and if even that does not fit, one row per block
(`header  value` lines under the row's id), with a note saying how to get it as a table
(`set_wide_note`).
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console as RichConsole
from rich.console import ConsoleDimensions, ConsoleRenderable, RenderHook

# Wider than any line a command prints: off a terminal, nothing is wrapped or cropped.
UNBOUNDED_WIDTH = 100_000
# Table columns under these headers hold ids or paths (any header ending in `_id` does too).
WHOLE_COLUMNS = frozenset({"id", "run", "source", "file", "path", "store", "topic", "measure",
                           "version", "judge", "assessor", "assessors", "table", "strategy"})
# A cell that is a number, a count, a share or an interval: never wrapped.
_NUMBER = re.compile(
    r"[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?%?"
    r"(?:\s*±\s*[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?%?)?"
    r"|\[\s*[-+]?[\d.]+\s*,\s*[-+]?[\d.]+\s*\]|n/a|nan|-?inf|[-–—]?", re.IGNORECASE)
_WIDE_NOTE = "wide_note"  # the attribute of a Table that holds its note (see set_wide_note)
_NARROWER = "narrower"  # the attribute of a Table that holds its narrower form (set_narrower)


class Console(RichConsole):
    """rich's Console with the rules above; takes rich's arguments (soft_wrap defaults on).

    An explicit `width` is kept; otherwise the width off a terminal is unbounded. Markup is
    off unless a call asks for it (`markup=True`, values escaped): a round or run named
    `[x]` is text, not a style.
    """

    def __init__(self, *args: Any, soft_wrap: bool = True, markup: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, soft_wrap=soft_wrap, markup=markup, **kwargs)
        self._asked_width = kwargs.get("width")
        self.push_render_hook(_FitTables())

    @property
    def size(self) -> ConsoleDimensions:
        size = RichConsole.size.fget(self)
        if self._asked_width is None and not self._on_terminal():
            return ConsoleDimensions(UNBOUNDED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._asked_width = new_size[0]
        RichConsole.size.fset(self, new_size)

    @property
    def width(self) -> int:
        return self.size.width

    @width.setter
    def width(self, width: int) -> None:
        self._asked_width = width
        RichConsole.width.fset(self, width)

    def _on_terminal(self) -> bool:
        """True when the stream is a terminal (rich's is_terminal also says yes to FORCE_COLOR)."""
        isatty = getattr(self.file, "isatty", None)
        try:
            return bool(isatty is not None and isatty())
        except ValueError:  # a closed stream
            return False


def set_wide_note(table: Any, note: str) -> Any:
    """Say how to get `table` as a table when a terminal is too narrow for it (e.g. "`--format
    md` or `--format csv` prints it as a table"); returns the table."""
    setattr(table, _WIDE_NOTE, note)
    return table


def set_narrower(table: Any, narrower: Any, note: str) -> Any:
    """Give `table` a narrower form (fewer or shorter columns) for a terminal too narrow for
    it, printed under `note` (what it leaves out and how to get it); returns the table."""
    setattr(table, _NARROWER, (narrower, note))
    return table


class _FitTables(RenderHook):
    """Before a table is drawn: fit it to the width (see the module's docstring)."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        from rich.table import Table

        return [_Fitted(r) if isinstance(r, Table) and r.columns else r for r in renderables]


def _holds_ids(header: object) -> bool:
    name = _plain(header).strip().lower()
    return name.endswith("_id") or name in WHOLE_COLUMNS


def _plain(renderable: object) -> str:
    from rich.text import Text

    return renderable.plain if isinstance(renderable, Text) else str(renderable)


def _unbreakable(column: Any) -> bool:
    """A column whose cells must each stay on one line: ids, paths, numbers, intervals."""
    if _holds_ids(column.header):
        return True
    cells = [_plain(c).strip() for c in column.cells]
    return bool(cells) and all(_NUMBER.fullmatch(c) for c in cells)


class _Fitted:
    """A rich Table drawn to fit the width it is given, or as one block per row."""

    def __init__(self, table: Any) -> None:
        self.table = table

    def __rich_console__(self, console: RichConsole, options: Any) -> Any:
        from rich.text import Text

        width = options.max_width
        narrower, note = getattr(self.table, _NARROWER, (None, None))
        for table in (self.table, narrower):
            if table is None:
                continue
            for compact in (False, True):
                if compact:
                    _lighten(table)
                if _fit(console, table, width):
                    if table is narrower:
                        yield Text(f"({note})", style="dim")
                    yield from console.render(table, options)
                    return
        yield from self._blocks(options)

    def _blocks(self, options: Any) -> Any:
        """One block per row: the row's id, then a `header  value` line per other column."""
        from rich.text import Text

        table = self.table
        columns = table.columns
        key = next((i for i, c in enumerate(columns) if _holds_ids(c.header)), 0)
        labels = [_plain(c.header) for c in columns]
        pad = max((len(label) for i, label in enumerate(labels) if i != key), default=0)
        rows = [list(c.cells) for c in columns]
        if table.title:
            yield Text(_plain(table.title), style="italic")
        note = getattr(table, _WIDE_NOTE, None) or (
            "the table comes out whole in a file or a pipe")
        yield Text(f"(wider than this {options.max_width}-column terminal, so one block per "
                   f"row; {note})", style="dim")
        for r in range(len(rows[0]) if rows else 0):
            yield Text("")
            yield Text(f"{labels[key]} {_plain(rows[key][r])}" if labels[key].strip()
                       else _plain(rows[key][r]), style="bold")
            for i, label in enumerate(labels):
                if i != key:
                    yield Text(f"  {label:<{pad}}  {_plain(rows[i][r])}")
        if table.caption:
            yield Text("")
            yield Text(_plain(table.caption), style="dim")


def _lighten(table: Any) -> None:
    """Lines under the header only, and one space of padding between columns: the most
    columns a width takes."""
    from rich import box

    table.box = box.SIMPLE_HEAD
    table.show_edge = False
    table.pad_edge = False
    table.collapse_padding = True


def _fit(console: RichConsole, table: Any, width: int) -> bool:
    """Make `table` fit `width` if it can: cells of ids and numbers whole on one line, no
    word cut (a header may wrap between its words), text columns wrapped as needed. False
    when it cannot."""
    from rich.measure import Measurement

    free = console.options.update(max_width=UNBOUNDED_WIDTH)
    spans = []  # (narrowest, widest) of each column, padding included
    for i, column in enumerate(table.columns):
        column.width = None
        span = table._measure_column(console, free, column)
        narrowest = span.minimum
        if _unbreakable(column):  # every cell on one line; the header may wrap
            cells = max((Measurement.get(console, free, c).maximum for c in column.cells),
                        default=0)
            header = Measurement.get(console, free, column.header).minimum
            narrowest = max(cells, header) + table._get_padding_width(i)
        spans.append((narrowest, span.maximum))
    room = width - table._extra_width
    if sum(hi for _, hi in spans) <= room:
        return True
    if sum(lo for lo, _ in spans) > room:
        return False
    # Each column its narrowest; the room left to the columns that wrap, in proportion to
    # how much wider they would like to be (what rounding leaves, to the first that want it).
    widths = [lo for lo, _ in spans]
    spare = room - sum(widths)
    wants = [hi - lo for lo, hi in spans]
    total = sum(wants)
    for i, want in enumerate(wants):
        widths[i] += min(want, spare * want // total) if total else 0
    left = room - sum(widths)
    for i in range(len(widths)):
        give = min(max(left, 0), spans[i][1] - widths[i])
        widths[i] += give
        left -= give
    for i, column in enumerate(table.columns):
        column.width = widths[i] - table._get_padding_width(i)
    return True
