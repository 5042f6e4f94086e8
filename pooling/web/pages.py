"""What every view shares: templates, the logged-in session, CSRF checks and the one 404.

The 404 page is a constant: a missing item and somebody else's item must be
indistinguishable, so nothing in it depends on the URL that was asked for.
"""

from __future__ import annotations

import asyncio
import json
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.templating import Jinja2Templates

from pooling.errors import SubmissionConflict
from pooling.judging.judgments import Judgment
from pooling.web.bodies import read_json
from pooling.web.gate import StoreGate
from pooling.web.held_state import Miss
from pooling.web.live import LiveCampaign
from pooling.web.routing import segment
from pooling.web.sessions import SESSION_COOKIE, Session, SessionSigner, same_token
from pooling.web.throttle import LoginThrottle, client_address

TEMPLATES_DIR = Path(__file__).parent / "templates"
FLASH_COOKIE = "pooling_flash"
PENDING_COOKIES = "pooling.pending_cookies"  # scope key: cookies a response is to set


def make_templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,  # every value is escaped unless it is already Markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # templates are package data: a running server keeps the ones it has
    )
    env.filters["q"] = lambda value: segment(str(value))  # one URL path segment per id
    env.filters["num"] = _num
    # `root`: the path prefix a reverse proxy serves the app under (`pooling serve
    # --root-path`), put before every link, form and static file of the pages.
    return Jinja2Templates(env=env, context_processors=[
        lambda request: {"root": request.scope.get("root_path", "")}])


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if value != value else f"{value:.{digits}f}"  # NaN shows as a dash
    return f"{value:,}" if isinstance(value, int) else str(value)


def gate(request: Request) -> StoreGate:
    return request.app.state.gate


def live(request: Request) -> LiveCampaign:
    """The judging state kept in memory (`pooling.web.live`)."""
    return request.app.state.live


async def answer(request: Request, method: str, *args, **kwargs):
    """Ask the in-memory campaign state (`pooling.web.live`): on the event loop when it can
    answer from memory, else from a worker thread; a judgment is awaited, not waited for."""
    state = live(request)
    try:
        result = state.cached(getattr(state, method), *args, **kwargs)
    except Miss:
        result = await run_in_threadpool(getattr(state, method), *args, **kwargs)
    if isinstance(result, Judgment):
        # Shielded: a client that gives up does not withdraw a judgment already on its way.
        written = await asyncio.shield(asyncio.wrap_future(state.writer.submit_future(result)))
        return state.stored(result, written)
    return result


def signer(request: Request) -> SessionSigner:
    return request.app.state.signer


def session(request: Request) -> Session | None:
    """The request's session, unless its cookie is invalid, idle too long, or ended by the
    server; a cookie due for renewal is renewed on the response (`PendingCookies`)."""
    cookie = request.cookies.get(SESSION_COOKIE)
    sess = signer(request).read(cookie)
    if sess is None or request.app.state.book.is_over(sess):
        return None
    renewed = signer(request).renewal(cookie, sess)
    pending = request.scope.get(PENDING_COOKIES)
    if renewed and pending is not None:
        pending[SESSION_COOKIE] = renewed
    return sess


def login_throttle(request: Request) -> LoginThrottle:
    return request.app.state.throttle


def too_many_logins(request: Request) -> HTTPException | None:
    """The 429 for a client address with too many failed logins lately, or None."""
    wait = login_throttle(request).retry_after(client_address(request.client))
    if wait is None:
        return None
    return HTTPException(429, f"Too many failed logins from your address; try again in {wait} "
                              "seconds.", headers={"Retry-After": str(wait)})


def render(request: Request, name: str, context: dict[str, Any] | None = None, *,
           status_code: int = 200, sess: Session | None = None) -> HTMLResponse:
    sess = sess if sess is not None else session(request)
    ctx = {"session": sess, "csrf": sess.csrf if sess else "", "flash": None}
    flash = request.cookies.get(FLASH_COOKIE)
    if flash:
        ctx["flash"] = _read_flash(flash)
    ctx.update(context or {})
    response = request.app.state.templates.TemplateResponse(request, name, ctx,
                                                           status_code=status_code)
    if flash:
        response.delete_cookie(FLASH_COOKIE, path="/")
    return response


