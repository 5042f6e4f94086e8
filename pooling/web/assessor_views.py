"""The assessor's pages: log in with a token, see assigned topics, judge documents, undo."""

from __future__ import annotations

import uuid

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from pooling.errors import StoreError, SubmissionConflict
from pooling.judging.assessors import authenticate
from pooling.judging.judgments import JudgmentRefused, NothingToUndo
from pooling.web import campaign
from pooling.web.pages import (
    answer,
    conflict_error,
    gate,
    json_error,
    login_throttle,
    not_found,
    post_data,
    render,
    session,
    signer,
    too_many_logins,
)
from pooling.web.routing import segment
from pooling.web.sessions import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    SESSION_COOKIE_OPTIONS,
    new_login_token,
    same_token,
)
from pooling.web.throttle import client_address


def topic_url(round_id: str, query_id: str) -> str:
    return f"/rounds/{segment(round_id)}/topics/{segment(query_id)}"


def doc_url(round_id: str, query_id: str, doc_id: str) -> str:
    return f"{topic_url(round_id, query_id)}/docs/{segment(doc_id)}"


def organiser_round_url(round_id: str) -> str:
    return f"/organiser/rounds/{segment(round_id)}"


# -- logging in and out --------------------------------------------------------------------


async def login(request: Request) -> Response:
    """The login form; `/login?token=...` (the link given to an assessor) logs in directly."""
    token = request.query_params.get("token")
    if token:
        return await _log_in(request, token)
    if session(request):
        return RedirectResponse("/", status_code=303)
    return _login_form(request)


async def login_post(request: Request) -> Response:
    form = await request.form()
    if not same_token(request.cookies.get(LOGIN_COOKIE), form.get("csrf")):
        return _login_form(request, "That form has expired; try again.", status_code=403)
    return await _log_in(request, str(form.get("token") or "").strip())


async def _log_in(request: Request, token: str) -> Response:
    refused = too_many_logins(request)  # checked first: the right token is refused too
    if refused is not None:
        return _login_form(request, refused.detail, status_code=refused.status_code,
                           headers=refused.headers)
    checked_at = signer(request).clock()
    who = await gate(request).run(authenticate, token) if token else None
    if who is None:
        if token:
            login_throttle(request).failed(client_address(request.client))
        return _login_form(request, "That token is not valid. Use the link or token you were given.",
                           status_code=403)
    cookie, _ = signer(request).issue(*who, at=checked_at)
    response = RedirectResponse("/", status_code=303)  # drops the token from the address bar
    response.set_cookie(SESSION_COOKIE, cookie, secure=request.url.scheme == "https",
                        **SESSION_COOKIE_OPTIONS)
    response.delete_cookie(LOGIN_COOKIE, path=_login_path(request))
    return response


def _login_path(request: Request) -> str:
    """Where the login form's cookie is sent back: /login under the proxy's prefix, if any
    (a browser sends a cookie of path /login to /login only, never to /judging/login)."""
    return request.scope.get("root_path", "") + "/login"


def _login_form(request: Request, error: str | None = None, *, status_code: int = 200,
                headers: dict[str, str] | None = None) -> Response:
    login_token = new_login_token()
    response = render(request, "login.html", {"login_csrf": login_token, "error": error},
                      status_code=status_code)
    response.headers.update(headers or {})
    response.set_cookie(LOGIN_COOKIE, login_token, httponly=True, samesite="strict",
                        path=_login_path(request), secure=request.url.scheme == "https")
    return response


async def logout(request: Request) -> Response:
    """End the session on the server too: its cookie, even if kept, no longer logs in."""
    sess = session(request)
    if sess:
        await post_data(request, sess)
        await gate(request).run(request.app.state.book.end, sess)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


# -- pages -----------------------------------------------------------------------------------


