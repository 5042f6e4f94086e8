"""The Typer application object and global options shared by every command module."""

import inspect
from dataclasses import dataclass
from typing import Annotated

import click
import typer
from typer.core import TyperGroup

from pooling.errors import PoolingError


@dataclass
class _State:
    verbose: bool = False
    # Set by commands that hold large arrays and leave nothing to clean up (no store, no
    # temp files): the process then exits without tearing down the interpreter, which for
    # a 7M-line run takes longer than printing the results.
    fast_exit: bool = False


state = _State()


class InputEndedError(PoolingError):
    """Input data that ended in the middle (an EOFError out of a command)."""


def whole_paragraphs(text: str | None) -> str | None:
    """Help text with each paragraph on one line, for the help page to wrap at the terminal's
    width: typer's rich help keeps a docstring's line breaks and then wraps each line again,
    so an 80-column terminal showed sentences cut after a word or two. A paragraph opening
    with click's marker \\b keeps its lines."""
    if not text:
        return text
    head, mark, tail = text.partition("\f")  # after \f: for the code, never shown
    paragraphs = inspect.cleandoc(head).split("\n\n")
    joined = [p if p.startswith("\b") else " ".join(line.strip() for line in p.splitlines())
              for p in paragraphs]
    return "\n\n".join(joined) + mark + tail


def _reflow(command: click.Command) -> None:
    command.help = whole_paragraphs(command.help)
    for sub in getattr(command, "commands", {}).values():
        _reflow(sub)


class _Commands(TyperGroup):
    """The command group. An EOFError that leaves a command comes from data that ended early
    (a decompressor given a cut-off file): click would take it for the user's Ctrl-D and
    print only "Aborted.", so it becomes an error that says so (prompts turn the user's
    Ctrl-D into click's own Abort before it gets here). Every command's help is made of
    whole paragraphs (`whole_paragraphs`)."""

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            _reflow(command)

    def invoke(self, ctx):  # type: ignore[no-untyped-def]
        try:
            return super().invoke(ctx)
        except EOFError as exc:
            raise InputEndedError(
                f"input ended in the middle of the data ({exc or 'EOFError'}): an input file is "
                "probably cut short, e.g. an interrupted download of a compressed file; check "
                "the files (`gzip -t FILE`) and fetch the damaged one again (--verbose shows "
                "where it was read)") from exc


app = typer.Typer(
    name="pooling",
    cls=_Commands,
    help="Build, judge and evaluate information-retrieval test collections.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _print_version(wanted: bool) -> None:
    """`pooling --version`: the installed package's version, then exit."""
    if wanted:
        from importlib.metadata import version

        typer.echo(f"pooling {version('pooling')}")
        raise typer.Exit()


@app.callback()
def _global(
    verbose: Annotated[
        bool, typer.Option("--verbose", help="Show tracebacks for errors.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", is_eager=True,
                           callback=_print_version)
    ] = False,
    token: Annotated[
        str | None,
        typer.Option("--token", help="Organiser token for a store that `pooling serve` is serving "
                     "(default: $POOLING_TOKEN, else the server's token file, readable only by "
                     "the user who started it).", show_default=False),
    ] = None,
) -> None:
    state.verbose = verbose
    if token:
        import os

        from pooling.store.remote import TOKEN_ENV

        os.environ[TOKEN_ENV] = token  # read by every Store this process opens
