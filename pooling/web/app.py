"""The ASGI app: routes, security headers and error pages around one store gate.

Build it with `create_app(store)`; `pooling.web.server.serve` runs it under uvicorn.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pooling.store.core import Store
from pooling.store.remote import API_PREFIX
from pooling.web import api_views
from pooling.web import assessor_views as a
from pooling.web import organiser_views as o
from pooling.web.gate import ReadAbandoned, StoreGate
from pooling.web.handout_proof import HandoutProof
from pooling.web.judgment_writer import WriteFailed
from pooling.web.live import BOOK_TABLES, LiveCampaign
from pooling.web.openapi import API_ROOT
from pooling.web.pages import (
    PENDING_COOKIES,
    LoginRequired,
    http_error,
    login_required,
    make_templates,
    read_abandoned,
    write_failed,
)
from pooling.web.routing import EncodedRoute
from pooling.web.session_book import SessionBook
from pooling.web.sessions import IDLE_SECONDS, SESSION_COOKIE_OPTIONS, SessionSigner
from pooling.web.store_api import StoreSessions, create_store_api
from pooling.web.throttle import LoginThrottle
from pooling.web.timing import ServerTiming

STATIC_DIR = Path(__file__).parent / "static"
MAX_BODY_BYTES = 1_000_000

# No inline script or style anywhere: everything the pages run or draw comes from /static.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),  # login links carry a token: never pass it on
]


class SecurityHeaders:
    """Adds the security headers to every response, and `no-store` to every dynamic one."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        root = scope.get("root_path", "").encode()
        dynamic = b"/static/" not in scope["path"].encode()[: len(root) + 8]
        secure = scope.get("scheme") == "https"  # directly, or said by a trusted proxy

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = []
                for name, value in message.get("headers", []):
                    if name == b"location" and root and value.startswith(b"/") and not value.startswith(root + b"/"):
                        value = root + value  # redirects stay under the proxy's prefix
                    elif name == b"set-cookie" and secure and b"; secure" not in value.lower():
                        value += b"; Secure"
                    headers.append((name, value))
                headers += SECURITY_HEADERS
                if dynamic:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class PendingCookies:
    """Sets the cookies views left in the scope (`pages.PENDING_COOKIES`: a renewed session
    cookie), unless the response sets a cookie of that name itself (logging in or out)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        pending: dict[str, str] = {}

        async def send_with_cookies(message: Message) -> None:
            if message["type"] == "http.response.start" and pending:
                headers = list(message.get("headers", []))
                named = {v.split(b"=", 1)[0].strip() for k, v in headers if k == b"set-cookie"}
                for name, value in pending.items():
                    if name.encode() not in named:
                        cookie = Response()
                        cookie.set_cookie(name, value, secure=scope.get("scheme") == "https",
                                          **SESSION_COOKIE_OPTIONS)
                        headers += [h for h in cookie.raw_headers if h[0] == b"set-cookie"]
                message = {**message, "headers": headers}
            await send(message)

        await self.app({**scope, PENDING_COOKIES: pending}, receive, send_with_cookies)


ROUTES = [
    Route("/", a.home),
    Route("/login", a.login, methods=["GET"]),
    Route("/login", a.login_post, methods=["POST"]),
    Route("/logout", a.logout, methods=["POST"]),
    # Ids are percent-encoded in links and may hold any character, `/` too: EncodedRoute.
    EncodedRoute("/rounds/{round_id}/topics/{query_id}", a.topic),
    EncodedRoute("/rounds/{round_id}/topics/{query_id}/judgments", a.judge, methods=["POST"]),
    EncodedRoute("/rounds/{round_id}/topics/{query_id}/undo", a.undo, methods=["POST"]),
    EncodedRoute("/rounds/{round_id}/topics/{query_id}/docs/{doc_id:path}", a.document),
    Route("/organiser", o.overview),
    EncodedRoute("/organiser/rounds/{round_id}", o.round_page),
    EncodedRoute("/organiser/rounds/{round_id}/workers", o.workers_page),
    EncodedRoute("/organiser/rounds/{round_id}/workers", o.decide_workers, methods=["POST"]),
    Route("/organiser/rounds", o.new_round, methods=["POST"]),
    Route("/organiser/people", o.add_person, methods=["POST"]),
    EncodedRoute("/organiser/people/{assessor_id}/revoke", o.revoke_person, methods=["POST"]),
    EncodedRoute("/organiser/people/{assessor_id}/token", o.new_token, methods=["POST"]),
    Route("/organiser/assign", o.assign_work, methods=["POST"]),
    Route("/organiser/qrels", o.derive, methods=["POST"]),
    EncodedRoute("/organiser/qrels/{name}", o.qrels_download),
    Route("/organiser/judgments.csv", o.history_download),
    Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
]
# What the organiser's pages write: people (the views that revoke load the session book
# themselves), rounds with their queues, assignments, qrels. Of these the judging pages hold
# the rounds in memory: after such a POST, the rounds that changed are loaded again.
ORGANISER_PAGE_WRITES = frozenset({"assessors", "rounds", "pool_entries", "assignments",
                                   "qrels", "qrels_versions"})


class PoolingApp:
    """The judging pages, and the organisers' store API under /_store/ (its own size limit).

    `sessions` holds the organisers' open store sessions and `live` the judgment writer;
    `close()` ends both before the store is closed.
    """

    def __init__(self, pages: ASGIApp, api: ASGIApp, sessions: StoreSessions, live: LiveCampaign):
        self.pages, self.api, self.sessions, self.live = pages, api, sessions, live

    def stopping(self) -> None:
        """The server has begun to stop: pages being made are given up (`StoreGate.stop_reading`);
        judgments in flight still go through."""
        self.live.gate.stop_reading()

    def close(self) -> None:
        self.sessions.close_all()  # roll back what organisers' sessions left open
        self.live.close()  # commit what the writer holds
        self.live.gate.close()  # its read cursors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        root = scope.get("root_path", "")
        path = scope.get("path", "")
        if root and (path.startswith(root + root + "/") or path == root + root):
            # uvicorn puts root_path before the path it received, assuming the proxy stripped
            # the prefix; a proxy that keeps it (nginx's proxy_pass without a URI) doubles it.
            scope = {**scope, "path": path[len(root):]}
            path = scope["path"]
        elif root and not path.startswith(root + "/") and path != root:
            scope = {**scope, "path": root + path}
            path = scope["path"]
        if scope["type"] == "http" and path.startswith(f"{root}/{API_PREFIX}/"):
            await self.api({**scope, "root_path": f"{root}/{API_PREFIX}"}, receive, send)
        elif (scope["type"] == "http" and scope["method"] == "POST"
              and path.startswith(f"{root}/organiser")):
            # An organiser's change (a round, people, assignments): what it changed is
            # dropped from the judging pages' memory before the organiser hears back.
            refreshed = False

            async def refresh_then_send(message: Message) -> None:
                nonlocal refreshed
                if not refreshed and message["type"] == "http.response.start":
                    refreshed = True
                    await run_in_threadpool(self.live.refresh, ORGANISER_PAGE_WRITES)
                await send(message)

            try:
                await self.pages(scope, receive, refresh_then_send)
            finally:
                if not refreshed:  # no answer was sent (the request failed or was cancelled)
                    await run_in_threadpool(self.live.refresh, ORGANISER_PAGE_WRITES)
        else:
            await self.pages(scope, receive, send)


def create_app(
    store: Store, *, signer: SessionSigner | None = None, server_token: str | None = None,
    idle_seconds: float = IDLE_SECONDS, throttle: LoginThrottle | None = None,
) -> PoolingApp:
    """The judging app over an open (read-write) store; sessions are signed with a key kept
    beside the store unless a signer is given, and end after `idle_seconds` unused.
    `server_token` lets the organiser's CLI in (see `pooling.web.store_api`); organisers'
    own tokens always do. `throttle` counts failed logins (by default 10 a minute per
    client address)."""
    app = Starlette(
        routes=ROUTES,
        exception_handlers={HTTPException: http_error, LoginRequired: login_required,
                            WriteFailed: write_failed, ReadAbandoned: read_abandoned},
        max_body_size=MAX_BODY_BYTES,
    )
    gate = StoreGate(store)
    app.state.gate = gate
    app.state.signer = signer = signer or SessionSigner.for_store(
        store.path, idle_seconds=idle_seconds)
    app.state.live = live = LiveCampaign(
        gate, proof=HandoutProof(signer.derived_key(HandoutProof.PURPOSE)))
    # The assessors' JSON API: an app of its own (JSON errors), inside the security headers.
    app.state.throttle = throttle = throttle or LoginThrottle()
    app.state.book = book = SessionBook(gate)
    gate.run_sync(book.load)
    app.mount(API_ROOT, api_views.create_api(gate, live, throttle, book))
    app.state.templates = make_templates()
    app.state.worker_reports = o.WorkerReports()  # the Workers page's last reports

    def on_write(tables: frozenset[str] | None) -> None:
        """An organiser's CLI session committed a change to `tables` (None: to any)."""
        live.refresh(tables)
        if tables is None or tables & BOOK_TABLES:
            book.reload()  # it may have revoked someone

    sessions = StoreSessions(gate, server_token, on_write=on_write, writer=live.writer,
                             throttle=throttle, revoked=book.revoked_since)
    return PoolingApp(ServerTiming(SecurityHeaders(PendingCookies(app))),
                      ServerTiming(SecurityHeaders(create_store_api(sessions))), sessions, live)
