"""Nugget recall equals nuggetizer's own metrics (PyPI nuggetizer 0.0.5, run for real) on
random answers, empty vital sets, answers assigned nothing and model failures included."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from pooling.evaluation.nuggets import evaluate_nuggets, nugget_measure_list

metrics = pytest.importorskip("nuggetizer.core.metrics", reason="scripts/setup-env dev installs nuggetizer")

MEASURES = ("strict_vital", "strict_all", "vital", "all")


def random_records(rng: random.Random, n_runs: int, n_topics: int) -> list[dict]:
    records = []
    for r in range(n_runs):
        for q in range(n_topics):
            if rng.random() < 0.2:
                continue  # the run did not answer this topic
            size = rng.choice([0, 1, 2, 3, 5, 8, 30])
            nuggets = [{"text": f"n{i}",
                        "importance": rng.choice(["vital", "okay", "okay", "failed"]),
                        "assignment": rng.choice(["support", "partial_support", "not_support",
                                                  "failed"])}
                       for i in range(size)]
            if rng.random() < 0.15:  # no vital nugget at all
                for n in nuggets:
                    n["importance"] = "okay"
            records.append({"qid": f"q{q}", "query": "?", "run_id": f"run{r}",
                            "answer_text": "", "response_length": 0, "nuggets": nuggets})
    return records


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("seed", range(8))
def test_per_answer_scores_equal_nuggetizer_bit_for_bit(tmp_path, seed):
    rng = random.Random(seed)
    records = random_records(rng, n_runs=3, n_topics=25)
    result = evaluate_nuggets([write_jsonl(tmp_path / "a.jsonl", records)])
    ours = {(run.run_id, q): {m: float(run.per_query[m][t]) for m in MEASURES}
            for run in result.runs for t, q in enumerate(run.query_ids)}
    assert len(ours) == len(records)
    for record in records:
        theirs = metrics.calculate_nugget_scores(record["qid"], record["nuggets"])
        expected = {m: getattr(theirs, f"{m}_score") for m in MEASURES}
        assert ours[(record["run_id"], record["qid"])] == expected


@pytest.mark.parametrize("seed", range(4))
def test_run_means_equal_nuggetizers_global_metrics_over_the_runs_records(tmp_path, seed):
    rng = random.Random(100 + seed)
    records = random_records(rng, n_runs=4, n_topics=40)
    result = evaluate_nuggets([write_jsonl(tmp_path / "a.jsonl", records)])
    for run in result.runs:
        theirs = metrics.calculate_global_metrics([r for r in records if r["run_id"] == run.run_id])
        for m in MEASURES:
            assert run.summary[m] == pytest.approx(theirs[f"{m}_score"], rel=1e-14, abs=1e-15)
            assert f"{run.summary[m]:.4f}" == f"{theirs[f'{m}_score']:.4f}"


def test_complete_scores_topics_a_run_did_not_answer_as_zero(tmp_path):
    records = [
        {"qid": "1", "run_id": "A", "nuggets": [{"text": "x", "importance": "vital", "assignment": "support"}]},
        {"qid": "2", "run_id": "B", "nuggets": [{"text": "y", "importance": "okay", "assignment": "partial_support"}]},
    ]
    path = write_jsonl(tmp_path / "a.jsonl", records)
    skip = {r.run_id: r.summary for r in evaluate_nuggets([path]).runs}
    zero = {r.run_id: r for r in evaluate_nuggets([path], complete=True).runs}
    assert skip["A"]["all"] == 1.0 and skip["B"]["all"] == 0.5
    assert zero["A"].summary["all"] == 0.5 and zero["B"].summary["all"] == 0.25
    assert zero["A"].missing_query_ids == ["2"] and list(zero["A"].per_query["all"]) == [1.0, 0.0]


def test_a_file_without_run_ids_is_named_after_the_file(tmp_path):
    records = [{"qid": "1", "nuggets": []}]
    result = evaluate_nuggets([write_jsonl(tmp_path / "bm25_gpt4o.jsonl", records)])
    assert [r.run_id for r in result.runs] == ["bm25_gpt4o"]
    assert result.runs[0].summary == {m: 0.0 for m in MEASURES}


def test_measure_names_accept_nuggetizers_spellings():
    assert nugget_measure_list(["nuggets"]) == list(MEASURES)
    assert nugget_measure_list(["all_score", "strict_vital"]) == ["strict_vital", "all"]


def test_pooling_eval_scores_an_assignments_file_without_a_store(tmp_path):
    rng = random.Random(7)
    records = random_records(rng, n_runs=2, n_topics=6)
    path = write_jsonl(tmp_path / "assign.jsonl", records)
    done = subprocess.run([sys.executable, "-m", "pooling", "eval", "-R", "nuggets", "-q", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    blocks = {}
    run = None
    for name, qid, value in (map(str.strip, cells) for cells in lines):
        if name == "runid":
            run = value
            continue
        blocks[(run, name, qid)] = value
    for r in ("run0", "run1"):
        mine = [x for x in records if x["run_id"] == r]
        theirs = metrics.calculate_global_metrics(mine)
        for m in MEASURES:
            assert blocks[(r, m, "all")] == f"{theirs[f'{m}_score']:.4f}"
        for x in mine:
            per = metrics.calculate_nugget_scores(x["qid"], x["nuggets"])
            assert blocks[(r, "strict_vital", x["qid"])] == f"{per.strict_vital_score:.4f}"


@pytest.mark.parametrize("nugget, says", [
    ({"text": "x", "importance": "vital", "assignment": "suport"}, "nuggets[0].assignment must be one of"),
    ({"text": "x", "importance": "Vital", "assignment": "support"}, "nuggets[0].importance must be one of"),
    ({"importance": "vital", "assignment": "support"}, "nuggets[0] must be an object with a 'text'"),
])
def test_a_label_nuggetizer_never_writes_is_refused_at_its_line(tmp_path, nugget, says):
    path = write_jsonl(tmp_path / "bad.jsonl", [{"qid": "1", "nuggets": []},
                                                {"qid": "2", "nuggets": [nugget]}])
    done = subprocess.run([sys.executable, "-m", "pooling", "eval", "-R", "nuggets", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert f"{path}:2: {says}" in done.stderr


@pytest.mark.parametrize("seed", range(3))
def test_the_arrow_path_and_the_line_reader_read_a_file_alike(tmp_path, seed, monkeypatch):
    from pooling.formats import nugget_files

    records = random_records(random.Random(seed), n_runs=2, n_topics=10)
    path = write_jsonl(tmp_path / "a.jsonl", records)
    fast = nugget_files.read_assignments(path)
    assert fast.answers.column("line").null_count == fast.answers.num_rows  # Arrow's path
    monkeypatch.setattr(nugget_files, "FAST_BYTES", 0)
    slow = nugget_files.read_assignments(path)
    assert slow.answers.column("line").to_pylist() == list(range(1, len(records) + 1))
    assert slow.nuggets.equals(fast.nuggets)
    assert slow.answers.drop(["line"]).equals(fast.answers.drop(["line"]))


def test_a_file_arrow_reads_but_the_rule_refuses_goes_to_the_line_reader(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", [
        {"qid": "1", "run_id": "A", "nuggets": []},
        {"qid": "1", "run_id": "A", "nuggets": []},
        {"qid": " 2", "run_id": "A", "nuggets": []}])
    with pytest.raises(Exception) as caught:
        evaluate_nuggets([path])
    message = str(caught.value)
    assert f"{path}:2: duplicate answer of run 'A' for qid '1' (first at line 1)" in message
    assert f"{path}:3: qid ' 2' starts or ends with whitespace" in message
