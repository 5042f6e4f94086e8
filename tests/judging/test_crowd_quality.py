"""Workers' quality read from a round in the store, the decisions recorded about them, and
`pooling crowd` end to end on a real DuckDB store: a flagged or withdrawn worker keeps every
judgment in the history and in derived qrels."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from pooling.crowds.decisions import current_decisions, decision_record
from pooling.crowds.quality import decide, flag_below, round_answers, round_quality
from pooling.errors import StoreError
from pooling.judging.assessors import add_assessor
from pooling.judging.history import Judgment
from pooling.judging.judgments import append_judgments, history
from pooling.judging.rounds import create_round
from pooling.judging.rules import derive_qrels
from pooling.store import Store

DOCS = [f"d{i}" for i in range(1, 9)]
RUN = "".join(f"1 Q0 {d} {r} {10 - r} A\n" for r, d in enumerate(DOCS, start=1))
GOLD = {"d1": 2, "d2": 0, "d3": 1, "d4": 0}  # topic 1's known answers
# good agrees with gold; bad inverts it; mid has a retracted grade and one unjudgeable answer
ANSWERS = {
    "good": {"d1": 2, "d2": 0, "d3": 1, "d4": 0, "d5": 1, "d6": 0},
    "bad": {"d1": 0, "d2": 2, "d3": 0, "d4": 2, "d5": 0, "d6": 2},
    "mid": {"d1": 2, "d2": 0, "d3": None, "d4": 1, "d5": 1, "d6": 0},
}


def pooling(*args, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pooling", *map(str, args)],
                          capture_output=True, text=True, env={"COLUMNS": "200", "PATH": ""})
    if check:
        assert done.returncode == 0, done.stderr
    return done


def answer(person: str, doc: str, grade: int | None, seconds: float = 5.0) -> Judgment:
    kind = "unjudgeable" if grade is None else "judge"
    return Judgment("r1", person, "1", doc, grade, kind=kind, seconds=seconds)


@pytest.fixture
def path(tmp_path):
    """A depth-8 round r1 on one topic; gold (a qrels version) on four of its documents; three
    workers' answers, one with a grade corrected and one taken back."""
    (tmp_path / "a.run").write_text(RUN)
    (tmp_path / "gold.qrels").write_text("".join(f"1 0 {d} {g}\n" for d, g in GOLD.items()))
    store_path = tmp_path / "crowd.duckdb"
    with Store.create(store_path) as s:
        s.import_runs([tmp_path / "a.run"])
        s.import_qrels(tmp_path / "gold.qrels", name="gold")
        create_round(s, "r1", "depth", strategy_params={"depth": 8})
        for person in ANSWERS:
            add_assessor(s, person)
        add_assessor(s, "org", role="organiser")
        items = [answer(p, d, g, seconds=float(i)) for p, graded in ANSWERS.items()
                 for i, (d, g) in enumerate(graded.items(), start=1)]
        items += [answer("mid", "d7", 2),
                  Judgment("r1", "mid", "1", "d7", None, kind="retract"),  # d7 taken back
                  answer("mid", "d4", 0), Judgment("r1", "mid", "1", "d4", None, kind="retract")]
        append_judgments(s, items)
    return store_path


def test_current_answers_replay_retracts_and_keep_unjudgeable_answers(path):
    with Store(path, read_only=True) as s:
        rows = {(r["assessor_id"], r["doc_id"]): (r["kind"], r["grade"])
                for r in round_answers(s, "r1").to_pylist()}
    assert ("mid", "d7") not in rows
    assert rows[("mid", "d4")] == ("judge", 1)  # the correction to 0 was taken back
    assert rows[("mid", "d3")] == ("unjudgeable", None)
    assert len(rows) == 18


def test_round_quality_measures_each_worker_on_the_gold_version(path):
    with Store(path, read_only=True) as s:
        report = round_quality(s, "r1", gold="gold")
    q = {w.assessor_id: w for w in report.workers}
    assert (q["good"].accuracy, q["good"].kappa) == (1.0, 1.0)
    assert (q["bad"].accuracy, q["bad"].binary) == (0.0, 0.0)
    assert (q["mid"].gold_answered, q["mid"].gold_unjudgeable, q["mid"].unjudgeable) == (3, 1, 1)
    assert q["mid"].accuracy == pytest.approx(2 / 3)
    assert q["good"].median_seconds == 3.5
    assert [w.assessor_id for w in report.sorted("accuracy")] == ["bad", "mid", "good"]


def test_the_gold_version_comes_from_the_round_when_not_given(path):
    with Store(path) as s:
        with pytest.raises(StoreError, match="names no gold version; give one with --gold"):
            round_quality(s, "r1")
        with pytest.raises(StoreError, match="no qrels version 'nope'"):
            round_quality(s, "r1", gold="nope")
        s.con.execute("UPDATE rounds SET params = json_merge_patch(params, ?) "
                      "WHERE round_id = 'r1'", [json.dumps({"gold": "gold"})])
        assert round_quality(s, "r1").gold == "gold"


