"""The assessors' JSON API under /api/v1: the judging pages' operations, for scripts.

Every view calls the same functions as the pages (`assessor_views`, through
`pooling.web.live` and `pooling.web.campaign`), so both share one set of access rules and
one meaning of judge, undo and progress. Anything not the caller's answers exactly like a
missing item. `pooling.web.openapi` describes these routes.
"""

from __future__ import annotations

import uuid
from typing import Any

from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pooling.errors import StoreError, SubmissionConflict
from pooling.judging.assessors import authenticate
from pooling.judging.judgments import JudgmentRefused, NothingToUndo
from pooling.web.bodies import BodyRefused, read_json
from pooling.web.campaign import JudgingPage, RoundProgress, TopicDone
from pooling.web.gate import StoreGate
from pooling.web.judgment_writer import WriteFailed
from pooling.web.live import LiveCampaign
from pooling.web.openapi import DOCUMENT
from pooling.web.pages import answer, conflict_error, gate, write_failed
from pooling.web.round_progress import organiser_rounds
from pooling.web.routing import EncodedRoute
from pooling.web.session_book import SessionBook
from pooling.web.throttle import LoginThrottle, client_address

NOT_FOUND = "not found"  # the one body for a missing item and for somebody else's
# name -> required; `grade` judges a document as a whole, `grades` (a grade per subtopic) in
# a subtopic round: one of the two is sent.
JUDGMENT_FIELDS = {"doc_id": True, "grade": False, "grades": False, "submission_id": True,
                   "seconds": False, "note": False, "unjudgeable": False, "handout": False}
UNDO_FIELDS = {"submission_id": True}


# -- who is asking ---------------------------------------------------------------------------


async def _caller(request: Request) -> tuple[str, str]:
    """(assessor_id, role) of the bearer token, or a 401.

    The API reads no cookies: its only credential is the Authorization header, which a
    browser never attaches to a cross-site request by itself (and a page of another site can
    set it only after a CORS preflight this server never grants). A forged cross-site request
    therefore arrives without credentials, so these routes need no CSRF token.
    """
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise HTTPException(401, "send your token as 'Authorization: Bearer <token>'",
                            headers={"WWW-Authenticate": 'Bearer realm="pooling"'})
    throttle: LoginThrottle = request.app.state.throttle
    address = client_address(request.client)
    wait = throttle.retry_after(address)
    if wait is not None:
        raise HTTPException(429, f"too many unknown tokens from your address; try again in {wait} "
                                 "seconds", headers={"Retry-After": str(wait)})
    # The session book knows every valid token as of its last load (revocations reload it);
    # a token it does not know may be newer than the book, so the store is asked.
    book = request.app.state.book
    who = book.token_owner(token) if book is not None else None
    if who is None:
        who = await gate(request).read(authenticate, token)
    if who is None:
        throttle.failed(address)
        raise HTTPException(401, "that token is not valid; use the token `pooling assessors add` "
                                 "printed", headers={"WWW-Authenticate":
                                                     'Bearer realm="pooling", error="invalid_token"'})
    return who


async def _body(request: Request, fields: dict[str, bool]) -> dict[str, Any]:
    """The JSON object of a POST, holding only `fields` and every required one; else a 422
    (413 when it is too large)."""
    try:
        data = await read_json(request)
    except BodyRefused as exc:
        if exc.status_code != 400:
            raise
        raise HTTPException(422, exc.detail) from exc
    if not isinstance(data, dict):
        raise HTTPException(422, "the request body must be a JSON object")
    expected = ", ".join(fields)
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise HTTPException(422, f"unknown field(s) {', '.join(unknown)}; expected {expected}")
    missing = [name for name, required in fields.items() if required and name not in data]
    if missing:
        raise HTTPException(422, f"missing field(s) {', '.join(missing)}; expected {expected}")
    return data


def _not_found() -> HTTPException:
    return HTTPException(404, NOT_FOUND)


# -- reads -----------------------------------------------------------------------------------


