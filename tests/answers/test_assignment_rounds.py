"""Assignment rounds: answers queued over a frozen nugget version, graded per nugget through
the core's part judgments, derived into an assignment version by a recorded rule, and runs
scored from the store exactly as nuggetizer scores the same assignments."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from pooling.errors import StoreError
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import record
from pooling.judging.validation import JudgmentRefused, part_submission
from pooling.nuggets.assignments import derive_assignments, score_assignments
from pooling.nuggets.rounds import create_assignment_round
from pooling.store import Store
from pooling.store import nugget_banks as nb
from pooling.store.answers import import_answers

metrics = pytest.importorskip("nuggetizer.core.metrics")

LABELS = {2: "support", 1: "partial_support", 0: "not_support"}


@pytest.fixture
def campaign(tmp_path):
    """Three answer runs over four topics (run C skips topic 4), a people's bank of four
    topics (topic 3 without a vital nugget, topic 4 without any nugget), frozen."""
    lines = []
    for run in ("A", "B", "C"):
        for q in ("1", "2", "3", "4"):
            if run == "C" and q == "4":
                continue
            lines.append(json.dumps({"run_id": run, "topic_id": q, "topic": f"question {q}",
                                     "references": ["d1", "d2"],
                                     "answer": [{"text": f"{run} answers {q}.", "citations": [0]},
                                                {"text": "More.", "citations": [1]}]}))
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n")
    store = Store.create(tmp_path / "c.duckdb")
    import_answers(store, [path], add_topics=True)
    for q, imps in (("1", ["vital", "okay", "vital"]), ("2", ["vital", "okay"]), ("3", ["okay", "okay"])):
        for i, imp in enumerate(imps):
            nb.add_nugget(store, "people", q, f"nugget {i} of {q}", imp, made_by="ann")
    version = nb.freeze(store, "people")
    store.sql("t", "UPDATE nugget_versions SET params = '{\"empty_topics\": [\"4\"]}' WHERE name = ?",
              [version])
    yield store, version
    store.close()


def test_a_round_queues_every_answer_and_records_the_versions_nuggets(campaign):
    store, version = campaign
    summary = create_assignment_round(store, "assign", version)
    rnd = summary.round
    assert (rnd.item_type, rnd.params["nugget_version"]) == ("nugget", version)
    assert summary.per_topic == {"1": 3, "2": 3, "3": 3}
    assert rnd.parts_of("1") == ["1", "3", "2"]  # vital first
    # a later edit of the bank leaves the round's nuggets as they were
    nb.reword_nugget(store, "people", "1", "1", "reworded after the round", made_by="bob")
    from pooling.judging.rounds import get_round
    assert get_round(store, "assign").parts["1"][0] == ("1", "nugget 0 of 1")


def test_a_submission_must_grade_every_nugget_on_the_rounds_scale(campaign):
    store, version = campaign
    rnd = create_assignment_round(store, "assign", version, grades=2).round
    assert rnd.grades == (0, 2)
    with pytest.raises(JudgmentRefused, match="grades need a grade for every nugget"):
        part_submission(rnd, "p1", "2", "A", grades_value={"1": 2}, submission_id_value="s" * 16)
    with pytest.raises(JudgmentRefused, match="nugget '9' is not one of topic 2's nuggets"):
        part_submission(rnd, "p1", "2", "A", grades_value={"1": 2, "2": 0, "9": 0},
                        submission_id_value="s" * 16)


def grade_all(store, rnd, assessor, rng):
    made = {}
    for q in rnd.topics:
        for run in store.sql("t", "SELECT doc_id FROM pool_entries WHERE round_id = ? AND query_id = ?",
                             [rnd.round_id, q]).fetchall():
            grades = {n: rng.choice(rnd.grades) for n in rnd.parts_of(q)}
            made[(run[0], q)] = grades
            record(store, part_submission(rnd, assessor, q, run[0], grades_value=grades,
                                          submission_id_value=f"{assessor}-{q}-{run[0]}".ljust(16, "x")))
    return made


@pytest.mark.parametrize("seed", range(3))
def test_scores_from_a_derived_version_equal_nuggetizers_on_the_same_assignments(campaign, seed):
    store, version = campaign
    rnd = create_assignment_round(store, "assign", version).round
    person = add_assessor(store, "Ann").assessor_id
    assign(store, "assign", [person])
    made = grade_all(store, rnd, person, random.Random(seed))
    derived = derive_assignments(store, "majority", "people-assigned", round_id="assign")
    assert (derived.nugget_version, derived.method, derived.n_answers) == (version, "derived:majority", 9)
    result = score_assignments(store, "people-assigned")
    nuggets = {q: [(r["nugget_id"], r["importance"]) for r in
                   nb.version_nuggets(store, version).to_pylist() if r["query_id"] == q]
               for q in ("1", "2", "3", "4")}
    for run in result.runs:
        records = []
        for q in run.query_ids:
            graded = made.get((run.run_id, q), {})
            records.append({"qid": q, "nuggets": [
                {"text": n, "importance": imp, "assignment": LABELS[graded[n]]}
                for n, imp in nuggets[q]]})
        for t, r in enumerate(records):
            theirs = metrics.calculate_nugget_scores(r["qid"], r["nuggets"])
            assert run.per_query["vital"][t] == theirs.vital_score
            assert run.per_query["strict_all"][t] == theirs.strict_all_score
        mean = metrics.calculate_global_metrics(records)
        assert run.summary["all"] == pytest.approx(mean["all_score"], abs=1e-15)
    assert {r.run_id: len(r.query_ids) for r in result.runs} == {"A": 4, "B": 4, "C": 3}
    full = {r.run_id: r for r in score_assignments(store, "people-assigned", complete=True).runs}
    assert full["C"].missing_query_ids == ["4"] and len(full["C"].query_ids) == 4


def test_an_unassigned_nugget_counts_as_not_supported(campaign):
    store, version = campaign
    rnd = create_assignment_round(store, "assign", version, topics=["2"]).round
    person = add_assessor(store, "Ann").assessor_id
    assign(store, "assign", [person])
    record(store, part_submission(rnd, person, "2", "A", grades_value={"1": 2, "2": 2},
                                  submission_id_value="a" * 16))
    derive_assignments(store, "latest", "partial", round_id="assign")
    scores = {r.run_id: r.summary for r in score_assignments(store, "partial", runs=["A", "B"]).runs}
    assert scores["A"]["all"] == 1.0 and scores["B"]["all"] == 0.0


def test_bad_rounds_are_refused(campaign):
    store, version = campaign
    with pytest.raises(StoreError, match="no nugget for topic"):
        create_assignment_round(store, "r", version, topics=["4"])
    with pytest.raises(StoreError, match="no answer run 'Z'"):
        create_assignment_round(store, "r", version, runs=["Z"])
    with pytest.raises(StoreError, match="--grades must be 3"):
        create_assignment_round(store, "r", version, grades=5)
    with pytest.raises(StoreError, match="no nugget version"):
        create_assignment_round(store, "r", "nope")


def test_the_cli_runs_a_round_from_nuggets_to_scores(campaign, tmp_path):
    store, version = campaign
    path = store.path
    person = add_assessor(store, "Ann").assessor_id
    store.close()
    cli = [sys.executable, "-m", "pooling"]

    def run(*args):
        done = subprocess.run([*cli, *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "9 answers over 3 topics" in run("nuggets", "round", path, "--round", "a", "--version", version)
    with Store(path) as s:
        from pooling.judging.rounds import get_round
        assign(s, "a", [person])
        rnd = get_round(s, "a")
        grade_all(s, rnd, person, random.Random(1))
    assert "assignment version v1" in run("nuggets", "derive", path, "--round", "a", "--name", "v1")
    out = run("nuggets", "score", path, "--assignments", "v1", "-q")
    lines = [tuple(cell.strip() for cell in line.split("\t")) for line in out.splitlines()]
    assert ("runid", "all", "A") in lines and ("strict_vital", "1", "0.5000") in lines


def assignment_file(tmp_path, name, store, version, rng):
    """A nuggetizer assignments file grading every stored answer on the version's nuggets."""
    table = nb.version_nuggets(store, version).to_pylist()
    records = []
    for q, r in store.sql("a", "SELECT query_id, run_id FROM answers ORDER BY 1, 2").fetchall():
        mine = [n for n in table if n["query_id"] == q]
        records.append({"qid": q, "run_id": r, "nuggets": [
            {"text": n["text"], "importance": n["importance"],
             "assignment": rng.choice(["support", "partial_support", "not_support"])} for n in mine]})
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in records))
    return path, records