def test_flagging_below_a_bar_records_the_figure_and_the_bar(path):
    with Store(path) as s:
        chosen = flag_below(s, "r1", 0.6, measure="binary", gold="gold", decided_by="org")
        assert [q.assessor_id for q in chosen] == ["bad"]
        assert flag_below(s, "r1", 0.6, measure="binary", gold="gold") == []  # already flagged
        (row,) = decision_record(s, "r1").to_pylist()
    assert (row["assessor_id"], row["decision"], row["measure"], row["value"], row["bar"],
            row["decided_by"]) == ("bad", "flag", "binary", 0.0, 0.6, "org")
    assert "binary below 0.6 on gold gold" in row["reason"]


def test_decisions_need_a_reason_a_round_and_people_of_the_store(path):
    with Store(path) as s:
        with pytest.raises(StoreError, match="needs a reason"):
            decide(s, "r1", ["bad"], "flag", reason=" ")
        with pytest.raises(StoreError, match="not a person assessor of this store: zed"):
            decide(s, "r1", ["bad", "zed"], "flag", reason="spam")
        with pytest.raises(StoreError, match="no round 'r9'"):
            decide(s, "r9", ["bad"], "flag", reason="spam")
        assert decision_record(s).num_rows == 0


def test_a_worker_flagged_mid_round_keeps_every_judgment_in_history_and_qrels(path):
    with Store(path) as s:
        before_history = history(s).num_rows
        before = derive_qrels(s, "majority", "before", round_id="r1")
        decide(s, "r1", ["bad"], "withdraw", reason="inverts every grade")
        decide(s, "r1", ["mid"], "flag", reason="slow")
        append_judgments(s, [answer("bad", "d8", 1)])  # an answer already on its way
        after = derive_qrels(s, "majority", "after", round_id="r1")
        assert history(s).num_rows == before_history + 1
        assert current_decisions(s, "r1") == {"bad": "withdraw", "mid": "flag"}
        rows = {v: {(r["query_id"], r["doc_id"], r["relevance"])
                    for r in s.qrels_table(v).to_pylist()} for v in ("before", "after")}
    assert before.n_rows + 1 == after.n_rows  # d8, judged only by bad
    assert rows["before"] <= rows["after"]  # bad's and mid's grades still count


def test_pooling_crowd_end_to_end(path):
    done = pooling("crowd", "quality", path, "--round", "r1", "--gold", "gold",
                   "--format", "json", "--sort", "accuracy")
    report = json.loads(done.stdout)
    assert [w["assessor_id"] for w in report["workers"]] == ["bad", "mid", "good"]
    assert report["workers"][2]["accuracy_low"] == pytest.approx(0.5101, abs=1e-4)
    table = pooling("crowd", "quality", path, "--round", "r1", "--gold", "gold",
                    "--min-gold", "4").stdout
    assert "mid" in table and "—" in table  # mid has 3 gold grades: no figure yet
    assert "1.000 [0.51, 1.00]" in table

    done = pooling("crowd", "flag", path, "--round", "r1", "--below", "0.5", "--measure",
                   "kappa", "--gold", "gold", "--withdraw", "--by", "org")
    assert "withdraw: bad (kappa" in done.stdout
    pooling("crowd", "flag", path, "--round", "r1", "mid", "--reason", "too quick", "--by", "org")
    pooling("crowd", "clear", path, "--round", "r1", "bad", "--reason", "appealed")
    refused = pooling("crowd", "flag", path, "--round", "r1", "mid", check=False)
    assert refused.returncode == 1 and "needs a reason" in refused.stderr

    out = path.with_name("decisions.csv")
    pooling("crowd", "decisions", path, "--round", "r1", "-o", out)
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(r["assessor_id"], r["decision"]) for r in rows] == [
        ("bad", "withdraw"), ("mid", "flag"), ("bad", "clear")]
    assert rows[0]["measure"] == "kappa" and rows[0]["bar"] == "0.5"
    csv_report = pooling("crowd", "quality", path, "--round", "r1", "--gold", "gold",
                         "--format", "csv").stdout
    decisions = {r["assessor_id"]: r["decision"] for r in csv.DictReader(io.StringIO(csv_report))}
    assert decisions == {"bad": "", "good": "", "mid": "flag"}
    assert "decided by" in pooling("crowd", "decisions", path).stdout


def test_organisers_adjudications_are_not_a_workers_answers(path):
    with Store(path) as s:
        append_judgments(s, [Judgment("r1", "org", "1", "d1", 0)])
        report = round_quality(s, "r1", gold="gold")
    assert [q.assessor_id for q in report.workers] == ["bad", "good", "mid"]


def test_a_pair_judged_on_subtopics_is_one_answer_with_its_highest_grade(path):
    with Store(path) as s:
        add_assessor(s, "sub")
        append_judgments(s, [
            Judgment("r1", "sub", "1", "d1", 0, part="1", seconds=2.0),
            Judgment("r1", "sub", "1", "d1", 2, part="2", seconds=3.0),
            Judgment("r1", "sub", "1", "d2", 1, part="1", seconds=1.0)])
        rows = [r for r in round_answers(s, "r1").to_pylist() if r["assessor_id"] == "sub"]
    assert sorted((r["doc_id"], r["kind"], r["grade"], r["seconds"]) for r in rows) == [
        ("d1", "judge", 2, 5.0), ("d2", "judge", 1, 1.0)]
