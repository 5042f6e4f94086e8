"""Judgments as files: an assessor's batch exported for offline judging and imported back,
and the whole judgment history exported."""

from pathlib import Path
from typing import Annotated

import typer

from pooling.cli.app import app
from pooling.cli.rounds_cmds import RoundOpt
from pooling.cli.store_cmds import StoreArg, export_app
from pooling.terminal.console import Console

out = Console()
err = Console(stderr=True)

batch_app = typer.Typer(help="Offline judging: export an assessor's batch, import it back.",
                        no_args_is_help=True)
app.add_typer(batch_app, name="batch")


@batch_app.command("export")
def batch_export(
    store: StoreArg, round: RoundOpt,
    assessor: Annotated[str, typer.Option(help="The assessor's id.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="File (.csv or .jsonl).")],
) -> None:
    """Export an assessor's unjudged items with topic and document text."""
    from pooling.judging.batches import export_batch
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        n = export_batch(s, round, assessor, output)
    out.print(f"wrote {n} item(s) to {output}", highlight=False)


@batch_app.command("import")
def batch_import(
    store: StoreArg, round: RoundOpt,
    assessor: Annotated[str, typer.Option(help="The assessor's id.")],
    file: Annotated[Path, typer.Argument(help="The judged batch (.csv or .jsonl).", readable=False)],
) -> None:
    """Import a judged batch: all rows or none; blank grades are skipped."""
    from pooling.judging.batches import import_batch
    from pooling.store import Store

    with Store(store) as s:
        stored, dup = import_batch(s, round, assessor, file)
    out.print(f"{file}: {stored} judgment(s) stored, {dup} already stored", highlight=False)


@export_app.command("judgments")
def export_judgments(
    store: StoreArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="File (.csv or .parquet).")],
) -> None:
    """Write the full judgment history (every judgment and retraction, in order)."""
    from pooling.judging.judgments import export_history
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        n = export_history(s, output)
    err.print(f"wrote {n} judgment(s) to {output}", highlight=False)