async def rounds(request: Request) -> Response:
    """The caller's rounds with per-topic progress (an organiser: every round)."""
    who = await _caller(request)
    return JSONResponse({"rounds": [_round_json(r) for r in await _rounds_of(request, who)]})


async def progress(request: Request) -> Response:
    who = await _caller(request)
    round_id = request.path_params["round_id"]
    found = [r for r in await _rounds_of(request, who, round_id) if r.round_id == round_id]
    if not found:
        raise _not_found()
    return JSONResponse(_round_json(found[0]))


async def next_document(request: Request) -> Response:
    """The next document of a topic to judge (where the caller left off), or done."""
    return await _judging(request, None)


async def document(request: Request) -> Response:
    """One document of the caller's queue, by id (back, skip, or an organiser adjudicating)."""
    return await _judging(request, request.path_params["doc_id"])


async def _judging(request: Request, doc_id: str | None) -> Response:
    assessor_id, role = await _caller(request)
    round_id, query_id = request.path_params["round_id"], request.path_params["query_id"]
    page = await answer(request, "judging_page", assessor_id, role, round_id, query_id, doc_id)
    if page is None:
        raise _not_found()
    if isinstance(page, TopicDone):
        return JSONResponse({"done": True, "round_id": page.round_id,
                             "topic": vars(page.topic), "judged": page.judged,
                             "total": page.total, "first_doc": page.first_doc})
    return JSONResponse(_page_json(page))


async def _rounds_of(request: Request, who: tuple[str, str],
                     round_id: str | None = None) -> list[RoundProgress]:
    assessor_id, role = who
    if role == "organiser":  # every round, read beside the pages' work (round_progress)
        return await gate(request).read(organiser_rounds, round_id)
    return await answer(request, "assessor_rounds", assessor_id)


def _round_json(r: RoundProgress) -> dict[str, Any]:
    return {"round_id": r.round_id, "adaptive": r.adaptive, "assigned": r.assigned,
            "judged": r.judged, "withdrawn": r.withdrawn, "topics": [vars(t) for t in r.topics]}


def _page_json(page: JudgingPage) -> dict[str, Any]:
    return {
        "done": False, "round_id": page.round_id, "adaptive": page.adaptive,
        "topic": vars(page.topic), "doc_id": page.doc_id,
        "title": None if page.doc_missing else plain(page.doc_title),
        "text": None if page.doc_missing else plain(page.doc_text),
        "title_html": str(page.doc_title), "text_html": str(page.doc_text),
        "doc_missing": page.doc_missing,
        "grades": [{"grade": g.value, "label": g.label, "key": g.key} for g in page.grades],
        "current_grade": page.current_grade, "position": page.position, "total": page.total,
        "judged": page.judged, "prev_doc": page.prev_doc, "next_doc": page.next_doc,
        "skip_doc": page.skip_doc, "can_undo": page.can_undo,
        "can_answer_unjudgeable": page.unjudgeable,
        "current_unjudgeable": page.current_unjudgeable,
        # A fresh id for this view: a retried submission is stored once.
        "submission_id": uuid.uuid4().hex,
        "unit": page.unit_word.lower(),
    } | ({"handout": page.handout} if page.handout else {}) | _parts_json(page)


def _parts_json(page: JudgingPage) -> dict[str, Any]:
    """A round judged on parts: each part with this caller's current grade, as `parts` (and
    as `subtopics` in a subtopic round, the name it had first)."""
    if not page.subtopics:
        return {}
    parts = [{"part": s.number, "text": s.text, "current_grade": s.current_grade}
             for s in page.subtopics]
    out: dict[str, Any] = {"part": page.part_word, "parts": parts}
    if page.part_word == "subtopic":
        out["subtopics"] = [{"subtopic": p["part"], "text": p["text"],
                             "current_grade": p["current_grade"]} for p in parts]
    return out


def plain(html: Markup) -> str:
    """The text `pooling.web.highlight.highlight` made `html` from.

    Its output is escaped text (which holds no '<') plus the `<mark>` tags it adds, so
    dropping those tags and unescaping once gives the original text back exactly.
    """
    return Markup(str(html).replace("<mark>", "").replace("</mark>", "")).unescape()


