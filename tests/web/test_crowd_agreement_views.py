"""A crowd round's agreement on the organiser's round page and in `pooling agreement --round`:
each worker against the others (no table over pairs of workers), and per topic how many
workers answered instead of a judged/assigned cell per worker."""

from __future__ import annotations

import random
import re

from conftest import build_campaign
from inprocess import app_on, logged_in
from typer.testing import CliRunner

from pooling.agreement.report import PAIRWISE_MAX_ASSESSORS
from pooling.cli.app import app
from pooling.judging.assessors import add_assessor
from pooling.judging.judgments import Judgment, append_judgments
from pooling.judging.rounds import create_round
from pooling.judging.rules import round_agreement
from pooling.store import Store

WORKERS = [f"w{i:02d}" for i in range(PAIRWISE_MAX_ASSESSORS + 4)]


def crowd_round(tmp_path):
    """Round crowd (K=3) over the campaign's pool, each pair answered by three of 14 workers;
    topic 2's pairs by the first seven only."""
    campaign = build_campaign(tmp_path)
    rng = random.Random(5)
    with Store(campaign.path) as s:
        create_round(s, "crowd", "depth", strategy_params={"depth": 4}, redundancy=3)
        for w in WORKERS:
            add_assessor(s, w)
        pairs = s.sql("pool", "SELECT query_id, doc_id FROM pool_entries WHERE round_id = "
                      "'crowd' ORDER BY 1, 2").fetchall()
        judgments = []
        for q, d in pairs:
            for w in rng.sample(WORKERS if q == "1" else WORKERS[:7], 3):
                judgments.append(Judgment("crowd", w, q, d, rng.randint(0, 2)))
        append_judgments(s, judgments)
        report = round_agreement(s, "crowd")
    answered = {q: len({j.assessor_id for j in judgments if j.query_id == q}) for q in "12"}
    return campaign, report, answered


def test_the_round_page_sets_each_worker_against_the_others(tmp_path):
    campaign, report, answered = crowd_round(tmp_path)
    assert not report.pairwise and report.pairs == ()
    with app_on(campaign.path) as served:
        page = logged_in(served, campaign.tokens["org"]).get("/organiser/rounds/crowd").text
    assert f"{len(report.assessors)} assessors" in page and "w00, w01" not in page
    topics = re.findall(r"<td>(\d+) worker\(s\) answered</td>", page)
    assert topics == [str(answered["1"]), str(answered["2"])]
    table = page[page.index('id="per-assessor"'):]
    assert " / " not in table.split("</table>")[0]  # no row for a pair of workers
    rows = re.findall(r"<tr><td>(w\d\d)</td>((?:<td class=\"num\">[^<]*</td>)+)</tr>", table)
    assert [w for w, _ in rows] == [a.assessor for a in report.per_assessor]
    for (_, cells), a in zip(rows, report.per_assessor, strict=True):
        n, answers, agreement, kappa = re.findall(r'<td class="num">([^<]*)</td>', cells)
        assert (int(n), int(answers)) == (a.n, a.answers)
        assert abs(float(agreement) - a.agreement) < 1e-3 and abs(float(kappa) - a.kappa) < 1e-3


def test_the_command_prints_each_worker_against_the_others(tmp_path):
    campaign, report, _ = crowd_round(tmp_path)
    result = CliRunner().invoke(app, ["agreement", str(campaign.path), "--round", "crowd"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert f"{len(report.assessors)} assessors: each against the others" in result.output
    for a in report.per_assessor:
        assert re.search(rf"{a.assessor}\s+│\s+{a.n}\s+│\s+{a.answers}\s+│\s+{a.agreement:.3f}",
                         result.output), a.assessor


def test_the_adjudication_queue_is_shown_a_page_at_a_time_and_every_pair_is_on_one_page(
        tmp_path, monkeypatch):
    from pooling.judging.rules import adjudication_queue
    from pooling.web import organiser_views

    campaign, _, _ = crowd_round(tmp_path)
    with Store(campaign.path, read_only=True) as s:
        queue = adjudication_queue(s, "crowd").to_pylist()
    assert len(queue) > 3
    monkeypatch.setattr(organiser_views, "QUEUE_PAGE_ROWS", 3)
    pages = -(-len(queue) // 3)
    seen = []
    with app_on(campaign.path) as served:
        client = logged_in(served, campaign.tokens["org"])
        for page in range(1, pages + 1):
            html = client.get(f"/organiser/rounds/crowd?queue={page}").text
            section = html[html.index("adjudication queue"):]
            shown = re.findall(r"/topics/([^/]+)/docs/([^\"]+)\">", section)
            assert len(shown) == (3 if page < pages else len(queue) - 3 * (pages - 1))
            assert f"of {len(queue)}" in section
            assert ("next</a>" in section) == (page < pages)
            assert ("previous</a>" in section) == (page > 1)
            seen += shown
        past_the_end = client.get(f"/organiser/rounds/crowd?queue={pages + 5}").text
        refused = client.get("/organiser/rounds/crowd?queue=x")
    assert sorted(seen) == sorted((r["query_id"], r["doc_id"]) for r in queue)
    assert len(set(seen)) == len(seen)
    assert "previous</a>" in past_the_end and "next</a>" not in past_the_end  # the last page
    assert refused.status_code == 400 and "queue must be a whole number" in refused.text


def test_a_page_of_the_queue_is_cut_from_the_whole_in_order():
    from pooling.web.organiser_views import queue_page

    rows = [{"i": i} for i in range(7)]
    assert queue_page(rows, 1, 3) == {"rows": rows[:3], "page": 1, "pages": 3, "first": 1, "total": 7}
    assert queue_page(rows, 3, 3)["rows"] == rows[6:]
    assert queue_page(rows, 9, 3)["page"] == 3 and queue_page(rows, 0, 3)["page"] == 1
    assert queue_page([], 1, 3) == {"rows": [], "page": 1, "pages": 1, "first": 1, "total": 0}
