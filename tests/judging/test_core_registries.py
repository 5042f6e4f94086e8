"""The judging core asks its registries for what packages above it provide: a crowd round's
queue policy and may-judge extension, and the aggregation rules, all registered by
`pooling.crowds` (declared as entry points), never imported by the core. Without them a
crowd round refuses every answer rather than taking any, and says how to get them back."""

from __future__ import annotations

import pytest

from pooling.errors import StoreError
from pooling.judging import assignments, queue, rules
from pooling.judging.assessors import add_assessor
from pooling.judging.judgments import Judgment, record
from pooling.judging.plugins import Registry
from pooling.judging.queue import next_document
from pooling.judging.rounds import create_round
from pooling.store import Store

RUN = "".join(f"1 Q0 d{i} {i} {100 - i} A\n" for i in range(1, 5))


@pytest.fixture
def store(tmp_path):
    (tmp_path / "a.run").write_text(RUN)
    s = Store.create(tmp_path / "c.duckdb")
    s.import_runs([tmp_path / "a.run"])
    for name in ("ann", "bob"):
        add_assessor(s, name)
    yield s
    s.close()


def test_the_core_finds_the_crowd_policy_extension_and_rules_by_their_entry_points():
    """A fresh interpreter that imported only the core: the registries load pooling.crowds
    from its declared entry points the first time they are asked for a crowd name."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from pooling.judging.queue import QUEUE_POLICIES\n"
            "from pooling.judging.assignments import MAY_JUDGE\n"
            "from pooling.judging.rules import rule_names\n"
            "assert 'pooling.crowds' not in sys.modules\n"
            "print(type(QUEUE_POLICIES.get('crowd')).__name__, type(MAY_JUDGE.get('crowd')).__name__,"
            " ' '.join(rule_names()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["CrowdPolicy", "HandedOnly", "latest", "primary", "majority",
                                  "adjudicated", "mean", "human-first", "judge-only", "wawa",
                                  "dawid-skene", "gold-weighted"]


def test_a_crowd_round_hands_out_and_takes_answers_through_the_registered_policy(store):
    create_round(store, "c", "depth", strategy_params={"depth": 4}, redundancy=2)
    doc = next_document(store, "c", "ann", "1")
    assert doc == "d1"
    record(store, [Judgment("c", "ann", "1", doc, 1)])
    with pytest.raises(StoreError, match="'d3' of topic '1' is not assigned to 'bob' in round "
                                         "'c'; in a crowd round a worker answers only"):
        record(store, [Judgment("c", "bob", "1", "d3", 1)])  # never handed to bob
    assert store.con.execute("SELECT assessor_id, doc_id FROM judgments").fetchall() == [
        ("ann", "d1")]


def test_a_crowd_round_without_its_may_judge_extension_refuses_answers_naming_the_group(
        store, monkeypatch):
    create_round(store, "c", "depth", strategy_params={"depth": 4}, redundancy=2)
    monkeypatch.setattr(assignments, "MAY_JUDGE",
                        Registry("pooling.tests.nothing", "may-judge extension"))
    with pytest.raises(StoreError, match="no may-judge extension 'crowd'.*pooling.tests.nothing"):
        record(store, [Judgment("c", "ann", "1", "d1", 1)])
    assert store.con.execute("SELECT count(*) FROM judgments").fetchone() == (0,)


def test_a_crowd_round_without_its_queue_policy_hands_out_nothing_and_says_why(store,
                                                                              monkeypatch):
    create_round(store, "c", "depth", strategy_params={"depth": 4}, redundancy=2)
    monkeypatch.setattr(queue, "QUEUE_POLICIES",
                        Registry("pooling.tests.nothing", "queue policy"))
    with pytest.raises(StoreError, match="no queue policy 'crowd'"):
        next_document(store, "c", "ann", "1")


def test_an_unknown_rule_is_refused_naming_every_registered_one(store, monkeypatch):
    with pytest.raises(StoreError, match="unknown rule 'nope'; use one of latest, .*, "
                                         "judge-only, wawa, dawid-skene, gold-weighted$"):
        rules.derive_grades(store, "nope")
    monkeypatch.setattr(rules, "DERIVATION_RULES",
                        Registry("pooling.tests.nothing", "derivation rule"))
    with pytest.raises(StoreError, match="use one of latest, .*, judge-only$"):
        rules.derive_grades(store, "wawa")
