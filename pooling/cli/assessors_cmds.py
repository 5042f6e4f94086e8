"""The people of a campaign: add assessors and organisers (each given a secret token once),
revoke anyone's access, issue a new token."""

from pathlib import Path
from typing import Annotated

import typer

from pooling.cli.app import app
from pooling.cli.store_cmds import StoreArg
from pooling.terminal.console import Console

out = Console()

assessors_app = typer.Typer(help="Add assessors (who judge); revoke anyone's access, issue new tokens.",
                            no_args_is_help=True)
organisers_app = typer.Typer(help="Add organisers (who run the campaign).", no_args_is_help=True)
app.add_typer(assessors_app, name="assessors")
app.add_typer(organisers_app, name="organisers")


def _add_person(store: Path, name: str, contact: str | None, role: str) -> None:
    from pooling.judging.assessors import add_assessor
    from pooling.store import Store

    with Store(store) as s:
        new = add_assessor(s, name, contact=contact, role=role)
    out.print(f"added {role} {new.assessor_id} ({new.name})", highlight=False)
    out.print(f"token (shown once, keep it secret): {new.token}", highlight=False)


@assessors_app.command("add")
def assessors_add(store: StoreArg, name: str,
                  contact: Annotated[str | None, typer.Option(help="E-mail or other contact.")] = None) -> None:
    """Add an assessor; prints their secret token once."""
    _add_person(store, name, contact, "assessor")


@organisers_app.command("add")
def organisers_add(store: StoreArg, name: str,
                   contact: Annotated[str | None, typer.Option(help="E-mail or other contact.")] = None) -> None:
    """Add an organiser; prints their secret token once."""
    _add_person(store, name, contact, "organiser")


@assessors_app.command("revoke")
def assessors_revoke(store: StoreArg, name: Annotated[str, typer.Argument(
        help="The person's id (or the name they were added with).")]) -> None:
    """Revoke a person's access (assessor or organiser): their token stops working and their
    web sessions end, at once on a running server. Their judgments stay."""
    from pooling.judging.assessors import revoke
    from pooling.store import Store

    with Store(store) as s:
        assessor_id = revoke(s, name)
    out.print(f"revoked {assessor_id}: their token no longer logs in and their sessions have ended",
              highlight=False)
    out.print(f"to let them back: pooling assessors token {store} {assessor_id}", highlight=False)


@assessors_app.command("token")
def assessors_token(store: StoreArg, name: Annotated[str, typer.Argument(
        help="The person's id (or the name they were added with).")]) -> None:
    """Issue a person a new token; prints it once. Their old token stops working and the
    sessions begun with it end."""
    from pooling.judging.assessors import issue_token
    from pooling.store import Store

    with Store(store) as s:
        new = issue_token(s, name)
    out.print(f"new token for {new.role} {new.assessor_id} ({new.name})", highlight=False)
    out.print(f"token (shown once, keep it secret): {new.token}", highlight=False)
