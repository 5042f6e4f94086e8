"""An automatic judge works an adaptive round as an assessor does: the strategy chooses each
topic's next document after the grade of the one before (people's grades first), up to the
round's budget or --limit, resuming after kill -9 without asking a stored answer again. And
nothing that reads a round's pairs reports zero work because the round is adaptive."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pooling.errors import PoolingError, StoreError
from pooling.judges.model_judges import add_judge, judge_round
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import Judgment, record
from pooling.judging.rounds import create_round, get_round, pool_table, topic_rankings
from pooling.judging.rules import round_agreement
from pooling.leaderboard.compare import restricted_qrels
from pooling.store import Store
from pooling.strategies import topic_seed

JUDGE_PROGRAM = Path(__file__).with_name("word_judge.py")
TOPICS = {"1": "wind turbines", "2": "solar panels"}
DOCS = 12


def program(*args: str) -> str:
    return " ".join(shlex.quote(a) for a in (sys.executable, str(JUDGE_PROGRAM), *args))


def about(query_id: str, i: int) -> bool:
    """Whether document i of a topic is about it (what the word judge grades 1): the last
    third, which run A ranks first and run B last."""
    return i >= DOCS - DOCS // 3


def build(tmp_path: Path, strategy: str = "mixfuse", **round_options) -> Path:
    """Two topics of DOCS documents each; run A ranks them d11 first, run B d00 first; round
    `live` pools both with an adaptive strategy (the default, mixfuse), and judge `words`
    grades by the topic's words."""
    path = tmp_path / "c.duckdb"
    runs = {"a": [], "b": []}
    docs = []
    for q, title in TOPICS.items():
        for i in range(DOCS):
            d = f"q{q}d{i:02d}"
            runs["b"].append(f"{q} Q0 {d} {i + 1} {100 - i} B\n")
            runs["a"].append(f"{q} Q0 {d} {DOCS - i} {100 - DOCS + i} A\n")
            text = f"a page on {title}" if about(q, i) else "a page on something else"
            docs.append({"doc_id": d, "title": f"doc {d}", "text": text})
    for name, lines in runs.items():
        (tmp_path / f"{name}.run").write_text("".join(lines))
    (tmp_path / "topics.jsonl").write_text(
        "".join(json.dumps({"query_id": q, "title": t}) + "\n" for q, t in TOPICS.items()))
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run", tmp_path / "b.run"])
        s.import_topics(tmp_path / "topics.jsonl")
        s.import_documents(tmp_path / "docs.jsonl")
        create_round(s, "live", strategy, grades=(0, 1), **round_options)
        add_judge(s, "words", "command", {"command": program("--log", str(tmp_path / "asked.log"))})
    return path


def chosen(store: Store, query_id: str) -> list[str]:
    return [p["doc_id"] for p in pool_table(store, "live").to_pylist() if p["query_id"] == query_id]


def replayed(store: Store, query_id: str, grade) -> list[str]:
    """The documents the round's strategy chooses for a topic when each is graded by `grade`
    before the next is chosen."""
    rnd = get_round(store, "live")
    topic = topic_rankings(store, list(rnd.pooled_runs), rnd.candidate_depth, [query_id],
                           rnd.order)[query_id]
    selector = rnd.make_strategy(query_id=query_id).selector(topic, topic_seed(rnd.seed, query_id))
    order = []
    while (doc := selector.next()) is not None:
        selector.observe(doc, grade(doc))
        order.append(doc)
    return order


def word_grade(doc: str) -> int:
    return int(about(doc[1], int(doc[-2:])))


def pooling(*args, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "250", **(env or {})})
    if check:
        assert done.returncode == 0, done.stderr
    return done


def test_each_next_document_is_chosen_after_the_grade_of_the_one_before(tmp_path):
    path = build(tmp_path, budget=6)
    with Store(path) as s:
        report = judge_round(s, "words", "live", batch=1)
        assert (report.judged, report.already, report.failed, report.pairs) == (12, 0, 0, 12)
        for q in TOPICS:
            order = chosen(s, q)
            assert order == replayed(s, q, word_grade)[:6]
            # The grades steered it: blind (every grade 0) it would have chosen otherwise.
            assert order != replayed(s, q, lambda d: 0)[:6]
        # Run A's top documents are about the topic, so it stays on run A; blind, it takes
        # turns between the runs.
        assert chosen(s, "1") == ["q1d11", "q1d10", "q1d09", "q1d08", "q1d07", "q1d06"]
        assert replayed(s, "1", lambda d: 0)[:3] == ["q1d11", "q1d00", "q1d10"]
        grades = dict(s.con.execute("SELECT doc_id, grade FROM judgments "
                                    "WHERE assessor_id = 'words' AND round_id = 'live'").fetchall())
        assert grades == {d: word_grade(d) for q in TOPICS for d in chosen(s, q)}
    asked = (tmp_path / "asked.log").read_text().splitlines()
    assert len(asked) == len(set(asked)) == 12


