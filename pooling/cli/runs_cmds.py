"""Fixing stored runs: `pooling runs remove|replace|rename|history` (each change recorded)."""

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.run_options import (
    Dedupe,
    DedupeOpt,
    Meta,
    TopicMapOpt,
    print_notes,
    print_warnings,
    run_reading,
)
from pooling.cli.store_cmds import AllowCopy, StoreArg
from pooling.errors import StoreError
from pooling.terminal.console import Console

out = Console()

runs_app = typer.Typer(help="Fix stored runs: remove, replace or rename one (each change is "
                       "recorded; qrels and judgments are kept).", no_args_is_help=True)
app.add_typer(runs_app, name="runs")

RunArg = Annotated[str, typer.Argument(help="The run's run_id.")]
Force = Annotated[bool, typer.Option(
    "--force", help="Change a pooled run all the same (its pool and judgments stay).")]
Reason = Annotated[str | None, typer.Option(help="Why (kept in the record of changes).")]
By = Annotated[str | None, typer.Option(
    "--by", help="Who changes it, for the record (default: your login name).", show_default=False)]


def _pooled_note(change) -> str:
    return (f"; it had built the pool of round(s) {', '.join(change.pooled_in)}, whose pools "
            "and judgments are kept" if change.pooled_in else "")


@runs_app.command("remove")
def remove(store: StoreArg, run_id: RunArg, force: Force = False, reason: Reason = None,
           by: By = None) -> None:
    """Remove a run: its rows and its cached evaluation values go, the change is recorded
    (with the old content's checksum), qrels and judgments stay. A pooled run needs --force."""
    from pooling.store import Store

    with Store(store) as s:
        change = s.remove_run(run_id, force=force, by=by, reason=reason)
    out.print(f"removed run {run_id} ({change.old_rows:,} rows from {change.old_source or '-'}, "
              f"sha256 {(change.old_sha256 or '-')[:12]}){_pooled_note(change)}", highlight=False)


@runs_app.command("replace")
def replace(
    store: StoreArg,
    run_id: RunArg,
    file: Annotated[Path, typer.Argument(help="The run file to put in its place (.gz read "
                                         "transparently).", readable=False)],
    force: Force = False,
    reason: Reason = None,
    by: By = None,
    strict: Annotated[bool, typer.Option(help="Refuse a run naming topics the store lacks.")] = False,
    dedupe: Dedupe = DedupeOpt.error,
    meta: Meta = None,
    topic_map: TopicMapOpt = None,
    allow_copy: AllowCopy = False,
) -> None:
    """Put a run file in place of a run, under the same run_id, read as `pooling import runs`
    reads it; team, description and pooled are kept unless --meta gives them. All or nothing;
    recorded; cached values dropped; qrels and judgments stay. A pooled run needs --force."""
    from pooling.store import Store
    from pooling.terminal.progress import terminal_progress

    reading = run_reading(dedupe, meta=meta, topic_map=topic_map)
    if reading.meta is not None and reading.meta_for(file) is None:
        raise StoreError(f"{file} is not listed in the --meta file {meta}; add a line for it")
    with Store(store) as s, terminal_progress() as bar:
        change, report = s.replace_run(
            run_id, file, force=force, by=by, reason=reason,
            meta=reading.meta_for(file), dedupe=reading.dedupe, topic_map=reading.topic_map,
            strict=strict, allow_copy=allow_copy, progress=bar)
    item = report.items[0]
    out.print(f"replaced run {run_id}: {change.old_rows:,} rows from {change.old_source or '-'} "
              f"(sha256 {(change.old_sha256 or '-')[:12]}) by {item.n_rows:,} rows of "
              f"{item.n_topics} topics from {item.source}{_pooled_note(change)}", highlight=False)
    print_notes(report.notes)
    print_warnings(report.warnings)


@runs_app.command("rename")
def rename(store: StoreArg, run_id: RunArg,
           new_run_id: Annotated[str, typer.Argument(help="The run's new run_id.")],
           force: Force = False, reason: Reason = None, by: By = None) -> None:
    """Rename a run: its rows, the record of its import and (with --force) the rounds that
    pooled it follow; cached values are dropped; recorded. A pooled run needs --force."""
    from pooling.store import Store

    with Store(store) as s:
        change = s.rename_run(run_id, new_run_id, force=force, by=by, reason=reason)
    rounds = (f"; round(s) {', '.join(change.pooled_in)} now name it {new_run_id}"
              if change.pooled_in else "")
    out.print(f"renamed run {run_id} to {new_run_id}{rounds}", highlight=False)


@runs_app.command("history")
def history(
    store: StoreArg,
    run_id: Annotated[str | None, typer.Argument(help="Only this run's changes (under its old "
                                                 "or new name).", show_default=False)] = None,
) -> None:
    """The recorded changes to runs, oldest first: what, by whom, when, why, and the
    checksums of the content before and after."""
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        changes = s.run_changes(run_id)
    if not changes:
        out.print("no run was removed, replaced or renamed" + (f" as {run_id}" if run_id else ""),
                  highlight=False)
        return
    table = Table("when", "action", "run_id", "now", "old sha256", "old rows", "new sha256",
                  "pooled in", "forced", "by", "reason")
    for c in changes:
        table.add_row(f"{c.changed_at:%Y-%m-%d %H:%M:%S}", c.action, c.run_id,
                      c.new_run_id or "-", (c.old_sha256 or "-")[:12], f"{c.old_rows:,}",
                      (c.new_sha256 or "-")[:12], ", ".join(c.pooled_in) or "-",
                      "yes" if c.forced else "no", c.changed_by or "-", c.reason or "")
    out.print(table)
