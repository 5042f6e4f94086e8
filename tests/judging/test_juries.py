"""Juries of model judges: several judges or samples of one each judging every pair, their
usage and cost, their labels aggregated into qrels (gold left out), and the jury report that
says, under cross-validation over gold, whether the jury beats its best member."""

from __future__ import annotations

import json
import os
import random
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from pooling.errors import StoreError
from pooling.judges.juries import (
    derive_jury_qrels,
    judge_jury,
    jury_labels,
    round_jurors,
    sample_jurors,
)
from pooling.judges.jury_report import jury_report
from pooling.judges.model_judges import add_judge, get_judge, judge_pairs, list_judges, round_pairs
from pooling.judges.usage import judge_usage, set_price
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import Judgment, append_judgments, record
from pooling.judging.rounds import create_round
from pooling.store import Store

NOISY = Path(__file__).with_name("noisy_judge.py")
SERVER = Path(__file__).with_name("chat_server.py")
TOPICS = [{"query_id": "1", "title": "wind turbines"}, {"query_id": "2", "title": "solar panels"}]
NOISE = {"good": 0.1, "fair": 0.3, "poor": 0.45}  # accuracies about 0.9, 0.7 and 0.55


def noisy(truth: Path, noise: float, *extra: str) -> str:
    return shlex.join([sys.executable, str(NOISY), "--truth", str(truth), "--noise", str(noise),
                       "--seed", str(noise), *extra])


def build(tmp_path: Path, docs_per_topic: int = 100, gold_per_topic: int = 60) -> Path:
    """Two topics, a run retrieving docs_per_topic documents each, a round `r1` pooling them
    all (grades 0, 1); the true grades of every pair in truth.qrels (a random third relevant)
    and the first gold_per_topic pairs of each topic as qrels version `gold`."""
    path = tmp_path / "c.duckdb"
    rng = random.Random(7)
    run, docs, truth, gold = [], [], [], []
    for topic in TOPICS:
        q = topic["query_id"]
        for i in range(docs_per_topic):
            d = f"q{q}d{i:03d}"
            run.append(f"{q} Q0 {d} {i + 1} {1000 - i} A\n")
            docs.append({"doc_id": d, "title": f"doc {d}", "text": f"a page about {d}"})
            line = f"{q} 0 {d} {int(rng.random() < 1 / 3)}\n"
            truth.append(line)
            if i < gold_per_topic:
                gold.append(line)
    (tmp_path / "a.run").write_text("".join(run))
    (tmp_path / "topics.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOPICS))
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "truth.qrels").write_text("".join(truth))
    (tmp_path / "gold.qrels").write_text("".join(gold))
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run"])
        s.import_topics(tmp_path / "topics.jsonl")
        s.import_documents(tmp_path / "docs.jsonl")
        s.import_qrels(tmp_path / "gold.qrels", name="gold")
        create_round(s, "r1", "depth", strategy_params={"depth": docs_per_topic}, grades=[0, 1])
    return path


def truth_of(tmp_path: Path) -> dict[tuple[str, str], int]:
    return {(q, d): int(g) for q, _, d, g in
            (line.split() for line in (tmp_path / "truth.qrels").read_text().splitlines())}