def test_peoples_grades_steer_it_first_and_the_judge_still_judges_their_documents(tmp_path):
    path = build(tmp_path, budget=4)
    with Store(path) as s:
        add_assessor(s, "ann")
        assign(s, "live", ["ann"])
        from pooling.judging.queue import next_document

        first = next_document(s, "live", "ann", "1")
        assert first == "q1d11"
        record(s, [Judgment("live", "ann", "1", first, 0)])  # ann: not relevant; the judge says 1
        judge_round(s, "words", "live")
        people_first = {first: 0}
        assert chosen(s, "1") == replayed(s, "1", lambda d: people_first.get(d, word_grade(d)))[:4]
        assert chosen(s, "1") != replayed(s, "1", word_grade)[:4]  # ann's grade steered it
        judged = {r[0] for r in s.con.execute(
            "SELECT doc_id FROM judgments WHERE assessor_id = 'words' AND query_id = '1'").fetchall()}
        assert judged == set(chosen(s, "1"))  # ann's document too, so the two can be compared
        # What the judge chose is ann's to judge next, in the order chosen.
        assert next_document(s, "live", "ann", "1") == chosen(s, "1")[1]


def test_limit_spreads_over_the_topics_and_a_second_run_goes_on_to_the_budget(tmp_path):
    path = build(tmp_path, budget=3)
    with Store(path) as s:
        first = judge_round(s, "words", "live", limit=3)
        assert (first.judged, first.open_topics) == (3, 2)
        assert (len(chosen(s, "1")), len(chosen(s, "2"))) == (2, 1)
        again = judge_round(s, "words", "live")
        assert (again.judged, again.already, again.pairs, again.open_topics) == (3, 3, 6, 0)
        assert chosen(s, "1") == replayed(s, "1", word_grade)[:3]
        assert chosen(s, "2") == replayed(s, "2", word_grade)[:3]
        done = judge_round(s, "words", "live")
        assert (done.judged, done.already, done.pairs) == (0, 6, 6)


def test_progress_hears_of_each_document_judged(tmp_path):
    class Heard:
        def __init__(self):
            self.heard = []

        def start(self, description, total=None):
            self.heard.append(("start", total))

        def advance(self, amount=1):
            self.heard.append(("advance", amount))

        def finish(self):
            self.heard.append(("finish",))

    path = build(tmp_path, budget=2)
    with Store(path) as s:
        heard = Heard()
        judge_round(s, "words", "live", progress=heard)
    assert heard.heard[0] == ("start", 4)  # what the budgets leave
    assert sum(a[1] for a in heard.heard if a[0] == "advance") == 4
    assert heard.heard[-1] == ("finish",)


def test_a_document_that_fails_stops_its_topic_not_the_others(tmp_path):
    path = build(tmp_path, budget=3)
    with Store(path) as s:
        s.con.execute("UPDATE documents SET title = NULL, text = NULL WHERE doc_id = 'q1d11'")
        report = judge_round(s, "words", "live")
        assert (report.failed, report.stuck_topics) == (1, 1)
        assert chosen(s, "1") == ["q1d11"]  # waits for q1d11's grade
        assert len(chosen(s, "2")) == 3
        assert "no text for document 'q1d11'" in report.failures[0]


def test_the_ray_engine_is_refused_for_an_adaptive_round_saying_why(tmp_path):
    path = build(tmp_path)
    with Store(path) as s, pytest.raises(StoreError, match="no list of pairs to send to judge "
                                         "actors on --engine ray; judge it with --engine local"):
        judge_round(s, "words", "live", engine="ray")