# -- submissions -----------------------------------------------------------------------------


async def judge(request: Request) -> Response:
    """Judge one document, as the judging page's POST does (idempotent by submission_id)."""
    assessor_id, role = await _caller(request)
    body = await _body(request, JUDGMENT_FIELDS)
    if "grade" not in body and "grades" not in body and not body.get("unjudgeable"):
        raise HTTPException(422, "missing field(s) grade (or grades, a grade per subtopic in a "
                                 "subtopic round, or unjudgeable: true for a document that "
                                 f"cannot be judged); expected {', '.join(JUDGMENT_FIELDS)}")
    round_id, query_id = request.path_params["round_id"], request.path_params["query_id"]
    try:
        outcome = await answer(
            request, "judge", assessor_id, role, round_id, query_id, body["doc_id"],
            grade=body.get("grade"), submission_id=body["submission_id"],
            seconds=body.get("seconds"), note=body.get("note"), grades=body.get("grades"),
            unjudgeable=body.get("unjudgeable"), handout=body.get("handout"))
    except SubmissionConflict as exc:  # the id was used for something else: nothing dropped
        return conflict_error(exc)
    except StoreError as exc:  # a judgment the core refuses: a bad grade, note, seconds, id, text
        raise HTTPException(422, str(exc)) from exc
    if outcome is None:
        raise _not_found()
    return JSONResponse({"stored": not outcome.duplicate, "duplicate": outcome.duplicate,
                         "doc_id": outcome.doc_id})



async def undo(request: Request) -> Response:
    """Retract the caller's latest current judgment of the topic (idempotent by submission_id)."""
    assessor_id, role = await _caller(request)
    body = await _body(request, UNDO_FIELDS)
    round_id, query_id = request.path_params["round_id"], request.path_params["query_id"]
    try:
        outcome = await answer(request, "undo", assessor_id, role, round_id, query_id,
                               submission_id=body["submission_id"])
    except SubmissionConflict as exc:
        return conflict_error(exc)
    except NothingToUndo as exc:
        raise HTTPException(409, str(exc)) from exc
    except JudgmentRefused as exc:  # a malformed submission id
        raise HTTPException(422, str(exc)) from exc
    if outcome is None:
        raise _not_found()
    return JSONResponse({"undone": outcome.doc_id, "duplicate": outcome.duplicate})


async def openapi(request: Request) -> Response:
    return JSONResponse(DOCUMENT)


# -- the app ---------------------------------------------------------------------------------


TOPIC = "/rounds/{round_id}/topics/{query_id}"
ROUTES = [
    Route("/openapi.json", openapi),
    Route("/rounds", rounds),
    EncodedRoute("/rounds/{round_id}/progress", progress),
    EncodedRoute(f"{TOPIC}/next", next_document),
    EncodedRoute(TOPIC + "/docs/{doc_id:path}", document),
    EncodedRoute(f"{TOPIC}/judgments", judge, methods=["POST"]),
    EncodedRoute(f"{TOPIC}/undo", undo, methods=["POST"]),
]


async def _error(request: Request, exc: Exception) -> Response:
    """Every error as `{"error": ...}`; 404 is the same whatever was asked for."""
    status = getattr(exc, "status_code", 500)
    message = NOT_FOUND if status == 404 else str(getattr(exc, "detail", ""))
    return JSONResponse({"error": message}, status_code=status,
                        headers=getattr(exc, "headers", None))


async def _crash(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "internal server error"}, status_code=500)


def create_api(gate: StoreGate, live: LiveCampaign, throttle: LoginThrottle | None = None,
               book: SessionBook | None = None) -> Starlette:
    """The API as an app of its own (JSON errors), to mount at `openapi.API_ROOT` beside the
    pages, sharing their store gate, judging state and count of failed logins."""
    api = Starlette(routes=ROUTES, exception_handlers={HTTPException: _error, WriteFailed: write_failed,
                                                       Exception: _crash})
    api.state.gate, api.state.live, api.state.book = gate, live, book
    api.state.throttle = throttle or LoginThrottle()
    return api