def test_two_assignment_versions_compare_by_kappa_and_by_their_run_rankings(campaign, tmp_path):
    from scipy.stats import kendalltau
    from sklearn.metrics import cohen_kappa_score

    from pooling.nuggets.assignments import import_assignments
    from pooling.nuggets.compare import compare_assignments

    store, version = campaign
    rng = random.Random(5)
    first, ra = assignment_file(tmp_path, "a.jsonl", store, version, rng)
    second, rb = assignment_file(tmp_path, "b.jsonl", store, version, rng)
    import_assignments(store, [str(first)], version, "people")
    import_assignments(store, [str(second)], version, "model")
    got = compare_assignments(store, "people", "model", measure="all")
    code = {"not_support": 0, "partial_support": 1, "support": 2}
    x = [code[n["assignment"]] for r in ra for n in r["nuggets"]]
    y = [code[n["assignment"]] for r in rb for n in r["nuggets"]]
    assert got.overall.pairs == len(x) > 0
    assert got.overall.same == pytest.approx(sum(a == b for a, b in zip(x, y, strict=True)) / len(x))
    assert got.overall.kappa == pytest.approx(cohen_kappa_score(x, y, labels=[0, 1, 2]))
    assert got.overall.weighted_kappa == pytest.approx(
        cohen_kappa_score(x, y, labels=[0, 1, 2], weights="linear"))
    runs = sorted(got.scores)
    tau = kendalltau([got.scores[r][0] for r in runs], [got.scores[r][1] for r in runs]).statistic
    assert got.tau == pytest.approx(tau)
    assert set(got.by_importance) == {"vital", "okay"}
    assert sum(a.pairs for a in got.by_topic.values()) == len(x)
    scores = {r.run_id: r.summary["all"] for r in score_assignments(store, "people").runs}
    assert {r: s[0] for r, s in got.scores.items()} == scores


