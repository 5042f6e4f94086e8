"""The judging app in the test's own process, through Starlette's TestClient: what one request
does, against a real store file, without starting `pooling serve`."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pooling.store import Store
from pooling.web.app import PoolingApp, create_app
from pooling.web.sessions import SESSION_COOKIE

with warnings.catch_warnings():  # this Starlette prefers httpx2 to httpx; both work here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SERVER_TOKEN = "server-token-for-tests-0123456789"


@contextmanager
def app_on(path: Path, **options: Any) -> Iterator[PoolingApp]:
    """`create_app` over the store at `path` (closed, with the app, on leaving)."""
    store = Store(path)
    app = create_app(store, server_token=SERVER_TOKEN, **options)
    try:
        yield app
    finally:
        app.close()
        store.close()


def client(app: PoolingApp, *, address: str = "127.0.0.1", https: bool = False) -> TestClient:
    """A browser-like client from `address`, following no redirects; a 500 comes back as a
    response instead of raising."""
    return TestClient(app, base_url="https://testserver" if https else "http://testserver",
                      client=(address, 50000), follow_redirects=False,
                      raise_server_exceptions=False)


def logged_in(app: PoolingApp, token: str, **options: Any) -> TestClient:
    """A client that followed its login link."""
    c = client(app, **options)
    answer = c.get("/login", params={"token": token})
    assert answer.status_code == 303, answer.text
    return c


def csrf_of(app: PoolingApp, c: TestClient) -> str:
    """The CSRF token of the client's session (what its pages carry)."""
    return pages_app(app).state.signer.read(c.cookies.get(SESSION_COOKIE)).csrf


def pages_app(app: PoolingApp):
    """The Starlette app of the pages inside the middleware."""
    inner = app.pages
    while not hasattr(inner, "routes"):
        inner = inner.app
    return inner


def store_api_app(app: PoolingApp):
    """The Starlette app of the organisers' store API (/_store) inside the middleware."""
    inner = app.api
    while not hasattr(inner, "routes"):
        inner = inner.app
    return inner


@contextmanager
def serving(app: PoolingApp, store_path: Path) -> Iterator[str]:
    """The app served over loopback by uvicorn in a thread of this process, announced beside
    the store as `pooling serve` announces itself (its URL, and its organiser token), so that
    `pooling` commands in other processes reach the store through it. Yields the URL."""
    import json
    import os
    import socket
    import threading
    import time

    import uvicorn

    from pooling.store.core import SERVER_FILE_SUFFIX
    from pooling.store.remote import token_file

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    marker = store_path.with_name(store_path.name + SERVER_FILE_SUFFIX)
    try:
        deadline = time.monotonic() + 60
        while not server.started:  # uvicorn's own flag: set once it listens
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server thread did not start")
            time.sleep(0.01)
        token_file(store_path).write_text(SERVER_TOKEN + "\n")
        marker.write_text(json.dumps({"pid": os.getpid(), "url": url}) + "\n")
        yield url
    finally:
        marker.unlink(missing_ok=True)
        token_file(store_path).unlink(missing_ok=True)
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
