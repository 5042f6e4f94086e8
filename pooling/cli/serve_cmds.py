"""`pooling serve`: the judging web app for assessors and organisers."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from pooling.cli.app import app
from pooling.cli.store_cmds import StoreArg

err = Console(stderr=True)


@app.command()
def serve(
    store: StoreArg,
    host: Annotated[str, typer.Option(help="Address to listen on (only this machine by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
) -> None:
    """Serve the judging web app: assessors log in with their token link and judge their
    assigned documents; organisers follow progress and agreement and run the campaign.
    While it runs, the server holds the store and every other `pooling` command (and the
    Python `Store`) reaches it through the server as an organiser: the user who started it
    needs nothing more (its token is in STORE.organiser-token, mode 0600); others pass an
    organiser's token with `pooling --token` or $POOLING_TOKEN."""
    from pooling.web.server import serve as run_server

    def ready(url: str) -> None:
        err.print(f"serving {store} at {url} (pid and URL in {store}.server.json; Ctrl-C stops)",
                  highlight=False, soft_wrap=True)
        err.print(f"assessors log in at {url}login?token=<their token>", highlight=False,
                  soft_wrap=True)
        err.print(f"other pooling commands on {store} keep working through this server",
                  highlight=False, soft_wrap=True)

    run_server(store, host=host, port=port, on_ready=ready)
    err.print(f"stopped; {store} is free for other commands", highlight=False)
