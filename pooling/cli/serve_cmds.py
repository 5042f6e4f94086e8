"""`pooling serve`: the judging web app for assessors and organisers."""

from typing import Annotated

import typer

from pooling.cli.app import app
from pooling.cli.store_cmds import StoreArg
from pooling.terminal.console import Console

err = Console(stderr=True)


@app.command()
def serve(
    store: StoreArg,
    host: Annotated[str, typer.Option(help="Address to listen on (only this machine by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    root_path: Annotated[str, typer.Option(
        help="Path prefix a reverse proxy serves the app under, e.g. /judging.")] = "",
    forwarded_allow_ips: Annotated[str | None, typer.Option(
        help="Trusted proxies (comma-separated IPs, or *) whose X-Forwarded-For/-Proto headers "
             "are believed; from anyone else they are ignored (default: nobody).")] = None,
    idle_hours: Annotated[float, typer.Option(
        help="Log a web session out after this many hours without a request.")] = 12.0,
) -> None:
    """Serve the judging web app: assessors log in with their token link and judge their
    assigned documents; organisers follow progress and agreement and run the campaign.
    While it runs, the server holds the store and every other `pooling` command (and the
    Python `Store`) reaches it through the server as an organiser: the user who started it
    needs nothing more (its token is in STORE.organiser-token, mode 0600); others pass an
    organiser's token with `pooling --token` or $POOLING_TOKEN.

    Behind a reverse proxy (nginx, Caddy, Traefik) that serves https at /judging/:
    `pooling serve STORE --root-path /judging --forwarded-allow-ips 127.0.0.1`, with nginx
    `location /judging/ { proxy_pass http://127.0.0.1:8000; proxy_set_header X-Forwarded-Proto
    $scheme; proxy_set_header X-Forwarded-For $remote_addr; }`. Links and redirects then
    carry the prefix, and the session cookie is marked Secure because the proxy says https."""
    from pooling.web.server import serve as run_server

    def ready(url: str) -> None:
        err.print(f"serving {store} at {url} (pid and URL in {store}.server.json; Ctrl-C stops)",
                  highlight=False, soft_wrap=True)
        err.print(f"assessors log in at {url}login?token=<their token>", highlight=False,
                  soft_wrap=True)
        err.print(f"other pooling commands on {store} keep working through this server",
                  highlight=False, soft_wrap=True)

    run_server(store, host=host, port=port, on_ready=ready, root_path=root_path,
               forwarded_allow_ips=forwarded_allow_ips, idle_hours=idle_hours)
    err.print(f"stopped; {store} is free for other commands", highlight=False)