def pooling(*args, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    if check:
        assert done.returncode == 0, done.stderr
    return done


def unequal_jury(tmp_path: Path) -> Path:
    """The store of `build`, judged by three command jurors of noise 0.1, 0.3 and 0.45."""
    path = build(tmp_path)
    truth = tmp_path / "truth.qrels"
    with Store(path) as s:
        for name, rate in NOISE.items():
            add_judge(s, name, "command", {"command": noisy(truth, rate)})
        reports = judge_jury(s, list(NOISE), round_id="r1")
    assert [(r.judge_id, r.judged, r.failed) for r in reports] == [
        ("good", 200, 0), ("fair", 200, 0), ("poor", 200, 0)]
    return path


def test_votes_over_an_unequal_jury_fall_below_its_best_member_and_the_gold_weighted_rule_does_not(
        tmp_path):
    path = unequal_jury(tmp_path)
    with Store(path, read_only=True) as s:
        report = jury_report(s, "r1", "gold", folds=5)
    accuracy = {j.juror: j.gold_accuracy for j in report.jurors}
    assert report.gold_pairs == 120
    assert accuracy["good"] > accuracy["fair"] > accuracy["poor"]
    assert abs(accuracy["good"] - 0.9) < 0.07 and abs(accuracy["poor"] - 0.55) < 0.1
    rules = {r.rule: r.accuracy for r in report.rules}
    assert report.best_juror.juror == "good"
    assert rules["majority"] < accuracy["good"]  # three votes, two of them weak: below the best
    assert rules["gold-weighted"] >= accuracy["good"]  # under 5-fold CV, never its own gold
    assert "gold-weighted jury" in report.verdict and "its best member good" in report.verdict
    weights = {j.juror: j.weight for j in report.jurors}
    assert weights["good"] > weights["fair"] + weights["poor"]  # the best one dominates
    # agreement among jurors: kappa falls with the weaker juror; alpha between 0 and 1
    kappas = {(a, b): k for a, b, n, k in report.pairwise if n == 200}
    assert kappas[("good", "fair")] > kappas[("fair", "poor")]
    assert 0 < report.alpha_nominal < 1
    done = pooling("jury", "report", path, "--round", "r1", "--gold", "gold", "--folds", "5")
    assert "Krippendorff's alpha" in done.stdout and "gold-weighted" in done.stdout
    assert "its best member good" in done.stdout
    as_json = json.loads(pooling("jury", "report", path, "--round", "r1", "--gold", "gold",
                                 "--format", "json").stdout)
    assert as_json["best_juror"] == "good" and len(as_json["rules"]) == 4


def test_dawid_skene_over_jurors_that_err_together_falls_below_the_best_and_gold_weighting_does_not(
        tmp_path):
    """Three names for one weak model (the same answers: errors shared, as a model's samples at
    a low temperature share them) outvote a strong juror, and Dawid-Skene, which takes them
    for independent witnesses, follows them; their gold accuracy weighs them less than it."""
    path = build(tmp_path)
    truth = tmp_path / "truth.qrels"
    with Store(path) as s:
        add_judge(s, "good", "command", {"command": noisy(truth, 0.1)})
        for name in ("weak-a", "weak-b", "weak-c"):
            add_judge(s, name, "command", {"command": noisy(truth, 0.35, "--label", name)})
        judge_jury(s, ["good", "weak-a", "weak-b", "weak-c"], round_id="r1")
        report = jury_report(s, "r1", "gold", folds=5)
    best = report.best_juror
    rules = {r.rule: r.accuracy for r in report.rules}
    assert best.juror == "good" and best.gold_accuracy > 0.85
    assert rules["dawid-skene"] < best.gold_accuracy - 0.1
    assert rules["majority"] < best.gold_accuracy - 0.1
    assert rules["gold-weighted"] >= best.gold_accuracy


def test_the_report_sets_each_juror_against_the_people_of_the_round(tmp_path):
    path = unequal_jury(tmp_path)
    truth = truth_of(tmp_path)
    with Store(path) as s:
        add_assessor(s, "ann")
        assign(s, "r1", ["ann"])
        record(s, [Judgment("r1", "ann", q, d, g) for (q, d), g in sorted(truth.items())[:50]])
        report = jury_report(s, "r1", "gold", folds=4)
    good = next(j for j in report.jurors if j.juror == "good")
    assert good.people_pairs == 50 and good.people_accuracy > 0.75 and good.people_kappa > 0.5


def test_samples_are_jurors_of_their_own_with_their_own_answers_and_ids(tmp_path):
    path = build(tmp_path, docs_per_topic=20, gold_per_topic=5)
    log = tmp_path / "asked.log"
    with Store(path) as s:
        add_judge(s, "fair", "command",
                  {"command": noisy(tmp_path / "truth.qrels", 0.3, "--log", str(log))})
        first = judge_jury(s, ["fair"], samples=3, round_id="r1")
        assert [r.judge_id for r in first] == ["fair", "fair-sample-2", "fair-sample-3"]
        assert [r.judged for r in first] == [40, 40, 40]
        juror = get_judge(s, "fair-sample-3")
        assert (juror.sample, juror.of, juror.backend) == (3, "fair", "command")
        assert juror.params == get_judge(s, "fair").params  # the judge's own identity
        rows = s.con.execute("SELECT assessor_id, count(*), count(DISTINCT submission_id) FROM "
                             "judgments GROUP BY 1 ORDER BY 1").fetchall()
        assert rows == [("fair", 40, 40), ("fair-sample-2", 40, 40), ("fair-sample-3", 40, 40)]
        assert s.one("ids", "SELECT count(DISTINCT submission_id) FROM judgments") == (120,)
        samples = dict(s.con.execute("SELECT coalesce(sample, 1), count(*) FROM judge_calls "
                                     "WHERE round_id = 'r1' GROUP BY 1").fetchall())
        assert samples == {1: 40, 2: 40, 3: 40}
        labels = jury_labels(s, "r1", round_jurors(s, "r1", ["fair"]))
        by_juror: dict[str, dict[str, int]] = {}
        for w, t, g in zip(*(labels[c].to_pylist() for c in ("worker", "task", "label")),
                           strict=True):
            by_juror.setdefault(w, {})[t] = g
        assert by_juror["fair"] != by_juror["fair-sample-2"]  # each sample answered on its own
        again = judge_jury(s, ["fair"], samples=3, round_id="r1")
        assert [(r.judged, r.already) for r in again] == [(0, 40)] * 3
        # Outside the round: answers from the cache, each sample its own, none asked again.
        outside = judge_pairs(s, "fair-sample-2", round_pairs(s, "r1"))
        assert (outside.judged, outside.cached) == (40, 40)
        stored = dict(s.con.execute(
            "SELECT query_id || ' ' || doc_id, grade FROM judgments "
            "WHERE assessor_id = 'fair-sample-2' AND round_id IS NULL").fetchall())
        assert stored == {t.replace("\t", " "): g for t, g in by_juror["fair-sample-2"].items()}
        assert [j.judge_id for j in list_judges(s)] == ["fair", "fair-sample-2", "fair-sample-3"]
    asked = log.read_text().splitlines()
    assert len(asked) == 120 and len(set(asked)) == 120  # each (sample, pair) once


def test_samples_are_refused_where_they_cannot_differ(tmp_path):
    path = build(tmp_path, docs_per_topic=4, gold_per_topic=2)
    with Store(path) as s:
        add_judge(s, "greedy", "openai", {"base_url": "http://127.0.0.1:9/v1", "model": "m"})
        with pytest.raises(StoreError, match="temperature 0"):
            sample_jurors(s, "greedy", 2)
        add_judge(s, "cal", "learned")
        with pytest.raises(StoreError, match="deterministic"):
            sample_jurors(s, "cal", 3)
        add_judge(s, "warm", "openai", {"base_url": "http://127.0.0.1:9/v1", "model": "m",
                                        "temperature": "0.8"})
        assert [j.judge_id for j in sample_jurors(s, "warm", 2)] == ["warm", "warm-sample-2"]
        with pytest.raises(StoreError, match="sample 2 of judge 'warm'"):
            sample_jurors(s, "warm-sample-2", 2)
        with pytest.raises(StoreError, match="named twice"):
            judge_jury(s, ["warm", "warm"], round_id="r1")
        assert [j.judge_id for j in sample_jurors(s, "greedy", 1)] == ["greedy"]


@pytest.fixture
def chat_server():
    process = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    try:
        yield f"http://127.0.0.1:{int(process.stdout.readline())}/v1"
    finally:
        process.kill()
        process.wait()
        process.stdout.close()


def test_usage_counts_and_costs_equal_the_calls_the_model_received(tmp_path, chat_server):
    path = build(tmp_path, docs_per_topic=6, gold_per_topic=2)
    pooling("judges", "add", path, "warm", "--backend", "openai", "--param",
            f"base_url={chat_server}", "--param", "model=m", "--param", "temperature=0.7",
            "--price-in", "0.5", "--price-out", "2")
    with Store(path) as s:
        add_judge(s, "words", "command", {"command": noisy(tmp_path / "truth.qrels", 0.0)})
    done = pooling("judge", path, "--judge", "warm", "--judge", "words", "--samples", "2",
                   "--round", "r1")
    assert "jury of 4 juror(s): 48 judged now" in done.stdout
    with urllib.request.urlopen(chat_server + "/stats", timeout=5) as response:
        stats = json.loads(response.read())
    assert sum(stats["requests"].values()) == 24  # 12 pairs, twice: no sample read another's
    with Store(path, read_only=True) as s:
        usage = {u.juror: u for u in judge_usage(s, "r1")}
        prompt_tokens = s.one("t", "SELECT sum(prompt_tokens) FROM judge_calls "
                              "WHERE judge_id LIKE 'warm%'")[0]
    assert sorted(usage) == ["warm", "warm-sample-2", "words", "words-sample-2"]
    warm = [usage["warm"], usage["warm-sample-2"]]
    assert [u.calls for u in warm] == [12, 12] and all(u.failed == 0 for u in warm)
    assert sum(u.prompt_tokens for u in warm) == prompt_tokens > 0
    assert [u.completion_tokens for u in warm] == [12 * 9, 12 * 9]  # the server's 9 per answer
    for u in warm:
        assert u.judge == "warm"
        assert u.cost == pytest.approx((u.prompt_tokens * 0.5 + u.completion_tokens * 2) / 1e6)
    assert usage["words"].calls == 12 and usage["words"].cost is None  # no price given
    again = pooling("judge", path, "--judge", "warm", "--samples", "2", "--round", "r1")
    assert "0 judged now" in again.stdout
    with Store(path, read_only=True) as s:
        assert judge_usage(s, "r1")[0].calls == 12  # nothing asked twice, nothing counted twice
    as_json = json.loads(pooling("judges", "usage", path, "--round", "r1", "--format", "json",
                                 "--price", "words=1/1").stdout)
    words = next(u for u in as_json["jurors"] if u["juror"] == "words")
    assert words["calls"] == 12 and words["cost"] == 0.0  # a command judge reports no tokens
    warm_total = next(u for u in as_json["judges"] if u["judge"] == "warm")
    assert warm_total["calls"] == 24 and warm_total["cost"] == pytest.approx(
        sum(u.cost for u in warm))
    csv_text = pooling("judges", "usage", path, "--format", "csv").stdout
    assert csv_text.splitlines()[0].startswith("judge,juror,sample,calls,failed")
    assert len(csv_text.splitlines()) == 5
    table = pooling("judges", "usage", path).stdout
    assert "warm-sample-2" in table and "no price for words" in table
    assert "all" in table  # each judge's jurors summed


def test_a_price_is_refused_unless_it_is_a_number_of_zero_or_more(tmp_path):
    path = build(tmp_path, docs_per_topic=4, gold_per_topic=2)
    with Store(path) as s:
        add_judge(s, "words", "command", {"command": noisy(tmp_path / "truth.qrels", 0.0)})
        with pytest.raises(StoreError, match="--price-in must be"):
            set_price(s, "words", -1, 2)
    bad = pooling("judges", "usage", path, "--price", "words=cheap", check=False)
    assert bad.returncode != 0 and "JUDGE=IN/OUT" in bad.stderr


@pytest.mark.parametrize("rule", ["majority", "wawa", "dawid-skene", "gold-weighted"])
def test_a_jury_derives_qrels_by_each_rule_and_gold_never_enters_them(tmp_path, rule):
    path = unequal_jury(tmp_path)
    with Store(path) as s:
        version = derive_jury_qrels(s, rule, f"jury-{rule}", round_id="r1",
                                    jurors=["good", "fair", "poor"], gold="gold")
        assert version.n_rows == 80  # 200 pairs, 120 of them gold
        gold_pairs = set(s.con.execute("SELECT query_id, doc_id FROM qrels WHERE version = 'gold'"
                                       ).fetchall())
        derived = set(s.con.execute("SELECT query_id, doc_id FROM qrels WHERE version = ?",
                                    [version.name]).fetchall())
        assert not derived & gold_pairs
        judges, params = s.one("v", "SELECT judges, params FROM qrels_versions WHERE name = ?",
                               [version.name])
        assert judges == ["good", "fair", "poor"]
        assert json.loads(params)["jurors"] == ["good", "fair", "poor"]
        posteriors = s.one("p", "SELECT count(*) FROM qrels_posteriors WHERE version = ?",
                           [version.name])[0]
        assert posteriors == 80
        workers = {a for (a,) in s.con.execute(
            "SELECT DISTINCT assessor_id FROM qrels_workers WHERE version = ?",
            [version.name]).fetchall()}
        assert workers == {"good", "fair", "poor"}


def test_the_gold_weighted_jury_needs_gold_and_the_cli_derives_with_jurors(tmp_path):
    path = unequal_jury(tmp_path)
    with Store(path) as s:
        with pytest.raises(StoreError, match="accuracy on gold"):
            derive_jury_qrels(s, "gold-weighted", "nogold", round_id="r1")
        with pytest.raises(StoreError, match="does not aggregate a jury"):
            derive_jury_qrels(s, "latest", "x", round_id="r1")
        with pytest.raises(StoreError, match="has judged nothing"):
            add_judge(s, "idle", "command", {"command": noisy(tmp_path / "truth.qrels", 0)})
            derive_jury_qrels(s, "majority", "x", round_id="r1", jurors=["idle"])
    done = pooling("qrels", "derive", path, "--rule", "gold-weighted", "--round", "r1",
                   "--jurors", "all", "--gold", "gold", "--name", "jury")
    assert "qrels version jury: 80 judgments" in done.stdout
    refused = pooling("qrels", "derive", path, "--rule", "majority", "--jurors", "good",
                      "--name", "x", check=False)
    assert refused.returncode != 0 and "give --round" in refused.stderr


def test_a_rounds_own_gold_pairs_are_judged_by_the_jury_and_never_derived(tmp_path):
    path = build(tmp_path, docs_per_topic=10, gold_per_topic=3)
    (tmp_path / "outside.qrels").write_text("1 0 q1x900 1\n2 0 q2x901 0\n")
    (tmp_path / "more.jsonl").write_text("".join(
        json.dumps({"doc_id": d, "title": d, "text": "a page"}) + "\n" for d in ("q1x900", "q2x901")))
    with Store(path) as s:
        s.import_documents(tmp_path / "more.jsonl")
        s.import_qrels(tmp_path / "outside.qrels", name="outside")
        params = json.loads(s.one("p", "SELECT params FROM rounds WHERE round_id = 'r1'")[0])
        s.con.execute("UPDATE rounds SET params = ? WHERE round_id = 'r1'",
                      [json.dumps({**params, "gold": "outside"})])
        add_judge(s, "good", "command", {"command": noisy(tmp_path / "truth.qrels", 0.0)})
        report, = judge_jury(s, ["good"], round_id="r1")
        assert report.judged == 22  # the pool's 20 pairs and the round's 2 gold pairs
        version = derive_jury_qrels(s, "majority", "m", round_id="r1")
        assert version.n_rows == 20
        assert s.one("g", "SELECT count(*) FROM qrels WHERE version = 'm' AND doc_id LIKE '%x9%'"
                     ) == (0,)


@pytest.mark.slow
def test_a_jury_job_killed_mid_run_resumes_asking_no_juror_twice_for_a_pair(tmp_path):
    path = build(tmp_path, docs_per_topic=50, gold_per_topic=5)
    log = tmp_path / "asked.log"
    pooling("judges", "add", path, "slow", "--backend", "command", "--param",
            f"command={noisy(tmp_path / 'truth.qrels', 0.3, '--log', str(log), '--delay', '0.03')}")
    command = [sys.executable, "-m", "pooling", "judge", path, "--judge", "slow", "--samples", "2",
               "--round", "r1"]
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
            not log.exists() or sum(1 for x in log.read_text().splitlines() if x[0] == "2") < 45):
        time.sleep(0.05)
    os.killpg(job.pid, signal.SIGKILL)  # the job and its judge program, mid sample 2
    job.wait()
    before = log.read_text().splitlines()
    with Store(path, read_only=True) as s:
        stored = dict(s.con.execute("SELECT assessor_id, count(*) FROM judgments GROUP BY 1"
                                    ).fetchall())
        answered = dict(s.con.execute("SELECT coalesce(sample, 1), count(*) FROM judge_calls "
                                      "GROUP BY 1").fetchall())
    assert stored["slow"] == 100 and 32 <= stored["slow-sample-2"] < 100
    assert answered == {1: 100, 2: stored["slow-sample-2"]}
    pooling(*command[3:])
    after = log.read_text().splitlines()[len(before):]
    assert not any(line.startswith("1 ") for line in after)  # sample 1 was done: not asked
    assert len(after) == 100 - answered[2]  # sample 2: only what was never stored
    with Store(path, read_only=True) as s:
        assert s.one("n", "SELECT count(*), count(DISTINCT (assessor_id, query_id, doc_id)) "
                     "FROM judgments") == (200, 200)


def test_the_gold_weighted_rule_also_aggregates_people_and_leaves_their_gold_out(tmp_path):
    path = build(tmp_path, docs_per_topic=20, gold_per_topic=8)
    truth = truth_of(tmp_path)
    people = {"careful": 0.0, "sloppy": 0.4, "careless": 0.45}
    with Store(path) as s:
        for name in people:
            add_assessor(s, name)
        rng = random.Random(1)
        for name, noise in people.items():
            append_judgments(s, [Judgment("r1", name, q, d, g if rng.random() >= noise else 1 - g)
                       for (q, d), g in sorted(truth.items())])
    done = pooling("qrels", "derive", path, "--rule", "gold-weighted", "--round", "r1",
                   "--gold", "gold", "--name", "weighted")
    assert "qrels version weighted: 24 judgments" in done.stdout  # 40 pairs, 16 of them gold
    with Store(path, read_only=True) as s:
        derived = dict(s.con.execute("SELECT query_id || ' ' || doc_id, relevance FROM qrels "
                                     "WHERE version = 'weighted'").fetchall())
    assert derived == {f"{q} {d}": g for (q, d), g in truth.items()
                       if f"{q} {d}" in derived}  # the careful one decides alone