@pytest.mark.slow
def test_a_judge_killed_mid_round_resumes_without_asking_a_stored_answer_again(tmp_path):
    log = tmp_path / "slow.log"
    path = build(tmp_path, strategy="mixfuse")
    pooling("judges", "add", path, "slow", "--backend", "command",
            "--param", f"command={program('--log', str(log), '--delay', '0.05')}")
    job = subprocess.Popen([sys.executable, "-m", "pooling", "judge", path, "--judge", "slow",
                            "--round", "live"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 9):
        time.sleep(0.05)
    os.killpg(job.pid, signal.SIGKILL)  # the job and its judge program, at once
    job.wait()
    asked_before = log.read_text().splitlines()
    assert 9 <= len(asked_before) < 2 * DOCS
    with Store(path, read_only=True) as s:
        answered = {tuple(r) for r in s.con.execute(
            "SELECT query_id, doc_id FROM judge_calls WHERE judge_id = 'slow'").fetchall()}
    assert answered and len(answered) < 2 * DOCS
    done = pooling("judge", path, "--judge", "slow", "--round", "live")
    assert f"{len(answered)} judged before" in done.stdout
    asked_after = [tuple(line.split()) for line in log.read_text().splitlines()[len(asked_before):]]
    assert not set(asked_after) & answered  # nothing answered and stored was asked again
    with Store(path, read_only=True) as s:
        assert s.one("n", "SELECT count(*), count(DISTINCT (query_id, doc_id)) FROM judgments "
                     "WHERE assessor_id = 'slow'") == (2 * DOCS, 2 * DOCS)
        assert len(chosen(s, "1")) == len(chosen(s, "2")) == DOCS


# -- the commands ---------------------------------------------------------------------------


def test_pooling_judge_on_the_default_adaptive_round_judges_and_says_what_it_chose(tmp_path):
    path = build(tmp_path, strategy="mixfuse", budget=5)
    some = pooling("judge", path, "--judge", "words", "--round", "live", "--limit", "4")
    lines = some.stdout.splitlines()
    assert lines[0].startswith("words: 4 judged now (0 from cached answers), 0 judged before, "
                               "0 failed, of 4 pairs chosen so far by adaptive round live "
                               "(mixfuse), each after the grade of the one before;")
    assert lines[1] == "2 of 2 topic(s) have more to judge (--limit stopped here); run it again to go on"
    rest = pooling("judge", path, "--judge", "words", "--round", "live")
    assert "6 judged now" in rest.stdout and "4 judged before" in rest.stdout
    assert "of 10 pairs chosen so far" in rest.stdout
    assert rest.stdout.splitlines()[1] == ("every topic of round live is done: its budget is "
                                           "spent, its stopping rule ended it or no candidate is left")
    assert "judging with" not in rest.stderr  # off a terminal: no progress bar


def test_pooling_judge_draws_a_progress_bar_on_a_terminal(tmp_path):
    from tests.test_cli_table_width import in_terminal

    path = build(tmp_path, budget=3)
    text = in_terminal(["judge", str(path), "--judge", "words", "--round", "live"], 120)
    assert "judging with words" in text
    assert "words: 6 judged now" in text


def test_export_pool_of_an_adaptive_round_writes_the_documents_chosen_so_far_and_says_so(tmp_path):
    path = build(tmp_path, budget=2)
    empty = pooling("export", "pool", path, "--round", "live", "-o", tmp_path / "p.tsv", check=False)
    assert empty.returncode == 1 and not (tmp_path / "p.tsv").exists()
    assert ("round 'live' is adaptive (mixfuse): it chooses each topic's documents one at a time from "
            "the grades so far, and none is chosen yet, so there is no pool to export") in empty.stderr
    pooling("judge", path, "--judge", "words", "--round", "live")
    done = pooling("export", "pool", path, "--round", "live", "-o", tmp_path / "p.tsv")
    assert (tmp_path / "p.tsv").read_text().splitlines() == [
        "query_id\tdoc_id\tposition", "1\tq1d11\t1", "1\tq1d10\t2", "2\tq2d11\t1", "2\tq2d10\t2"]
    assert "wrote 4 pool entries" in done.stderr
    assert ("round live is adaptive (mixfuse): it chooses each topic's next document from the grades "
            "so far, so its pool is the 4 document(s) chosen so far, position being the order "
            "chosen") in done.stderr


def test_assign_overlap_on_an_adaptive_round_is_refused_saying_why_and_what_to_do(tmp_path):
    path = build(tmp_path)
    with Store(path) as s:
        add_assessor(s, "ann")
        add_assessor(s, "bob")
        with pytest.raises(StoreError, match="no queue to sample --overlap documents from"):
            assign(s, "live", ["ann", "bob"], overlap=0.1)
        assert s.one("n", "SELECT count(*) FROM assignments") == (0,)
    refused = pooling("assign", path, "--round", "live", "--assessors", "ann,bob", "--overlap",
                      "0.1", check=False)
    assert refused.returncode == 1
    assert "assign it without --overlap (each topic to one assessor)" in refused.stderr
    assert "pool one with e.g. --strategy depth and assign it with --overlap" in refused.stderr
    pooling("assign", path, "--round", "live", "--assessors", "ann,bob")


def test_agreement_and_adjudication_of_an_adaptive_round_say_why_no_pair_is_judged_twice(tmp_path):
    path = build(tmp_path)
    with Store(path) as s:
        add_assessor(s, "ann")
        assign(s, "live", ["ann"])
        with pytest.raises(PoolingError, match="each document it chooses goes to one assessor"):
            round_agreement(s, "live")
    said = pooling("qrels", "adjudication", path, "--round", "live")
    assert said.stdout.strip() == (
        "no disagreements in round live: no pair is judged by two or more assessors yet (round "
        "live is adaptive, so each document it chooses goes to one assessor; assign a static "
        "round with --overlap to have documents judged twice)")


def test_compare_cut_to_an_adaptive_round_that_chose_nothing_says_so_then_cuts_to_its_choices(tmp_path):
    path = build(tmp_path, budget=2)
    qrels = tmp_path / "truth.qrels"
    qrels.write_text("".join(f"{q} 0 q{q}d{i:02d} {int(about(q, i))}\n" for q in TOPICS
                             for i in range(DOCS)))
    with Store(path) as s:
        s.import_qrels(qrels, name="truth")
    empty = pooling("compare", path, "-m", "P_5", "--depth", "3", "--round", "live", check=False)
    assert empty.returncode == 1
    assert ("round live is adaptive (mixfuse) and has chosen no document yet: its pool is the "
            "documents chosen as people or judges work it") in empty.stderr
    assert "shares no topic" not in empty.stderr
    pooling("judge", path, "--judge", "words", "--round", "live")
    with Store(path) as s:
        cut = restricted_qrels(s, "truth", round="live")
        assert sorted(zip(cut["query_id"].to_pylist(), cut["doc_id"].to_pylist(), strict=True)) == [
            ("1", "q1d10"), ("1", "q1d11"), ("2", "q2d10"), ("2", "q2d11")]


# -- a round's scale against the store's qrels ------------------------------------------------


def test_a_round_whose_scale_misses_the_default_qrels_grades_warns_in_one_line(tmp_path):
    path = build(tmp_path)
    qrels = tmp_path / "official.qrels"
    qrels.write_text("1 0 q1d00 0\n1 0 q1d11 4\n2 0 q2d11 3\n2 0 q2d10 1\n")
    with Store(path) as s:
        s.import_qrels(qrels, name="official")
        summary = create_round(s, "narrow", "depth", strategy_params={"depth": 2}, grades=(0, 1, 2))
        assert summary.warnings == [
            "round narrow's scale 0,1,2 does not cover the grades 0,1,3,4 of qrels version "
            "official (the store's default); to judge on their scale, create the round with "
            "--grades 0,1,2,3,4"]
        assert create_round(s, "wide", "depth", grades=(0, 1, 2, 3, 4)).warnings == []
    said = pooling("pool", path, "--round", "r3", "--strategy", "depth", "--depth", "2")
    assert said.stderr.splitlines() == [
        "warning: round r3's scale 0,1,2 does not cover the grades 0,1,3,4 of qrels version "
        "official (the store's default); to judge on their scale, create the round with "
        "--grades 0,1,2,3,4"]
    quiet = pooling("pool", path, "--round", "r4", "--strategy", "depth", "--grades", "0,1,2,3,4")
    assert quiet.stderr == ""


def test_a_store_without_qrels_gives_no_scale_warning(tmp_path):
    path = build(tmp_path)
    with Store(path) as s:
        assert create_round(s, "any", "depth", grades=(0, 1)).warnings == []
