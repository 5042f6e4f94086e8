"""`pooling agreement` on a selection of topics (--topics), and its leaderboard τ between two
rankings scored on the same topics under both sides (a qrels version covering fewer topics
is not averaged over a different set than the other)."""

from __future__ import annotations

import json
import subprocess
import sys

from test_label_agreement_in_the_store import PEOPLE_GRADES, build, invoke, trec_map

from pooling.judging.rules import derive_qrels, round_agreement
from pooling.label_sets.agreement import judge_agreement, qrels_agreement
from pooling.store import Store


def test_two_versions_over_different_topics_are_scored_on_the_topics_both_have(tmp_path):
    path = build(tmp_path)
    one_topic = {k: g for k, g in PEOPLE_GRADES.items() if k[0] == "1"}
    (tmp_path / "one.qrels").write_text("".join(f"{q} 0 {d} {g}\n"
                                                for (q, d), g in one_topic.items()))
    with Store(path) as s:
        derive_qrels(s, "majority", "people", round_id="r1")  # topics 1 and 2
        s.import_qrels(tmp_path / "one.qrels", name="one-topic")  # topic 1 only
        result = qrels_agreement(s, "people", "one-topic")
        expected = trec_map(one_topic, s)  # the people's grades, topic 1 only
        assert result.scores_a == expected and result.scores_b == expected
        # Both versions over both topics would have averaged people's over two topics.
        assert result.scores_a != trec_map(PEOPLE_GRADES, s)
        assert result.systems.kendall_tau == 1.0

def test_topics_narrow_both_the_pairs_compared_and_the_runs_scores(tmp_path):
    path = build(tmp_path)
    with Store(path) as s:
        derive_qrels(s, "majority", "people", round_id="r1")
        derive_qrels(s, "judge-only", "words-only", round_id="r1", judge="words")
        result = qrels_agreement(s, "people", "words-only", topics="2")
        topic_2 = {k: g for k, g in PEOPLE_GRADES.items() if k[0] == "2"}
        assert result.labels.n_shared == len(topic_2)
        assert result.scores_a == trec_map(topic_2, s)
        judged = judge_agreement(s, "words", against="people", topics=["1"])
        assert judged.labels.n_compared == sum(q == "1" for q, _ in PEOPLE_GRADES)
        assert judged.scores_a == trec_map({k: g for k, g in PEOPLE_GRADES.items()
                                            if k[0] == "1"}, s)
        assert round_agreement(s, "r1", topics="2").n_shared == 1  # q2d004 alone

def test_the_command_takes_topics_for_each_form(tmp_path):
    path = build(tmp_path)
    with Store(path) as s:
        derive_qrels(s, "majority", "people", round_id="r1")
    result = invoke(path, "--round", "r1", "--topics", "2")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("round r1: 1 pair(s) judged by two or more assessors, "
                                    "5 by one")
    result = invoke(path, "--judge", "words", "--topics", "1", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["pairs"]["compared"] == 6
    done = subprocess.run([sys.executable, "-m", "pooling", "agreement", str(path), "--round",
                           "r1", "--topics", "7"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.startswith("Error: unknown topic(s) 7")
