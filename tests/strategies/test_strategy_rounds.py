"""`cal` and `uncertain` in judging rounds: what they need is read from the store (document
text, judges' grades), refused clearly when missing, and every round option is honoured."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pooling.cli import app
from pooling.errors import StoreError
from pooling.judges.model_judges import add_judge, judge_pairs
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.history import Judgment
from pooling.judging.judgments import append_judgments, record
from pooling.judging.queue import next_document
from pooling.judging.rounds import create_round, get_round, pool_table
from pooling.store import Store
from pooling.strategies import StrategyError

pytest.importorskip("sklearn")

WORD_JUDGE = Path(__file__).resolve().parent.parent / "judging" / "word_judge.py"
TOPICS = [{"query_id": "1", "title": "wind turbines"}, {"query_id": "2", "title": "solar panels"}]
N = 12  # documents per topic; every third is about the topic


def about(q: str, i: int) -> bool:
    return i % 3 == 2


def build(tmp_path: Path, with_text: bool = True) -> Path:
    """Two topics; run A ranks each topic's documents in id order, run B in reverse; the
    documents about the topic use its words (and so do no others)."""
    path = tmp_path / "c.duckdb"
    a, b, docs = [], [], []
    for topic in TOPICS:
        q = topic["query_id"]
        ids = [f"q{q}d{i:02d}" for i in range(N)]
        for rank, d in enumerate(ids):
            a.append(f"{q} Q0 {d} {rank + 1} {100 - rank} A\n")
        for rank, d in enumerate(reversed(ids)):
            b.append(f"{q} Q0 {d} {rank + 1} {100 - rank} B\n")
        for i, d in enumerate(ids):
            words = topic["title"] + " blade rotor" if about(q, i) else "cooking recipes pasta"
            docs.append({"doc_id": d, "title": f"doc {d}", "text": f"a page on {words}"})
    (tmp_path / "a.run").write_text("".join(a))
    (tmp_path / "b.run").write_text("".join(b))
    (tmp_path / "topics.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOPICS))
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run", tmp_path / "b.run"])
        s.import_topics(tmp_path / "topics.jsonl")
        if with_text:
            s.import_documents(tmp_path / "docs.jsonl")
        add_assessor(s, "ann")
    return path


def truth(doc_id: str) -> int:
    return int(about(doc_id[1], int(doc_id[-2:])))


def judge_all(s: Store, round_id: str, query_id: str, limit: int = 100) -> list[str]:
    """Ann judges what the round serves for the topic, truthfully, until it is done."""
    order = []
    while len(order) < limit and (doc := next_document(s, round_id, "ann", query_id)) is not None:
        order.append(doc)
        record(s, [Judgment(round_id, "ann", query_id, doc, truth(doc))])
    return order


def test_a_cal_round_learns_from_the_judgments_and_honours_budget_floor_and_stop(tmp_path):
    with Store(build(tmp_path)) as s:
        summary = create_round(s, "c", "cal", budget=6, floor=1, grades=(0, 1))
        assert summary.round.adaptive and summary.entries == 0
        assign(s, "c", ["ann"])
        order = judge_all(s, "c", "1")
        assert len(order) == 6  # the budget, the floor included
        assert order[:2] == ["q1d00", "q1d11"]  # the floor: each run's top 1
        # q1d11 is about wind turbines: from then on the classifier finds the others first
        assert [truth(d) for d in order] == [0, 1, 1, 1, 1, 0]
        create_round(s, "stop", "cal", stop_after=2, grades=(0, 1))
        assign(s, "stop", ["ann"])
        stopped = judge_all(s, "stop", "2")
        # the cold start (mixfuse) takes run A's top, not relevant (the two runs' tops tie,
        # and a tie goes to the earlier run), then run B's top, relevant; once both classes
        # are judged the three other relevant ones come, then two non-relevant in a row end
        # the topic
        assert stopped[:2] == ["q2d00", "q2d11"]
        assert [truth(d) for d in stopped] == [0, 1, 1, 1, 1, 0, 0]


def test_a_cal_round_honours_the_total_budget_and_excludes_pairs_judged_before(tmp_path):
    with Store(build(tmp_path)) as s:
        create_round(s, "first", "depth", strategy_params={"depth": 1}, grades=(0, 1))
        assign(s, "first", ["ann"])
        before = judge_all(s, "first", "1")
        assert before == ["q1d00", "q1d11"]
        create_round(s, "c", "cal", total_budget=7, exclude_judged=True, grades=(0, 1))
        assign(s, "c", ["ann"])
        one, two = judge_all(s, "c", "1"), judge_all(s, "c", "2")
        assert (len(one), len(two)) == (4, 3)  # 7 split over two topics, the first gets more
        assert not set(before) & set(one)
        # the known judgments (one relevant, one not) warm the classifier at once
        assert all(truth(d) for d in one[:3])


def test_a_cal_round_over_documents_without_text_is_refused(tmp_path):
    with Store(build(tmp_path, with_text=False)) as s:
        with pytest.raises(StoreError, match=r"topic\(s\) 1, 2; import the documents"):
            create_round(s, "c", "cal")
        (tmp_path / "one.jsonl").write_text(json.dumps({"doc_id": "q1d05", "text": "wind"}) + "\n")
        s.import_documents(tmp_path / "one.jsonl")  # one candidate of topic 1 has text now
        with pytest.raises(StoreError, match=r"topic\(s\) 2; import the documents"):
            create_round(s, "c", "cal")
        assert s.one("rounds", "SELECT count(*) FROM rounds") == (0,)


def test_the_cli_pools_a_cal_round(tmp_path):
    path = build(tmp_path)
    result = CliRunner().invoke(app, ["pool", str(path), "--round", "c", "--strategy", "cal",
                                      "--budget", "5", "--param", "growth=0"])
    assert result.exit_code == 0, result.output
    assert "round c: cal over 2 runs" in result.output and "adaptive" in result.output
    with Store(path) as s:
        rnd = get_round(s, "c")
        assert rnd.params["strategy"]["growth"] == 0 and rnd.params["budget"] == 5


def judgments_of(judge: str, grades: dict[tuple[str, str], tuple[int, float | None]]) -> list[Judgment]:
    return [Judgment(None, judge, q, d, g, probability=p) for (q, d), (g, p) in grades.items()]


def test_an_uncertain_round_queues_the_judges_least_sure_and_most_disputed_pairs(tmp_path):
    with Store(build(tmp_path)) as s:
        add_judge(s, "umbrela", "openai", {"base_url": "http://127.0.0.1:9/v1", "model": "m"})
        add_judge(s, "tfidf", "learned")
        append_judgments(s, judgments_of("umbrela", {  # a 0..3 scale, no probabilities
            ("1", "q1d00"): (3, None), ("1", "q1d01"): (1, None), ("1", "q1d02"): (2, None),
            ("1", "q1d03"): (0, None), ("2", "q2d00"): (2, None)}))
        append_judgments(s, judgments_of("tfidf", {
            ("1", "q1d00"): (0, 0.2), ("1", "q1d01"): (1, 0.7), ("1", "q1d02"): (1, 0.95),
            ("1", "q1d03"): (0, 0.05), ("1", "q1d04"): (1, 0.52)}))
        create_round(s, "one", "uncertain", strategy_params={"judges": "tfidf"})
        assert [p["doc_id"] for p in pool_table(s, "one").to_pylist()] == [
            "q1d04", "q1d01", "q1d00", "q1d02", "q1d03"]
        create_round(s, "two", "uncertain", strategy_params={"judges": "umbrela,tfidf"})
        # q1d00: 3 of 3 against 0 (difference 1); q1d01: 1/3 against 1; q1d02: 2/3 against 1
        # and q1d03: 0 against 0 (no disagreement); q1d04 and topic 2: one judge only
        assert [p["doc_id"] for p in pool_table(s, "two").to_pylist()] == [
            "q1d00", "q1d01", "q1d02", "q1d03"]
        assert get_round(s, "two").params["strategy"]["judges"] == "umbrela,tfidf"
        # people's judgments are excluded on request; budgets cut the queue
        create_round(s, "seen", "depth", strategy_params={"depth": 1}, grades=(0, 1))
        assign(s, "seen", ["ann"])
        record(s, [Judgment("seen", "ann", "1", "q1d00", 1)])
        create_round(s, "fresh", "uncertain", strategy_params={"judges": "tfidf"},
                     exclude_judged=True, budget=2)
        assert [p["doc_id"] for p in pool_table(s, "fresh").to_pylist()] == ["q1d04", "q1d01"]
        with pytest.raises(StoreError, match="a person, not an automatic judge"):
            create_round(s, "p", "uncertain", strategy_params={"judges": "ann"})
        with pytest.raises(StoreError, match="judges: umbrela, tfidf"):
            create_round(s, "p", "uncertain", strategy_params={"judges": "nobody"})


def test_the_cli_triages_a_real_judges_judgments(tmp_path):
    path = build(tmp_path)
    command = " ".join(shlex.quote(a) for a in (sys.executable, str(WORD_JUDGE)))
    with Store(path) as s:
        add_judge(s, "words", "command", {"command": command})
        pairs = [(q, f"q{q}d{i:02d}") for q in "12" for i in range(N)]
        assert judge_pairs(s, "words", pairs).judged == 2 * N
    runner = CliRunner()
    result = runner.invoke(app, ["pool", str(path), "--round", "tri", "--strategy", "uncertain",
                                 "--judge", "words", "--budget", "3"])
    assert result.exit_code == 0, result.output
    assert "triaging judge(s) words" in result.output and "6 documents queued" in result.output
    with Store(path, read_only=True) as s:
        pool = pool_table(s, "tri").to_pylist()
        assert get_round(s, "tri").params["strategy"]["judges"] == "words"
    # The word judge says 0.2 for a page not on the topic and 0.9 for one on it: the 0.2s are
    # nearer a coin toss, so they come first, in the runs' round-robin order.
    assert [p["doc_id"] for p in pool if p["query_id"] == "1"] == ["q1d00", "q1d01", "q1d10"]
    refused = runner.invoke(app, ["pool", str(path), "--round", "x", "--strategy", "depth",
                                  "--judge", "words"])
    assert isinstance(refused.exception, StoreError) and "--strategy uncertain" in str(refused.exception)


@pytest.mark.parametrize("name", ["cal", "mtf", "hedge", "maxmean", "mmfuse", "mixfuse", "thompson"])
def test_every_adaptive_round_serves_its_share_of_the_total_budget_and_skips_judged_pairs(
        tmp_path, name):
    with Store(build(tmp_path)) as s:
        create_round(s, "first", "depth", strategy_params={"depth": 1}, grades=(0, 1))
        assign(s, "first", ["ann"])
        before = judge_all(s, "first", "1")
        create_round(s, "live", name, total_budget=7, exclude_judged=True, grades=(0, 1))
        assign(s, "live", ["ann"])
        one, two = judge_all(s, "live", "1"), judge_all(s, "live", "2")
        assert (len(one), len(two)) == (4, 3)
        assert not set(before) & set(one)


def test_a_judges_latest_judgment_of_a_pair_counts_and_a_retraction_takes_it_back(tmp_path):
    from pooling.judges.grades_input import judge_grades

    with Store(build(tmp_path)) as s:
        add_judge(s, "tfidf", "learned")
        append_judgments(s, judgments_of("tfidf", {("1", "q1d00"): (0, 0.1), ("1", "q1d01"): (1, 0.9)}))
        append_judgments(s, [Judgment(None, "tfidf", "1", "q1d00", 1, probability=0.6)])
        assert judge_grades(s, "tfidf", ["1"])["1"]["q1d00"].probability == 0.6
        append_judgments(s, [Judgment(None, "tfidf", "1", "q1d00", None, kind="retract")])
        grades = judge_grades(s, "tfidf", ["1"])["1"]
        assert grades["q1d00"].probability == 0.1 and (grades["q1d00"].low, grades["q1d00"].high) == (0, 1)
        assert set(grades) == {"q1d00", "q1d01"} and judge_grades(s, "tfidf", ["2"]) == {}


def two_command_judges(s: Store) -> None:
    """Judges a and b: programs whose scale (0-3 here) the store cannot know."""
    for name in ("a", "b"):
        add_judge(s, name, "command", {"command": "true"})


# Judge a and judge b on topic 1's twelve documents (0-3), a with two stray 5s in topic 2.
GRADES_A = [3, 0, 2, 3, 1, 3, 0, 2, 3, 1, 0, 3]
GRADES_B = [3, 3, 2, 0, 1, 3, 1, 0, 3, 2, 0, 3]


def test_stray_grades_off_the_declared_scale_are_refused_naming_the_judge_and_pairs(tmp_path):
    path = build(tmp_path)
    with Store(path) as s:
        two_command_judges(s)
        append_judgments(s, [Judgment(None, "a", "1", f"q1d{i:02d}", g)
                             for i, g in enumerate(GRADES_A)]
                         + [Judgment(None, "a", "2", f"q2d{i:02d}", 5) for i in (1, 4)])
        append_judgments(s, [Judgment(None, "b", q, f"q{q}d{i:02d}", g)
                             for q in "12" for i, g in enumerate(GRADES_B)])
    runner = CliRunner()
    args = ["pool", str(path), "--round", "tri", "--strategy", "uncertain", "--judge", "a",
            "--judge", "b"]
    undeclared = runner.invoke(app, args)
    assert isinstance(undeclared.exception, StoreError | StrategyError)
    assert "judge a declares no grade scale" in str(undeclared.exception)
    assert "--param max_grade=N" in str(undeclared.exception)
    stray = runner.invoke(app, [*args, "--param", "max_grade=3"])
    assert str(stray.exception).startswith(
        "judge a gave 2 grade(s) outside its scale 0-3: (2, q2d01) grade 5, (2, q2d04) grade 5; "
        "retract or fix those judgments")
    with Store(path) as s:
        assert s.one("rounds", "SELECT count(*) FROM rounds") == (0,)
        append_judgments(s, [Judgment(None, "a", "2", f"q2d{i:02d}", GRADES_B[i]) for i in (1, 4)])
    done = runner.invoke(app, [*args, "--param", "max_grade=3"])
    assert done.exit_code == 0, done.output
    with Store(path, read_only=True) as s:
        queued = [p["doc_id"] for p in pool_table(s, "tri").to_pylist() if p["query_id"] == "1"]
    apart = [abs(GRADES_A[int(d[-2:])] - GRADES_B[int(d[-2:])]) for d in queued]
    # Disagreement first, never broken: pairs both judges graded alike come last.
    assert apart == sorted(apart, reverse=True) and apart[0] == 3 and apart[-1] == 0


def test_a_triage_round_needs_no_runs_and_no_documents(tmp_path):
    path = tmp_path / "bare.duckdb"
    with Store.create(path) as s:
        two_command_judges(s)
        add_assessor(s, "ann")
        for judge, grades in (("a", GRADES_A), ("b", GRADES_B)):
            append_judgments(s, [Judgment(None, judge, q, f"q{q}d{i:02d}", g)
                                 for q in "13" for i, g in enumerate(grades)])
    runner = CliRunner()
    args = ["pool", str(path), "--round", "tri", "--strategy", "uncertain", "--judge", "a",
            "--judge", "b", "--param", "max_grade=3"]
    result = runner.invoke(app, [*args, "--budget", "4"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("round tri: uncertain over its judges' pairs in 2 topics, "
                                    "triaging judge(s) a,b, 8 documents queued")
    with Store(path) as s:
        rnd = get_round(s, "tri")
        assert rnd.pooled_runs == () and rnd.topics == ("1", "3")
        assign(s, "tri", ["ann"])
        assert next_document(s, "tri", "ann", "3") == "q3d01"  # 0 against 3: first
    # What reads the runs still needs them.
    for extra in (["--param", "candidates=pool"], ["--floor", "1"]):
        refused = runner.invoke(app, [*args[:3], "other", *args[4:], *extra])
        assert "has no runs; import some with `pooling import runs`" in str(refused.exception)


def test_topics_the_judges_graded_but_no_run_retrieves_are_triaged_too(tmp_path):
    path = build(tmp_path)  # runs over topics 1 and 2
    with Store(path) as s:
        two_command_judges(s)
        for judge, grades in (("a", GRADES_A), ("b", GRADES_B)):
            append_judgments(s, [Judgment(None, judge, "3", f"q3d{i:02d}", g)
                                 for i, g in enumerate(grades)])
        summary = create_round(s, "tri", "uncertain",
                               strategy_params={"judges": "a,b", "max_grade": "3"})
        assert summary.round.topics == ("3",) and summary.per_topic == {"3": N}
        assert summary.round.pooled_runs == ("A", "B")
