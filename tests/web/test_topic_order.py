"""Topics are listed to people in natural order (2, 10, 12, 101, 103), not as text (10, 101,
103, 12, 2): on the assessor's page, the organiser's round page and in the JSON API."""

from __future__ import annotations

import json
import re

from inprocess import app_on, client, logged_in

from pooling.judging.assessors import add_assessor, assign
from pooling.judging.rounds import create_round
from pooling.store import Store
from pooling.web.topic_order import in_topic_order

TOPICS = ["10", "101", "103", "12", "2"]  # as text sorts them
NATURAL = ["2", "10", "12", "101", "103"]


def test_topic_ids_sort_numbers_as_numbers_and_the_rest_as_text():
    assert in_topic_order(TOPICS) == NATURAL
    assert in_topic_order(["L10", "L9", "L010", "B2", "a", "2024-q3", "2024-q10", ""]) == [
        "", "2024-q3", "2024-q10", "B2", "L9", "L010", "L10", "a"]


def test_every_list_of_topics_shown_to_people_is_in_natural_order(tmp_path):
    path = tmp_path / "order.duckdb"
    run = tmp_path / "a.run"
    run.write_text("".join(f"{q} Q0 {q}-d{i} {i + 1} {9 - i} A\n" for q in TOPICS for i in range(2)))
    (tmp_path / "topics.jsonl").write_text("".join(
        json.dumps({"query_id": q, "title": f"topic {q}"}) + "\n" for q in TOPICS))
    with Store.create(path) as s:
        s.import_runs([run])
        s.import_topics(tmp_path / "topics.jsonl")
        create_round(s, "r1", "depth", strategy_params={"depth": 2})
        ann = add_assessor(s, "ann").token
        org = add_assessor(s, "org", role="organiser").token
        assign(s, "r1", ["ann"])
    with app_on(path) as app:
        home = logged_in(app, ann).get("/").text
        assert re.findall(r'href="/rounds/r1/topics/([^"/]+)"', home) == NATURAL
        round_page = logged_in(app, org).get("/organiser/rounds/r1").text
        listed = re.findall(r"<tr><td>([^<]+)</td><td>topic ", round_page)
        assert listed == NATURAL
        for token in (ann, org):
            api = client(app).get("/api/v1/rounds", headers={"authorization": f"Bearer {token}"})
            assert [t["query_id"] for t in api.json()["rounds"][0]["topics"]] == NATURAL
