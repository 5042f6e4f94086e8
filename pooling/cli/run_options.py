"""The options every command that reads run files shares, and their one translation.

`eval`, `curve`, `simulate` and `import runs` declare these same options, so a message that
tells the user to try `--dedupe first` or `--run-names file` is true in each of them.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape  # a `[x]` in a path or an id is text, not markup

from pooling.terminal.console import Console

if TYPE_CHECKING:  # the formats load with the command that reads runs, not with the CLI
    from pooling.formats.run_files import RunReading


class DedupeOpt(StrEnum):
    error = "error"
    first = "first"


class RunNamesOpt(StrEnum):
    tag = "tag"
    file = "file"


Dedupe = Annotated[
    DedupeOpt,
    typer.Option("--dedupe", help="Repeated (topic, document) lines: 'error', or 'first' to keep the first."),
]
RunNames = Annotated[
    RunNamesOpt,
    typer.Option("--run-names", help="Name runs by their 'tag' or by their 'file' name (a --meta run_id wins)."),
]
# `eval` and `curve` only label their output with run names, so there a collision need not
# stop them: when --run-names is not given, runs whose tags collide are named by file.
LabelRunNames = Annotated[
    RunNamesOpt | None,
    typer.Option("--run-names", show_default=False,
                 help="Name runs by their 'tag' or by their 'file' name (a --meta run_id wins). "
                 "Not given: by tag, and by file name for the runs whose tags collide."),
]
Meta = Annotated[
    Path | None,
    typer.Option("--meta", help="TSV with columns file, run_id, team, description[, pooled yes/no].",
                 readable=False),
]
SplitByTag = Annotated[
    bool, typer.Option("--split-by-tag", help="A file with several tags holds one run per tag.")
]
TopicMapOpt = Annotated[
    Path | None,
    typer.Option("--topic-map", help="Two columns a line: topic id as written, canonical id (runs and qrels).",
                 readable=False),
]

_err = Console(stderr=True)


def run_reading(
    dedupe: DedupeOpt = DedupeOpt.error,
    run_names: RunNamesOpt = RunNamesOpt.tag,
    meta: Path | None = None,
    split_by_tag: bool = False,
    topic_map: Path | None = None,
) -> RunReading:
    """The library's RunReading for these option values (files read here, errors named)."""
    from pooling.formats.run_files import RunReading, read_run_meta
    from pooling.formats.topic_map import read_topic_map

    return RunReading(
        dedupe=dedupe.value,
        run_names=run_names.value,
        meta=read_run_meta(meta) if meta is not None else None,
        split_by_tag=split_by_tag,
        topic_map=read_topic_map(topic_map) if topic_map is not None else None,
    )


def print_notes(notes: list[str]) -> None:
    """Notes about what the reading options changed, on stderr (stdout stays the result)."""
    for note in notes:
        _err.print(f"[cyan]note:[/cyan] {escape(note)}", highlight=False, markup=True)


def print_warnings(warnings: list[str]) -> None:
    """Results that are what was asked for but probably not what was meant, on stderr."""
    for warning in warnings:
        _err.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False, markup=True)
