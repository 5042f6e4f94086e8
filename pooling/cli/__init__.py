"""The `pooling` command line: a thin Typer layer over the library.

Each command parses options, calls one library function and renders its result. Library
errors (`PoolingError`) become one message on stderr and exit code 1; `--verbose` shows the
traceback too.

Start-up is paid by every command and by `--help`, so command modules import the library
inside the commands (not at the top) and keep annotations evaluated at import (no
`from __future__ import annotations`: Typer would compile each annotation string anew on every
start). `tests/test_cli_startup.py` checks that the CLI loads no data library by itself.
"""

from __future__ import annotations

import os
import sys

import typer

from pooling.cli import pandas_guard
from pooling.cli.app import app, state
from pooling.errors import PoolingError

# Command modules register themselves on `app` when imported.
from pooling.cli import (  # noqa: E402,F401  isort: skip
    store_cmds,
    runs_cmds,
    answers_cmds,
    nuggets_cmds,
    eval_cmds,
    evaluate_cmds,
    rounds_cmds,
    assessors_cmds,
    judgments_cmds,
    qrels_cmds,
    agreement_cmds,
    judge_cmds,
    crowd_cmds,
    simulate_cmds,
    leaderboard_cmds,
    report_cmds,
    serve_cmds,
    release_cmds,
)


def _asked_for_help() -> bool:
    """Help was printed: the process has nothing to clean up, and tearing the interpreter down
    would add a tenth to the time `pooling --help` takes."""
    args = sys.argv[1:]
    return not args or "--help" in args


def _exit(code: int) -> None:
    """End the process with `code`. A command that set `state.fast_exit` left nothing to clean
    up, so the interpreter is not torn down, whether it succeeded or failed: tearing it down
    costs time with large arrays held, and pyarrow's thread pool, torn down at exit, now and
    then aborts the process (SIGABRT, "terminate called without an active exception"),
    which turned `pooling eval`'s exit code 4 on bad input into 134 in about one run in
    eight."""
    if state.fast_exit:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main() -> None:
    """Entry point: run the app, turning library errors into one clear line."""
    pandas_guard.guard_this_process()  # the process ends with the command
    try:
        app(standalone_mode=False)
        if state.fast_exit or _asked_for_help():
            state.fast_exit = True
            _exit(0)
    except PoolingError as exc:
        if state.verbose:
            import traceback

            traceback.print_exc()
        typer.echo(f"Error: {exc}", err=True)
        _exit(getattr(exc, "exit_code", 1))
    except OSError as exc:
        if state.verbose:
            raise
        if exc.filename:  # a file named on the command line that cannot be read or written
            typer.echo(f"Error: {exc.filename}: {exc.strerror or exc}; check the path and its "
                       "permissions", err=True)
        else:
            typer.echo(f"Error: internal error: {exc!r} (run with --verbose for the traceback)",
                       err=True)
        _exit(1)
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        _exit(1)
    except typer.Exit as exc:
        _exit(exc.exit_code)
    except SystemExit:
        raise
    except Exception as exc:
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):  # usage errors from click
            exc.show()
            _exit(exc.exit_code)
        if state.verbose:
            raise
        typer.echo(f"Error: internal error: {exc!r} (run with --verbose for the traceback)", err=True)
        _exit(1)
