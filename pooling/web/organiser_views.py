"""The organiser's pages: progress, throughput, agreement, adjudication, campaign operations.

Operations call the library (`add_assessor`, `assign`, `create_round`, `derive_qrels`) under
the store lock; their errors come back as a message on the page. Assessors get the same 404
here as for any page that does not exist.
"""

from __future__ import annotations

import io
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from pooling.errors import PoolingError
from pooling.web import campaign
from pooling.web.pages import (
    Body,
    LoginRequired,
    gate,
    not_found,
    post_data,
    redirect,
    render,
    session,
)
from pooling.web.sessions import Session

DERIVE_RULES = ("majority", "latest", "primary", "adjudicated", "mean")


def _organiser(request: Request) -> Session:
    sess = session(request)
    if sess is None:
        raise LoginRequired
    if not sess.is_organiser:
        raise not_found()
    return sess


def _overview(store) -> dict:
    from pooling.strategies import REGISTRY

    return {
        "rounds": campaign.round_statuses(store),
        "throughput": campaign.throughput(store),
        "people": campaign.people(store),
        "qrels": campaign.qrels_versions(store),
        "strategies": sorted(REGISTRY),
        "rules": DERIVE_RULES,
    }


async def overview(request: Request) -> Response:
    sess = _organiser(request)
    data = await gate(request).run(_overview)
    return render(request, "organiser.html", data, sess=sess)


async def round_page(request: Request) -> Response:
    sess = _organiser(request)
    detail = await gate(request).run(campaign.round_detail, request.path_params["round_id"])
    if detail is None:
        raise not_found()
    return render(request, "organiser_round.html", {"detail": detail}, sess=sess)


# -- operations --------------------------------------------------------------------------------


async def add_person(request: Request) -> Response:
    """Add an assessor or organiser; the page shows their token and login link once."""
    from pooling.judging.assessors import add_assessor

    sess = _organiser(request)
    body = await post_data(request, sess)
    role = body.get("role") if body.get("role") in ("assessor", "organiser") else "assessor"
    name = str(body.get("name") or "").strip()
    contact = str(body.get("contact") or "").strip() or None
    try:
        new = await gate(request).run(add_assessor, name, contact=contact, role=role)
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    link = f"{str(request.base_url).rstrip('/')}/login?token={quote(new.token, safe='')}"
    return render(request, "token.html", {"new": new, "link": link}, sess=sess)


async def assign_work(request: Request) -> Response:
    from pooling.judging.assessors import assign

    sess = _organiser(request)
    body = await post_data(request, sess)
    round_id = str(body.get("round") or "")
    people = [str(a) for a in body.getlist("assessors")]
    try:
        counts = await gate(request).run(assign, round_id, people, overlap=_float(body, "overlap", 0.0),
                                         seed=_int(body, "seed", 0) or 0)
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    summary = ", ".join(f"{a}: {n}" for a, n in counts.items())
    return redirect("/organiser", flash=f"round {round_id} assigned ({summary})")


async def new_round(request: Request) -> Response:
    """Pool a new round (as `pooling pool` does)."""
    from pooling.judging.rounds import create_round

    sess = _organiser(request)
    body = await post_data(request, sess)
    name = str(body.get("name") or "").strip()
    try:
        grades = tuple(int(g) for g in str(body.get("grades") or "0,1,2").split(","))
        depth = _int(body, "depth", None)
        params = {"depth": str(depth)} if depth and body.get("strategy") == "depth" else {}
        summary = await gate(request).run(
            create_round, name, str(body.get("strategy") or "depth"), strategy_params=params,
            depth=depth, budget=_int(body, "budget", None), stop_after=_int(body, "stop_after", None),
            seed=_int(body, "seed", 0) or 0, grades=grades)
    except ValueError:
        return redirect("/organiser", flash="grades, depth, budget and seed are whole numbers",
                        error=True)
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    r = summary.round
    what = "adaptive, served live" if r.adaptive else f"{summary.entries} documents queued"
    return redirect("/organiser", flash=f"round {r.round_id}: {r.strategy} over "
                                        f"{len(r.topics)} topics, {what}")


async def derive(request: Request) -> Response:
    from pooling.judging.rules import derive_qrels

    sess = _organiser(request)
    body = await post_data(request, sess)
    rule = str(body.get("rule") or "")
    name = str(body.get("name") or "").strip()
    round_id = str(body.get("round") or "") or None
    try:
        r = await gate(request).run(derive_qrels, rule, name, round_id=round_id,
                                    tie=str(body.get("tie") or "lower"))
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    return redirect("/organiser", flash=f"qrels version {r.name}: {r.n_rows} judgments on "
                                        f"{r.n_topics} topics (rule {rule})")


# -- downloads ---------------------------------------------------------------------------------


async def qrels_download(request: Request) -> Response:
    _organiser(request)
    name = request.path_params["name"]

    def export(store) -> str | None:
        if name not in store.qrels_versions():
            return None
        out = io.StringIO()
        store.export_qrels(out, name)
        return out.getvalue()

    text = await gate(request).run(export)
    if text is None:
        raise not_found()
    return _attachment(text.encode(), f"{name}.qrels", "text/plain; charset=utf-8")


async def history_download(request: Request) -> Response:
    """The full judgment history (judgments and retractions, in order) as CSV."""
    import pyarrow.csv as pacsv

    from pooling.judging.judgments import history

    _organiser(request)
    table = await gate(request).run(history)
    out = io.BytesIO()
    pacsv.write_csv(table, out)
    return _attachment(out.getvalue(), "judgments.csv", "text/csv; charset=utf-8")


def _attachment(content: bytes, filename: str, media_type: str) -> Response:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in filename)
    return Response(content, media_type=media_type,
                     headers={"Content-Disposition": f'attachment; filename="{safe}"'})


def _int(body: Body, name: str, default: int | None) -> int | None:
    value = str(body.get(name) or "").strip()
    return int(value) if value else default


def _float(body: Body, name: str, default: float) -> float:
    value = str(body.get(name) or "").strip()
    try:
        return float(value) if value else default
    except ValueError:
        return -1.0  # out of range: the library says what is allowed