async def home(request: Request) -> Response:
    sess = session(request)
    if sess is None:
        return RedirectResponse("/login", status_code=303)
    if sess.is_organiser:
        return RedirectResponse("/organiser", status_code=303)
    rounds = await answer(request, "assessor_rounds", sess.assessor_id)
    return render(request, "home.html", {"rounds": rounds}, sess=sess)


async def topic(request: Request) -> Response:
    """The next document of a topic to judge (where the assessor left off), or 'done'."""
    return await _judging(request, None)


async def document(request: Request) -> Response:
    """One assigned document, e.g. reached with previous/next/skip."""
    return await _judging(request, request.path_params["doc_id"])


async def _judging(request: Request, doc_id: str | None) -> Response:
    sess = session(request)
    if sess is None:
        return RedirectResponse("/login", status_code=303)
    round_id, query_id = request.path_params["round_id"], request.path_params["query_id"]
    page = await answer(request, "judging_page", sess.assessor_id, sess.role, round_id, query_id,
                        doc_id)
    if page is None:
        raise not_found()
    if isinstance(page, campaign.TopicDone):
        return render(request, "done.html", {"done": page}, sess=sess)
    back = organiser_round_url(round_id) if sess.is_organiser else "/"
    return render(request, "judge.html", {
        "page": page,
        "back_url": back,
        "urls": {
            "judge": topic_url(round_id, query_id) + "/judgments",
            "undo": topic_url(round_id, query_id) + "/undo",
            "prev": page.prev_doc and doc_url(round_id, query_id, page.prev_doc),
            "next": page.next_doc and doc_url(round_id, query_id, page.next_doc),
            "skip": page.skip_doc and doc_url(round_id, query_id, page.skip_doc),
        },
        # Fresh ids for this view: a retried or double-clicked submission is stored once.
        "submission_id": uuid.uuid4().hex,
        "undo_id": uuid.uuid4().hex,
    }, sess=sess)


# -- submissions (JSON, from judge.js) ---------------------------------------------------------


async def judge(request: Request) -> Response:
    sess = session(request)
    if sess is None:
        return json_error(401, "you are logged out; follow your login link again")
    body = await post_data(request, sess)
    round_id, query_id = request.path_params["round_id"], request.path_params["query_id"]
    try:
        outcome = await answer(
            request, "judge", sess.assessor_id, sess.role, round_id, query_id, body.get("doc_id"),
            grade=body.get("grade"), submission_id=body.get("submission_id"),
            seconds=body.get("seconds"), note=body.get("note"), grades=body.get("grades"),
            unjudgeable=body.get("unjudgeable"), handout=body.get("handout"))
    except SubmissionConflict as exc:  # the id was used for something else: nothing dropped
        return conflict_error(exc)
    except StoreError as exc:  # a judgment the core refuses: 422, as the JSON API answers
        return json_error(422, str(exc))
    if outcome is None:
        raise not_found()
    after = organiser_round_url(round_id) if sess.is_organiser else topic_url(round_id, query_id)
    return JSONResponse({"stored": not outcome.duplicate, "duplicate": outcome.duplicate,
                         "next": request.scope.get("root_path", "") + after})


async def undo(request: Request) -> Response:
    sess = session(request)
    if sess is None:
        return json_error(401, "you are logged out; follow your login link again")
    body = await post_data(request, sess)
    round_id, query_id = request.path_params["round_id"], request.path_params["query_id"]
    try:
        outcome = await answer(request, "undo", sess.assessor_id, sess.role, round_id, query_id,
                               submission_id=body.get("submission_id"))
    except SubmissionConflict as exc:
        return conflict_error(exc)
    except NothingToUndo as exc:
        return json_error(409, str(exc))
    except JudgmentRefused as exc:  # a malformed submission id: 422, as the JSON API answers
        return json_error(422, str(exc))
    if outcome is None:
        raise not_found()
    return JSONResponse({"undone": outcome.doc_id, "duplicate": outcome.duplicate,
                         "next": request.scope.get("root_path", "") + doc_url(round_id, query_id, outcome.doc_id)})
