"""Run the judging app: hold the store, announce the server beside it, serve until stopped.

While serving, `<store>.server.json` ({pid, url}) lets every other `pooling` command say who
holds the store (see `pooling.store.core.describe_lock_holder`); it is written atomically
once the port is bound and removed on shutdown.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pooling.errors import PoolingError
from pooling.store.core import SERVER_FILE_SUFFIX, Store
from pooling.store.remote import token_file
from pooling.web.sessions import IDLE_SECONDS, MAX_AGE_SECONDS


class ServeError(PoolingError):
    """The server cannot start (missing dependencies, port in use)."""


def serve(
    store_path: str | os.PathLike[str], *, host: str = "127.0.0.1", port: int = 8000,
    on_ready: Callable[[str], None] | None = None, root_path: str = "",
    forwarded_allow_ips: str | None = None, idle_hours: float = IDLE_SECONDS / 3600,
) -> None:
    """Serve the store at http://host:port/ until interrupted (port 0: any free port).

    root_path: the prefix a reverse proxy serves the app under (`/judging`): links, forms and
    redirects carry it, and requests arrive with it or without it. forwarded_allow_ips: the
    proxies (comma-separated addresses, or *) whose X-Forwarded-For/-Proto are believed; from
    anyone else those headers change nothing. idle_hours: a web session unused this long is
    over (its person logs in again).
    """
    if not 0 < idle_hours <= MAX_AGE_SECONDS / 3600:
        raise ServeError(f"--idle-hours must be more than 0 and at most {MAX_AGE_SECONDS // 3600} "
                         "(a session's longest life)")
    root_path = "/" + root_path.strip("/") if root_path.strip("/") else ""
    try:
        import uvicorn

        from pooling.web.app import create_app
        from pooling.web.stopping import StoppingServer
    except ImportError as exc:
        raise ServeError(f"`pooling serve` needs the web extra ({exc.name} is missing): "
                         "pip install 'pooling[web]'") from exc
    path = Path(store_path)
    with Store(path, local=True) as store:  # refuses, naming the holder, when in use
        sock = _bind(host, port)
        url = _url(host, sock.getsockname()[1])
        marker = path.with_name(path.name + SERVER_FILE_SUFFIX)
        token = secrets.token_urlsafe(32)
        _write_private(token_file(path), token + "\n")
        info = {"pid": os.getpid(), "url": url}
        if root_path:
            info["root_path"] = root_path
        _write_atomically(marker, json.dumps(info) + "\n")
        app = create_app(store, server_token=token, idle_seconds=idle_hours * 3600)
        try:
            # Assessors read for a while between requests: keep their connections open as
            # long as a typical front proxy does (75 s), not uvicorn's default 5 s.
            config = uvicorn.Config(app, log_level="warning", access_log=False,
                                    lifespan="off", timeout_graceful_shutdown=5,
                                    timeout_keep_alive=75, root_path=root_path,
                                    proxy_headers=bool(forwarded_allow_ips),
                                    forwarded_allow_ips=forwarded_allow_ips or None)
            if on_ready:
                on_ready(url.rstrip("/") + root_path + "/")
            with _stop_on_signals():
                StoppingServer(config, app.stopping).run(sockets=[sock])
        finally:
            app.close()
            sock.close()
            _remove_if_ours(marker)
            _remove_token(token_file(path), token)


class _Stopped(Exception):
    """SIGINT or SIGTERM arrived: uvicorn has shut down gracefully and re-raised it."""


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    """Turn the signal uvicorn re-raises after its graceful shutdown into a normal return, so
    the server file is removed and the store closed (checkpointed) instead of dying mid-way."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise _Stopped(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    except _Stopped:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this: a response's head and body go out at once instead
    # of the body waiting for the client's delayed ACK of the head (40 ms per request).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port} ({exc.strerror}); "
                         "choose another --port or --host") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _write_private(path: Path, text: str) -> None:
    """Write a secret readable only by this user (created 0600, then renamed into place)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    tmp.replace(path)


def _remove_token(path: Path, token: str) -> None:
    try:
        if path.read_text().strip() == token:
            path.unlink()
    except OSError:
        pass


def _remove_if_ours(path: Path) -> None:
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass
