"""The organiser's pages: progress, throughput, agreement, adjudication, campaign operations.

Operations call the library (`add_assessor`, `revoke`, `issue_token`, `assign`, `create_round`,
`derive_qrels`, the decisions about crowd workers) under the store lock; their errors come
back as a message on the page. Form fields are typed and ranged first (`pooling.web.fields`):
a wrong one is a 400 naming it. Assessors get the same 404 here as for any page that does
not exist.
"""

from __future__ import annotations

import io
import threading
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from pooling.agreement.report import (
    ASSESSOR_STATISTICS,
    PAIR_STATISTICS,
    PAIRWISE_MAX_ASSESSORS,
)
from pooling.crowds.model_rules import MODEL_RULES
from pooling.errors import PoolingError
from pooling.formats.csv_cells import safe_text_columns
from pooling.judging.assessors import ROLES
from pooling.web import campaign
from pooling.web.fields import choice, number, text, texts, whole_number, whole_numbers
from pooling.web.pages import (
    LoginRequired,
    gate,
    not_found,
    post_data,
    redirect,
    render,
    session,
)
from pooling.web.sessions import Session

DERIVE_RULES = ("majority", "latest", "primary", "adjudicated", "mean", *MODEL_RULES)
# The ranges of the forms' numbers (a seed is a BIGINT in the store).
MAX_DEPTH = 100_000
MAX_BUDGET = 1_000_000
MAX_GRADE = 1_000
MAX_SEED = 2**63 - 1
WORKER_MEASURES = {"accuracy": "accuracy", "binary": "binary accuracy", "kappa": "Cohen's κ"}


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
    # Beside the assessors' work, not before it; given up if the organiser leaves.
    data = await gate(request).read_while_connected(request, _overview)
    return render(request, "organiser.html", data, sess=sess)


# Disagreements shown per page of the round page: a crowd round's queue runs to thousands of
# pairs, and an organiser adjudicates a page at a time (`pooling qrels adjudication` lists all).
QUEUE_PAGE_ROWS = 200


def queue_page(rows: list[dict], page: int, size: int) -> dict:
    """Page `page` (1-based; past the last: the last) of the adjudication queue: its rows,
    the page, the number of pages and the 1-based index of its first row."""
    pages = max(1, -(-len(rows) // size))
    page = min(max(page, 1), pages)
    start = (page - 1) * size
    return {"rows": rows[start:start + size], "page": page, "pages": pages,
            "first": start + 1, "total": len(rows)}


async def round_page(request: Request) -> Response:
    sess = _organiser(request)
    page = whole_number(request.query_params, "queue", low=1, high=10**9, default=1)
    detail = await gate(request).read_while_connected(request, campaign.round_detail,
                                                      request.path_params["round_id"])
    if detail is None:
        raise not_found()
    return render(request, "organiser_round.html",
                  {"detail": detail, "queue": queue_page(detail.adjudication, page, QUEUE_PAGE_ROWS),
                   "pair_statistics": PAIR_STATISTICS,
                   "assessor_statistics": ASSESSOR_STATISTICS,
                   "pairwise_max": PAIRWISE_MAX_ASSESSORS}, sess=sess)


class WorkerReports:
    """The last workers' report of each (round, gold version), with its `quality_mark`: the
    Workers page sorted again, or reloaded with nothing new, costs no recomputation. Reads
    run on several cursors at once, hence the lock."""

    def __init__(self, kept: int = 8):
        self._kept, self._held, self._lock = kept, {}, threading.Lock()

    def get(self, key: tuple, mark: tuple):
        with self._lock:
            held = self._held.get(key)
        return held[1] if held is not None and held[0] == mark else None

    def put(self, key: tuple, mark: tuple, report) -> None:
        with self._lock:
            self._held.pop(key, None)
            while len(self._held) >= self._kept:
                self._held.pop(next(iter(self._held)))
            self._held[key] = (mark, report)


def _workers(store, round_id: str, gold: str | None, sort: str, descending: bool,
             reports: WorkerReports) -> dict | None:
    """A round's workers with their quality (or why it cannot be measured yet), for the page."""
    from pooling.crowds.quality import gold_version, quality_mark, round_quality

    if campaign.find_round(store, round_id) is None:
        return None
    data: dict = {"round_id": round_id, "sort": sort, "descending": descending,
                  "versions": [v["name"] for v in campaign.qrels_versions(store)],
                  "report": None, "problem": None, "gold": gold}
    try:
        version = gold_version(store, round_id, gold)
        mark = quality_mark(store, round_id, version)
        report = reports.get((round_id, version), mark)
        if report is None:
            report = round_quality(store, round_id, gold=version)
            reports.put((round_id, version), mark, report)
    except PoolingError as exc:
        data["problem"] = str(exc)
        return data
    data.update(report=report, gold=report.gold, rows=[
        _worker_cells(q, report.decision_of(q.assessor_id))
        for q in report.sorted(sort, descending=descending)])
    return data


def _worker_cells(q, decision: str) -> tuple[str, ...]:
    """A worker's row of the Workers page as text: id, decision, counts, each figure and its
    interval ("—" and "" before enough gold answers), agreement and the pairs it is on."""
    def figure(measure: str) -> tuple[str, str]:
        value, low, high = q.figure(measure)
        return ("—", "") if value is None else (f"{value:.3f}", f"[{low:.2f}, {high:.2f}]")

    shown = {"withdraw": "withdrawn", "flag": "flagged"}.get(decision, "")
    return (q.assessor_id, shown, str(q.answers), str(q.unjudgeable), str(q.gold_answered),
            *figure("accuracy"), *figure("binary"), *figure("kappa"),
            "—" if q.agreement is None else f"{q.agreement:.3f}",
            f"({q.shared})" if q.shared else "",
            "—" if q.median_seconds is None else f"{q.median_seconds:.1f}")


async def workers_page(request: Request) -> Response:
    """A crowd round's workers: quality on gold with intervals, sortable; flag, withdraw, clear."""
    from pooling.crowds.quality import SORT_KEYS

    sess = _organiser(request)
    query = request.query_params
    sort = choice(query, "sort", tuple(SORT_KEYS), "worker")
    descending = choice(query, "desc", ("0", "1"), "0") == "1"
    gold = text(query, "gold") or None
    data = await gate(request).read_while_connected(request, _workers,
                                                    request.path_params["round_id"], gold, sort,
                                                    descending, request.app.state.worker_reports)
    if data is None:
        raise not_found()
    return render(request, "organiser_workers.html", {**data, "measures": WORKER_MEASURES},
                  sess=sess)


async def decide_workers(request: Request) -> Response:
    """Record a decision about workers: named ones, or those confidently below a bar."""
    from pooling.crowds.quality import decide, flag_below

    sess = _organiser(request)
    body = await post_data(request, sess)
    round_id = request.path_params["round_id"]
    decision = choice(body, "decision", ("flag", "withdraw", "clear"), "flag")
    reason = text(body, "reason")
    gold = text(body, "gold") or None
    back = f"/organiser/rounds/{quote(round_id, safe='')}/workers" + (
        f"?gold={quote(gold, safe='')}" if gold else "")
    workers = texts(body, "workers")
    bar = body.get("bar")
    try:
        if bar not in (None, ""):
            if decision == "clear":
                return redirect(back, flash="A bar flags or withdraws; clear names its workers. "
                                            "Nothing was recorded.", error=True)
            measure = choice(body, "measure", tuple(WORKER_MEASURES), "accuracy")
            chosen = await gate(request).run(
                flag_below, round_id, number(body, "bar", low=-1.0, high=1.0, default=0.0),
                measure=measure, withdraw=decision == "withdraw", reason=reason or None,
                gold=gold, decided_by=sess.assessor_id)
            names = [q.assessor_id for q in chosen]
            if not names:
                return redirect(back, flash=f"No worker newly found with "
                                            f"{WORKER_MEASURES[measure]} confidently below the "
                                            "bar; nothing was recorded.")
        else:
            await gate(request).run(decide, round_id, workers, decision, reason=reason,
                                    decided_by=sess.assessor_id)
            names = workers
    except PoolingError as exc:
        return redirect(back, flash=str(exc), error=True)
    # The judging pages hand a withdrawn worker nothing more: they read the decisions again.
    await run_in_threadpool(request.app.state.live.refresh, frozenset({"worker_decisions"}))
    return redirect(back, flash=f"{decision}: {', '.join(names)} (recorded)")


# -- operations --------------------------------------------------------------------------------


async def add_person(request: Request) -> Response:
    """Add an assessor or organiser; the page shows their token and login link once."""
    from pooling.judging.assessors import add_assessor

    sess = _organiser(request)
    body = await post_data(request, sess)
    role = choice(body, "role", ROLES, "assessor")
    name = text(body, "name")
    contact = text(body, "contact") or None
    try:
        new = await gate(request).run(add_assessor, name, contact=contact, role=role)
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    link = f"{str(request.base_url).rstrip('/')}/login?token={quote(new.token, safe='')}"
    return render(request, "token.html", {"new": new, "link": link}, sess=sess)


async def revoke_person(request: Request) -> Response:
    """Take a person's access back: their token stops working, their sessions end now."""
    from pooling.judging.assessors import revoke

    sess = _organiser(request)
    await post_data(request, sess)
    book = request.app.state.book

    def do(store) -> str:
        assessor_id = revoke(store, request.path_params["assessor_id"])
        book.load(store)
        return assessor_id

    try:
        assessor_id = await gate(request).run(do)
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    return redirect("/organiser", flash=f"{assessor_id}'s token no longer logs in and their "
                                        "sessions have ended; issue a new token to let them back")


async def new_token(request: Request) -> Response:
    """Issue a person a new token (shown once); the old one and its sessions end."""
    from pooling.judging.assessors import issue_token

    sess = _organiser(request)
    await post_data(request, sess)
    book = request.app.state.book

    def do(store):
        new = issue_token(store, request.path_params["assessor_id"])
        book.load(store)
        return new

    try:
        new = await gate(request).run(do)
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    if new.assessor_id == sess.assessor_id:  # their own session has just ended
        sess = None
    link = f"{str(request.base_url).rstrip('/')}/login?token={quote(new.token, safe='')}"
    return render(request, "token.html", {"new": new, "link": link, "renewed": True}, sess=sess)


async def assign_work(request: Request) -> Response:
    from pooling.judging.assessors import assign

    sess = _organiser(request)
    body = await post_data(request, sess)
    round_id = text(body, "round")
    people = texts(body, "assessors")
    overlap = number(body, "overlap", low=0.0, high=1.0, default=0.0)
    seed = whole_number(body, "seed", low=0, high=MAX_SEED, default=0)
    try:
        counts = await gate(request).run(assign, round_id, people, overlap=overlap, seed=seed)
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    summary = ", ".join(f"{a}: {n}" for a, n in counts.items())
    return redirect("/organiser", flash=f"round {round_id} assigned ({summary})")


async def new_round(request: Request) -> Response:
    """Pool a new round (as `pooling pool` does)."""
    from pooling.judging.rounds import MAX_REDUNDANCY, create_round

    sess = _organiser(request)
    body = await post_data(request, sess)
    name = text(body, "name")
    strategy = text(body, "strategy", "depth")
    grades = whole_numbers(body, "grades", low=-MAX_GRADE, high=MAX_GRADE, default=(0, 1, 2))
    depth = whole_number(body, "depth", low=1, high=MAX_DEPTH)
    budget = whole_number(body, "budget", low=1, high=MAX_BUDGET)
    stop_after = whole_number(body, "stop_after", low=1, high=MAX_DEPTH)
    seed = whole_number(body, "seed", low=0, high=MAX_SEED, default=0)
    redundancy = whole_number(body, "redundancy", low=1, high=MAX_REDUNDANCY, default=1)
    gold = text(body, "gold") or None
    gold_rate = number(body, "gold_rate", low=0.0, high=1.0, default=0.0) or None
    if not name:  # a round's id names it in every link, command and export
        return redirect("/organiser", flash="A new round needs a name (its id, e.g. round2); "
                                            "nothing was pooled.", error=True)
    params = {"depth": str(depth)} if depth and strategy == "depth" else {}
    try:
        summary = await gate(request).run(
            create_round, name, strategy, strategy_params=params, depth=depth, budget=budget,
            stop_after=stop_after, seed=seed, grades=grades, redundancy=redundancy, gold=gold,
            gold_rate=gold_rate if gold else None)
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    r = summary.round
    what = "adaptive, served live" if r.adaptive else f"{summary.entries} documents queued"
    return redirect("/organiser", flash=f"round {r.round_id}: {r.strategy} over "
                                        f"{len(r.topics)} topics, {what}")


async def derive(request: Request) -> Response:
    from pooling.judging.rules import derive_qrels
    from pooling.store.sampled_qrels import derived_sample_note

    sess = _organiser(request)
    body = await post_data(request, sess)
    rule = text(body, "rule")
    name = text(body, "name")
    round_id = text(body, "round") or None
    tie = choice(body, "tie", ("lower", "higher"), "lower")
    gold = text(body, "gold") or None
    try:
        r = await gate(request).run(derive_qrels, rule, name, round_id=round_id, tie=tie,
                                    gold=gold)
    except PoolingError as exc:
        return redirect("/organiser", flash=str(exc), error=True)
    sampled = await gate(request).run(derived_sample_note, r.name)
    return redirect("/organiser", flash=f"qrels version {r.name}: {r.n_rows} judgments on "
                                        f"{r.n_topics} topics (rule {rule}){sampled}")


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

    text = await gate(request).read(export)
    if text is None:
        raise not_found()
    return _attachment(text.encode(), f"{name}.qrels", "text/plain; charset=utf-8")


async def history_download(request: Request) -> Response:
    """The full judgment history (judgments and retractions, in order) as CSV."""
    import pyarrow.csv as pacsv

    from pooling.judging.judgments import history

    _organiser(request)
    table = await gate(request).read(history)
    out = io.BytesIO()
    pacsv.write_csv(safe_text_columns(table), out)  # a note is never run as a formula
    return _attachment(out.getvalue(), "judgments.csv", "text/csv; charset=utf-8")


def _attachment(content: bytes, filename: str, media_type: str) -> Response:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in filename)
    return Response(content, media_type=media_type,
                     headers={"Content-Disposition": f'attachment; filename="{safe}"'})