class LoginRequired(Exception):
    """Raised by a view that needs a logged-in person; answered with a redirect to /login."""


async def write_failed(request: Request, exc: Exception) -> Response:
    """The store could not take a write (e.g. a full disk): 503, try again; nothing stored."""
    return JSONResponse({"error": str(exc)}, status_code=503, headers={"Retry-After": "5"})


async def login_required(request: Request, exc: Exception) -> Response:
    return RedirectResponse("/login", status_code=303)


def not_found() -> HTTPException:
    """The one answer for a missing item and for an item that is not yours."""
    return HTTPException(404)


def redirect(url: str, *, flash: str | None = None, error: bool = False) -> RedirectResponse:
    response = RedirectResponse(url, status_code=303)
    if flash:
        response.set_cookie(FLASH_COOKIE, quote(json.dumps([flash, error])), path="/",
                            httponly=True, samesite="lax", max_age=60)
    return response


def _read_flash(raw: str) -> dict[str, Any] | None:
    from urllib.parse import unquote

    try:
        text, error = json.loads(unquote(raw))
    except (ValueError, TypeError):
        return None
    return {"text": str(text), "error": bool(error)}


class Body:
    """A POST's fields, from JSON or a form: `get(name)` and, for repeated fields, `getlist`."""

    def __init__(self, fields: dict[str, list[Any]]):
        self._fields = fields

    def get(self, name: str, default: Any = None) -> Any:
        values = self._fields.get(name)
        return values[-1] if values else default

    def getlist(self, name: str) -> list[Any]:
        return list(self._fields.get(name, []))


async def post_data(request: Request, sess: Session) -> Body:
    """The body of a POST (JSON or form) once its CSRF token is checked; 403 when it is wrong."""
    if request.headers.get("content-type", "").startswith("application/json"):
        if not same_token(sess.csrf, request.headers.get("x-csrf-token")):
            raise HTTPException(403)
        data = await read_json(request, empty={})
        if not isinstance(data, dict):
            raise HTTPException(400, "the request body must be a JSON object")
        return Body({k: [v] for k, v in data.items()})
    form = await request.form()
    if not same_token(sess.csrf, form.get("csrf")):
        raise HTTPException(403)
    return Body({k: form.getlist(k) for k in form.keys() if k != "csrf"})


def json_error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def conflict_error(exc: SubmissionConflict) -> JSONResponse:
    """409: a submission id sent again with other content; both grades named, nothing dropped."""
    return JSONResponse({"error": str(exc), "stored_grade": exc.stored_grade,
                         "sent_grade": exc.sent_grade}, status_code=409)


ERROR_TEXT = {
    400: "That request could not be understood.",
    403: "That form has expired or did not come from this site. Reload the page and try again.",
    404: "There is nothing here.",
    405: "That method is not allowed here.",
    413: "That request is too large.",
    429: "Too many attempts; wait a minute and try again.",
}


async def read_abandoned(request: Request, exc: Exception) -> Response:
    """A page given up half-made: its client left (nobody reads this) or the server is
    stopping (the client is told to ask again)."""
    return PlainTextResponse("The server is stopping or the request was left; ask again.",
                             status_code=503)


async def http_error(request: Request, exc: Exception) -> Response:
    """Every HTTP error as one small page; 404 is identical whatever was asked for."""
    status = getattr(exc, "status_code", 500)
    detail = getattr(exc, "detail", None)
    text = ERROR_TEXT.get(status, "Something went wrong.")
    if status in (400, 413, 429) and detail and detail != HTTPStatus(status).phrase:
        text = str(detail)  # says what to change: a field, a limit, how long to wait
    headers = getattr(exc, "headers", None)
    if status in (400, 413) and request.headers.get("content-type", "").startswith("application/json"):
        return JSONResponse({"error": text}, status_code=status, headers=headers)  # to judge.js
    return request.app.state.templates.TemplateResponse(
        request, "error.html", {"status": status, "text": text}, status_code=status,
        headers=headers)
