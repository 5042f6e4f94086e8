"""Model judges on assignment rounds: each (answer, nugget) asked through the judge backends
with the answer as its text and the nugget as its description, calls recorded, nothing
asked twice; the shipped lexical judge grades by word overlap, deterministically."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from pooling.judges.backends.base import Pair
from pooling.judges.backends.lexical import LexicalBackend, overlap, words
from pooling.judges.model_judges import add_judge, judge_round
from pooling.nuggets.assignments import derive_assignments, score_assignments
from pooling.nuggets.rounds import create_assignment_round
from pooling.store import Store
from pooling.store import nugget_banks as nb
from pooling.store.answers import import_answers


@pytest.fixture
def store(tmp_path):
    answers = [
        ("A", "1", ["Paris is the capital of France.", "It lies on the Seine river."]),
        ("B", "1", ["France has many cities.", "Lyon is large."]),
        ("A", "2", ["Water boils at 100 degrees Celsius at sea level."]),
        ("B", "2", ["Cold water freezes."]),
    ]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"run_id": r, "topic_id": q, "topic": f"question {q}",
                                        "answer": [{"text": t, "citations": []} for t in sents]}) + "\n"
                            for r, q, sents in answers))
    with Store.create(tmp_path / "s.duckdb") as s:
        import_answers(s, [path], add_topics=True)
        nb.add_nugget(s, "p", "1", "Paris is the capital of France", "vital")
        nb.add_nugget(s, "p", "1", "The Seine river flows through Paris")
        nb.add_nugget(s, "p", "2", "Water boils at 100 degrees Celsius", "vital")
        nb.freeze(s, "p")
        create_assignment_round(s, "assign", "p-v1")
        yield s


def test_words_and_overlap_follow_the_stated_rule():
    assert words("The rivers of Paris, and its Bridges!") == {"river", "pari", "bridge"}
    assert overlap("Paris capital", "paris is a capital city") == 1.0
    assert overlap("", "anything") == 0.0


def test_the_lexical_judge_grades_support_partial_and_none():
    judge = LexicalBackend(support_from=0.6, partial_from=0.3)
    pair = lambda nugget, text: Pair("1", "A", "q", nugget, None, None, text, subtopic="1")  # noqa: E731
    grades = [v.grade for v in judge.judge([
        pair("Paris is the capital of France", "Paris is the capital of France."),
        pair("Paris is the capital of France", "Paris is lovely."),
        pair("Paris is the capital of France", "Rome is old."),
        pair("x", None)])]
    assert grades == [2, 1, 0, None]


def test_the_lexical_judge_works_an_assignment_round_and_its_grades_score_the_runs(store):
    add_judge(store, "overlap", "lexical")
    report = judge_round(store, "overlap", "assign")
    assert (report.judged, report.failed) == (6, 0)
    again = judge_round(store, "overlap", "assign")
    assert again.judged == 0 and again.already == 6
    calls = store.sql("c", "SELECT doc_id, part FROM judge_calls ORDER BY 1, 2").fetchall()
    assert len(calls) == 6 and ("A", "1") in calls
    derive_assignments(store, "judge-only", "by-overlap", round_id="assign", judge="overlap")
    scores = {r.run_id: r.summary for r in score_assignments(store, "by-overlap").runs}
    assert scores["A"]["strict_all"] == 1.0
    assert scores["B"]["strict_vital"] == 0.0


def test_a_command_judge_reads_the_answer_and_the_nugget(store, tmp_path):
    program = tmp_path / "judge.py"
    program.write_text(textwrap.dedent("""\
        import json, sys
        for line in sys.stdin:
            req = json.loads(line)
            said = req["doc_text"].lower()
            grade = 2 if req["description"].split()[0].lower() in said else 0
            print(json.dumps({"grade": grade, "rationale": req["subtopic"] + ":" + req["doc_id"]}), flush=True)
        """))
    add_judge(store, "cmd", "command", {"command": f"{sys.executable} {program}"})
    report = judge_round(store, "cmd", "assign")
    assert report.judged == 6
    rows = store.sql("j", "SELECT query_id, doc_id, part, grade, rationale FROM judgments "
                     "WHERE kind = 'judge' ORDER BY query_id, doc_id, part").fetchall()
    assert rows[0] == ("1", "A", "1", 2, "1:A")  # the request carried the nugget and answer ids
    by = {(q, d, p): g for q, d, p, g, _ in rows}
    # "paris" is in answer A of topic 1 and not in B's; "water" in both answers of topic 2
    assert (by[("1", "A", "1")], by[("1", "B", "1")], by[("2", "B", "1")]) == (2, 0, 2)