def test_assignment_versions_of_different_nugget_versions_are_not_compared(campaign, tmp_path):
    from pooling.nuggets.assignments import import_assignments
    from pooling.nuggets.compare import compare_assignments

    store, version = campaign
    path, _ = assignment_file(tmp_path, "a.jsonl", store, version, random.Random(1))
    import_assignments(store, [str(path)], version, "first")
    nb.add_nugget(store, "people", "1", "one more", "okay")
    later = nb.freeze(store, "people")
    path2, _ = assignment_file(tmp_path, "b.jsonl", store, later, random.Random(2))
    import_assignments(store, [str(path2)], later, "second")
    with pytest.raises(StoreError, match="grade different nugget versions"):
        compare_assignments(store, "first", "second")


def test_answer_runs_rank_on_an_assignment_version_with_tests_and_the_assigned_share(campaign, tmp_path):
    from pooling.leaderboard.answers import answer_leaderboard
    from pooling.nuggets.assignments import import_assignments

    store, version = campaign
    path, records = assignment_file(tmp_path, "a.jsonl", store, version, random.Random(9))
    # run C's answer to topic 2 assigned on one nugget only: its other nugget unassigned
    kept = []
    for r in records:
        if (r["run_id"], r["qid"]) == ("C", "2"):
            r = {**r, "nuggets": r["nuggets"][:1]}
        kept.append(r)
    path.write_text("".join(json.dumps(x) + "\n" for x in kept))
    import_assignments(store, [str(path)], version, "people")
    lb = answer_leaderboard(store, "people", resamples=200)
    assert lb.basis == "assignments" and lb.primary == "all"
    assert lb.measures == ["all", "vital", "strict_all", "strict_vital"]
    assert sorted(lb.run_ids) == ["A", "B", "C"]
    assigned = dict(zip(lb.table["run_id"].to_pylist(), lb.table["Assigned"].to_pylist(), strict=True))
    assert assigned["A"] == 1.0 and assigned["B"] == 1.0
    # C: topic 2 assigned on 1 of its 2 nuggets; topic 4 (no nugget, not answered) rests on
    # nothing unjudged
    assert assigned["C"] == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    means = {r.run_id: r.summary["all"] for r in score_assignments(store, "people", complete=True).runs}
    assert lb.means() == pytest.approx(means)
    assert lb.pairs.num_rows == 3


def test_the_cli_prints_an_answer_leaderboard(campaign, tmp_path):
    from pooling.nuggets.assignments import import_assignments

    store, version = campaign
    path, _ = assignment_file(tmp_path, "a.jsonl", store, version, random.Random(3))
    import_assignments(store, [str(path)], version, "people")
    db = store.path
    store.close()
    done = subprocess.run([sys.executable, "-m", "pooling", "leaderboard", str(db),
                           "--assignments", "people", "--format", "csv", "--resamples", "100"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0].split(",")
    assert header[0] == "run_id" and {"all", "Assigned", "all_t_low", "rank", "group"} <= set(header)
    assert len(done.stdout.splitlines()) == 1 + 3


def test_an_offline_batch_carries_each_answer_and_nugget_and_comes_back_graded(campaign, tmp_path):
    import csv

    from pooling.errors import FormatError
    from pooling.judging.batches import export_batch, import_batch

    store, version = campaign
    create_assignment_round(store, "assign", version, topics=["1"])
    person = add_assessor(store, "Ann").assessor_id
    assign(store, "assign", [person])
    path = tmp_path / "batch.csv"
    assert export_batch(store, "assign", person, path) == 3 * 3  # three answers, three nuggets
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[:5] == ["round_id", "query_id", "doc_id", "nugget", "nugget_text"]
    first = rows[0]
    assert (first["doc_id"], first["nugget"], first["nugget_text"]) == ("A", "1", "nugget 0 of 1")
    assert first["doc_title"] == "Answer of run A" and first["doc_text"].startswith("1. A answers 1. [1]")
    for row, grade in zip(rows, [2, 1, 0] * 3, strict=True):
        row["grade"] = grade
    rows[1]["grade"] = 7  # off the support scale
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(FormatError, match=rf"{path}:\d+: grade 7 is not on the round.s scale"):
        import_batch(store, "assign", person, path)
    assert store.one("n", "SELECT count(*) FROM judgments")[0] == 0
    rows[1]["grade"] = 1
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert import_batch(store, "assign", person, path) == (9, 0)
    stored = store.sql("j", "SELECT doc_id, part, grade FROM judgments ORDER BY seq").fetchall()
    assert stored[:3] == [("A", "1", 2), ("A", "3", 1), ("A", "2", 0)]
