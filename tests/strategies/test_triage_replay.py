"""A replay of triage against the truth: the share of each judge's errors caught after
reviewing a share of the pairs in triage order, against random order and the best order;
on hand-made labels, every tie order enumerated, the strategy's own queue, a store, the
command line and real crowd labels with NIST's gold grades."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pooling.cli.app import app
from pooling.label_sets.triage import store_triage_replay
from pooling.strategies import StrategyError, TopicRuns, get_strategy
from pooling.strategies.replays.triage import TriageReplayError, triage_replay
from pooling.strategies.uncertain import JudgeGrade, triage_key


def labels(grades: dict[tuple[str, str], int], probability: dict | None = None) -> pa.Table:
    keys = list(grades)
    columns = {"query_id": [q for q, _ in keys], "doc_id": [d for _, d in keys],
               "grade": [grades[k] for k in keys]}
    if probability is not None:
        columns["probability"] = [probability.get(k) for k in keys]
    return pa.table(columns)


# Ten pairs of topic 1 on a 0-1 scale. The judges disagree on d0-d3 (each time one of them
# is wrong) and agree on d4-d9, both wrong on d8 and d9.
TRUTH = {("1", f"d{i}"): g for i, g in enumerate([1, 0, 1, 0, 1, 0, 1, 0, 1, 0])}
A = {("1", f"d{i}"): g for i, g in enumerate([1, 1, 0, 0, 1, 0, 1, 0, 0, 1])}
B = {("1", f"d{i}"): g for i, g in enumerate([0, 0, 1, 1, 1, 0, 1, 0, 0, 1])}


def row(result, judge: str, reviewed: float) -> dict:
    (found,) = [r for r in result.table.to_pylist()
                if r["judge"] == judge and math.isclose(r["reviewed"], reviewed)]
    return found


def test_reviewing_the_disagreements_first_catches_each_judges_errors_there():
    result = triage_replay({"a": labels(A), "b": labels(B)}, labels(TRUTH), max_grade=1,
                           shares=[0.2, 0.4, 1.0])
    assert (result.n_pairs, result.n_topics, result.n_without_truth) == (10, 1, 0)
    # a errs on d1, d2, d8, d9; b on d0, d3, d8, d9: the four disagreements hold two of each.
    at_40 = row(result, "a", 0.4)
    assert (at_40["pairs_reviewed"], at_40["errors"], at_40["caught"]) == (4, 4, 2.0)
    assert (at_40["caught_share"], at_40["random_share"], at_40["best_share"]) == (0.5, 0.4, 1.0)
    assert at_40["ratio"] == pytest.approx(1.25)
    # Two of the four tied disagreements: each of a's two errors there is caught half the time.
    assert row(result, "a", 0.2)["caught"] == pytest.approx(1.0)
    either = row(result, "either", 0.4)
    assert (either["errors"], either["caught"], either["best_share"]) == (6, 4.0, 4 / 6)
    assert row(result, "b", 1.0)["caught_share"] == 1.0


def enumerated_mean(keys, errs, k) -> float:
    """Errors among the first k, averaged over every order that keeps the triage keys sorted
    (each tie group in each of its orders)."""
    groups = [list(g) for _, g in itertools.groupby(sorted(range(len(keys)), key=lambda i: keys[i]),
                                                    key=lambda i: keys[i])]
    totals = []
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        sequence = [i for order in orders for i in order]
        totals.append(sum(errs[i] for i in sequence[:k]))
    return float(np.mean(totals))


@pytest.mark.parametrize("seed", range(8))
def test_a_share_cutting_a_tie_counts_the_mean_over_every_order_of_the_tie(seed):
    rng = np.random.default_rng(seed)
    n = 9
    truth = {("1", f"d{i}"): int(g) for i, g in enumerate(rng.integers(0, 3, n))}
    one = {k: int(g) for k, g in zip(truth, rng.integers(0, 3, n), strict=True)}
    two = {k: int(g) for k, g in zip(truth, rng.integers(0, 3, n), strict=True)}
    result = triage_replay({"one": labels(one), "two": labels(two)}, labels(truth),
                           max_grade=2, shares=[k / n for k in range(1, n + 1)])
    keys = [triage_key([JudgeGrade(one[p], None, 0, 2), JudgeGrade(two[p], None, 0, 2)])
            for p in truth]
    for judge, grades in (("one", one), ("two", two)):
        errs = [int((grades[p] >= 1) != (truth[p] >= 1)) for p in truth]
        for k in range(1, n + 1):
            assert row(result, judge, k / n)["caught"] == pytest.approx(
                enumerated_mean(keys, errs, k), abs=1e-12), (judge, k)


def test_by_topic_reviews_each_topics_queue_in_the_strategys_own_order():
    rng = np.random.default_rng(3)
    probability = {}
    judged, truth = {}, {}
    for q in "123":
        for i in range(10 + 5 * int(q)):
            key = (q, f"{q}-{i:02d}")
            truth[key] = int(rng.random() < 0.3)
            probability[key] = float(np.clip(truth[key] * 0.5 + rng.random() * 0.6, 0, 1))
            judged[key] = int(probability[key] >= 0.5)
    result = triage_replay({"j": labels(judged, probability)}, labels(truth), by="topic",
                           shares=[0.2, 0.5])
    strategy = get_strategy("uncertain", judges="j").given(judge_grades={"j": {
        q: {d: JudgeGrade(judged[(q, d)], probability[(q, d)], 0, None)
            for (qq, d) in judged if qq == q} for q in "123"}})
    for share in (0.2, 0.5):
        caught = 0
        for q in "123":
            queue = strategy.queue(TopicRuns(q, {}), 0)
            k = math.floor(share * len(queue) + 0.5)
            caught += sum(judged[(q, d)] != truth[(q, d)] for d in queue[:k])
        assert row(result, "j", share)["caught"] == caught
    errs = {q: sum(judged[k] != truth[k] for k in truth if k[0] == q) for q in "123"}
    sizes = {q: sum(1 for k in truth if k[0] == q) for q in "123"}
    expected = sum(errs[q] * math.floor(0.2 * sizes[q] + 0.5) / sizes[q] for q in "123")
    assert row(result, "j", 0.2)["random_share"] == pytest.approx(expected / sum(errs.values()))


def test_a_sparse_truth_leaves_its_missing_pairs_out_unless_they_count_as_unjudged():
    sparse = {k: g for k, g in TRUTH.items() if g > 0}
    left = triage_replay({"a": labels(A), "b": labels(B)}, labels(sparse), max_grade=1)
    assert (left.n_pairs, left.n_without_truth) == (5, 5)
    assert "5 without a truth grade left out" in left.header()
    kept = triage_replay({"a": labels(A), "b": labels(B)}, labels(sparse), max_grade=1,
                         unjudged=0)
    assert kept.n_pairs == 10 and kept.table == triage_replay(
        {"a": labels(A), "b": labels(B)}, labels(TRUTH), max_grade=1).table
    with pytest.raises(TriageReplayError, match="--unjudged 0"):
        triage_replay({"a": labels(A)}, labels({("9", "x"): 1}), max_grade=1)


def test_grade_errors_count_any_grade_but_the_truths():
    truth = {("1", "d0"): 2, ("1", "d1"): 1, ("1", "d2"): 0}
    judge = {("1", "d0"): 1, ("1", "d1"): 1, ("1", "d2"): 0}
    binary = triage_replay({"j": labels(judge)}, labels(truth), max_grade=2, shares=[1.0])
    graded = triage_replay({"j": labels(judge)}, labels(truth), max_grade=2, shares=[1.0],
                           errors="grade")
    assert row(binary, "j", 1.0)["errors"] == 0 and row(graded, "j", 1.0)["errors"] == 1
    assert math.isnan(row(binary, "j", 1.0)["caught_share"])


def test_the_judges_scales_are_declared_and_checked():
    stray = {**A, ("1", "d4"): 5, ("1", "d6"): 5}
    with pytest.raises(StrategyError, match=r"judge a gave 2 grade\(s\) outside its scale 0-1: "
                                            r"\(1, d4\) grade 5, \(1, d6\) grade 5"):
        triage_replay({"a": labels(stray), "b": labels(B)}, labels(TRUTH), max_grade=1)
    with pytest.raises(StrategyError, match="judge a declares no grade scale"):
        triage_replay({"a": labels(A), "b": labels(B)}, labels(TRUTH))
    # One judge whose every label has a probability needs no scale.
    sure = {k: 0.9 if g else 0.1 for k, g in A.items()}
    assert triage_replay({"a": labels(A, sure)}, labels(TRUTH)).n_pairs == 10
    with pytest.raises(TriageReplayError, match=r"outside \[0, 1\]: \(1, d0\) 1.5"):
        triage_replay({"a": labels(A, {**sure, ("1", "d0"): 1.5})}, labels(TRUTH))
    with pytest.raises(TriageReplayError, match="one judge or two"):
        triage_replay({"a": labels(A), "b": labels(B), "c": labels(A)}, labels(TRUTH))
    with pytest.raises(TriageReplayError, match="one per judge"):
        triage_replay({"a": labels(A), "b": labels(B)}, labels(TRUTH), max_grade=[1, 1, 1])


def qrels_file(path: Path, grades: dict[tuple[str, str], int]) -> Path:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in grades.items()))
    return path


def test_the_command_replays_judges_files_against_a_truth_file(tmp_path):
    truth = qrels_file(tmp_path / "truth.qrels", TRUTH)
    a, b = qrels_file(tmp_path / "a.qrels", A), qrels_file(tmp_path / "b.qrels", B)
    args = ["simulate-triage", str(truth), "--judge", f"a={a}", "--judge", f"b={b}",
            "--max-grade", "1", "--shares", "40,100"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("triage of a, b: 10 pairs both judges graded in 1 topics")
    assert lines[2].split() == ["judge", "reviewed", "pairs", "errors", "caught", "(triage)",
                                "caught", "(random)", "best", "possible", "triage", "/", "random"]
    assert lines[4].split() == ["a", "40%", "4", "4", "50.0%", "40.0%", "100.0%", "1.25x"]
    as_csv = CliRunner().invoke(app, [*args, "--format", "csv"])
    assert as_csv.output.splitlines()[0] == ("judge,reviewed,pairs_reviewed,errors,caught,"
                                             "caught_share,random_share,best_share,ratio")
    stray = CliRunner().invoke(app, [*args[:-4], "--max-grade", "1,1,1"])
    assert "max_grade takes one whole number" in str(stray.exception)
    bare = CliRunner().invoke(app, ["simulate-triage", str(truth), "--judge", "a"])
    assert "--judge takes NAME=FILE" in str(bare.exception)


def test_the_command_replays_judges_of_a_store_on_their_declared_scales(tmp_path):
    from pooling.judges.model_judges import add_judge
    from pooling.judging.history import Judgment
    from pooling.judging.judgments import append_judgments
    from pooling.store import Store

    path = tmp_path / "s.duckdb"
    with Store.create(path) as s:
        s.import_qrels(qrels_file(tmp_path / "truth.qrels", TRUTH), name="official")
        add_judge(s, "umbrela", "openai", {"base_url": "http://127.0.0.1:9/v1", "model": "m"})
        add_judge(s, "tfidf", "learned")
        # umbrela grades 0-3 (its declared scale), the learned judge 0-1.
        append_judgments(s, [Judgment(None, "umbrela", q, d, 3 * g) for (q, d), g in A.items()])
        append_judgments(s, [Judgment(None, "tfidf", q, d, g) for (q, d), g in B.items()])
        stored = store_triage_replay(s, ["umbrela", "tfidf"], "official", shares=[0.4])
    files = triage_replay({"umbrela": labels(A), "tfidf": labels(B)}, labels(TRUTH),
                          max_grade=1, shares=[0.4])
    assert stored.table == files.table.set_column(0, "judge", pa.array(
        ["umbrela", "tfidf", "either"]))
    result = CliRunner().invoke(app, ["simulate-triage", "official", "--store", str(path),
                                      "--judge", "umbrela", "--judge", "tfidf", "--shares", "40",
                                      "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1].startswith("umbrela,0.4,4,4,2.0,0.5,0.4,1.0,1.25")


@pytest.mark.shared
def test_on_real_crowd_labels_disagreement_first_catches_errors_well_above_random(shared_dir):
    """TREC 2010 RF: two Mechanical Turk workers' labels per pair (the first two given, broken
    links dropped) against NIST's gold grade, on the 3,277 pairs NIST graded 0-2."""
    import pandas as pd

    crowd = pd.read_csv(shared_dir / "data" / "trec2010-rf-crowd" / "trec-rf10-data.txt",
                        sep="\t", dtype={"topicID": str, "docID": str})
    crowd = crowd[crowd["gold"].between(0, 2) & crowd["label"].between(0, 2)]
    crowd = crowd.assign(nth=crowd.groupby(["topicID", "docID"]).cumcount())
    judges = {}
    for nth, name in ((0, "first"), (1, "second")):
        part = crowd[crowd["nth"] == nth]
        judges[name] = pa.table({"query_id": part["topicID"], "doc_id": part["docID"],
                                 "grade": part["label"]})
    gold = crowd.drop_duplicates(["topicID", "docID"])
    truth = pa.table({"query_id": gold["topicID"], "doc_id": gold["docID"],
                      "grade": gold["gold"]})
    result = triage_replay(judges, truth, max_grade=2, shares=[0.1, 0.2])
    assert result.n_pairs > 3000
    # Crowd workers err together on hard pages, so one worker's errors sit where the two
    # disagree only a little more often than chance (1.16-1.26x measured); a pair either
    # worker gets wrong, much more (1.5-1.7x).
    for share in (0.1, 0.2):
        assert all(row(result, judge, share)["ratio"] > 1.1 for judge in ("first", "second"))
        assert row(result, "either", share)["ratio"] > 1.4
