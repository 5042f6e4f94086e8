"""The round agreement's per-pair statistics read alike wherever they are shown: the
organiser's round page and `pooling agreement --round` walk one ordered list
(`PAIR_STATISTICS`), with each pair's values under its own header."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO_ROOT, build_campaign
from inprocess import app_on, logged_in

from pooling.agreement.report import PAIR_STATISTICS
from pooling.judging.assessors import assign
from pooling.judging.assignments import load_assignments
from pooling.judging.judgments import Judgment, record
from pooling.judging.rounds import create_round
from pooling.judging.rules import round_agreement
from pooling.store import Store


def overlapping_round(tmp_path):
    """Round r2 judged twice over: ann and bob grade its overlap documents differently."""
    campaign = build_campaign(tmp_path)
    with Store(campaign.path) as s:
        create_round(s, "r2", "depth", strategy_params={"depth": 4})
        assign(s, "r2", ["ann", "bob"], overlap=1.0, seed=1)
        work = load_assignments(s, "r2")
        judgments, n = [], 0
        for person in ("ann", "bob"):
            for topic, docs in work.queue.items():
                for position, doc in enumerate(docs):
                    if work.may_judge(person, "assessor", topic, doc):
                        grade = position % 3 if person == "ann" else min(position, 2)
                        judgments.append(Judgment("r2", person, topic, doc, grade,
                                                  submission_id=f"s{n:015d}"))
                        n += 1
        record(s, judgments)
        report = round_agreement(s, "r2")
    assert report.pairs, "the round has pairs judged by both"
    values = [getattr(report.pairs[0], field) for field, _, _ in PAIR_STATISTICS]
    assert len({round(v, 3) for v in values}) == len(values), "values tell the columns apart"
    return campaign, report.pairs[0]


def test_the_round_page_shows_each_pair_statistic_under_its_header_in_order(tmp_path):
    campaign, pair = overlapping_round(tmp_path)
    with app_on(campaign.path) as app:
        page = logged_in(app, campaign.tokens["org"]).get("/organiser/rounds/r2").text
    table = page[page.index("Agreement so far"):]
    headers = re.findall(r'<th class="num">([^<]*)</th>', table)
    assert headers == ["Pairs", *(header for _, _, header in PAIR_STATISTICS)]
    row = re.search(r"<td>ann / bob</td>(.*?)</tr>", table).group(1)
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    assert cells[0] == str(pair.n)
    assert len(cells) == 1 + len(PAIR_STATISTICS)
    for (field, _, _), cell in zip(PAIR_STATISTICS, cells[1:], strict=True):
        assert abs(float(cell) - getattr(pair, field)) < 1e-3


def test_the_agreement_command_prints_the_same_statistics_in_the_same_order(tmp_path):
    campaign, pair = overlapping_round(tmp_path)
    done = subprocess.run([sys.executable, "-m", "pooling", "agreement", str(campaign.path),
                           "--round", "r2"], capture_output=True, text=True, timeout=120,
                          cwd=REPO_ROOT, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if "┃ assessors" in line)
    positions = [header.index(term) for _, term, _ in PAIR_STATISTICS]
    assert positions == sorted(positions)
    row = next(line for line in done.stdout.splitlines() if "ann / bob" in line)
    values = re.findall(r"-?\d+\.\d{3}", row)
    assert values == [f"{getattr(pair, field):.3f}" for field, _, _ in PAIR_STATISTICS]
