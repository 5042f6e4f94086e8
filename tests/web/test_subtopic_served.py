"""Subtopic judgments from an organiser's tool (an automatic judge's batches) reach a served
store's one judgment writer with their subtopic."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO_ROOT, build_campaign
from inprocess import app_on, serving

from pooling.judging.assessors import assign
from pooling.judging.rounds import create_round
from pooling.store import Store

TOOL = """
import sys
from pooling.judging.judgments import Judgment, append_judgments
from pooling.store import Store
with Store(sys.argv[1]) as s:
    assert s.remote
    print(append_judgments(s, [Judgment("div", "ann", "1", "d1", g, part=n,
                              submission_id="tool-000000000000000" + n)
                     for n, g in (("1", 2), ("2", 0))]))
"""


def test_subtopic_judgments_sent_to_a_served_store_keep_their_subtopic(tmp_path):
    campaign = build_campaign(tmp_path)
    with Store(campaign.path) as s:
        s.con.execute("UPDATE topics SET extra = ? WHERE query_id = '1'", [json.dumps(
            {"subtopics": [{"number": "1", "text": "prices"}, {"number": "2", "text": "savings"}]})])
        create_round(s, "div", "depth", strategy_params={"depth": 2}, topics=["1"],
                     subtopics=True)
        assign(s, "div", ["ann"])
    with app_on(campaign.path) as app, serving(app, campaign.path):
        done = subprocess.run([sys.executable, "-c", TOOL, str(campaign.path)], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "(2, 0)"
    with Store(campaign.path, read_only=True) as s:
        rows = s.con.execute("SELECT doc_id, part, grade FROM judgments ORDER BY seq").fetchall()
    assert rows == [("d1", "1", 2), ("d1", "2", 0)]
