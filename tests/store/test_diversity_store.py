"""Diversity measures on stored versions: `pooling evaluate` scores stored runs on a version's
subtopic rows, equal to `pooling eval` on the exported ndeval file and the exported runs
(and so to pyndeval), cached per version and options; a version without subtopic rows is
refused naming those that have them; the leaderboards read the same values."""

from __future__ import annotations

import csv
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.errors import StoreError
from pooling.leaderboard import leaderboard
from pooling.leaderboard.compare import BoardSpec, board_scores
from pooling.leaderboard.per_topic import topic_report
from pooling.leaderboard.pool_bias import pool_bias
from pooling.store import Store
from pooling.store.evaluate import evaluate_store

pyndeval = pytest.importorskip("pyndeval") if not os.environ.get("CI") else __import__("pyndeval")

DIVERSITY = ["alpha-nDCG@20", "ERR-IA@20", "nERR-IA@10", "P-IA@5", "strec@10", "NRBP",
             "nNRBP", "MAP-IA"]
DOCS = ["a", "B", "b", "d1", "d10", "d2", "d9", "D9", "x_1", "x-1", "00"] + [f"doc{i}" for i in range(25)]


def pooling(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pooling", *args], capture_output=True,
                          text=True, check=False, env={**os.environ, "COLUMNS": "200"})


def _write_case(tmp: Path, seed: int) -> tuple[Path, list[Path]]:
    """Random subtopic qrels and five runs: score ties, unjudged documents, documents relevant
    to no subtopic, a topic with one subtopic, a topic no run retrieves, and runs that lack
    topics."""
    rng = random.Random(seed)
    topics = [str(t) for t in range(1, 8)]
    lines = []
    for k, t in enumerate(topics):
        subtopics = 1 if k == 0 else rng.randint(2, 6)
        for d in rng.sample(DOCS, rng.randint(3, 20)):
            for s in range(1, subtopics + 1):
                if rng.random() < 0.6:
                    lines.append(f"{t} {s} {d} {rng.choice([0, 0, 1, 1, 2])}")
    qrels = tmp / "div.qrels"
    qrels.write_text("\n".join(lines) + "\n")
    runs = []
    for r in range(5):
        grid = rng.choice([1, 3, 1000])
        rows = []
        for t in topics[1:] if r == 4 else topics[:-1]:
            for i, d in enumerate(rng.sample(DOCS, rng.randint(2, 30))):
                rows.append(f"{t} Q0 {d} {i + 1} {rng.randint(0, grid)} run{r}")
        path = tmp / f"run{r}.txt"
        path.write_text("\n".join(rows) + "\n")
        runs.append(path)
    return qrels, runs


@pytest.fixture
def div_store(tmp_path: Path):
    qrels, runs = _write_case(tmp_path, 11)
    store = Store.create(tmp_path / "d.duckdb")
    store.import_runs(runs)
    store.import_qrels(qrels, name="div", format="subtopic")
    plain = tmp_path / "plain.qrels"
    plain.write_text("1 0 a 1\n2 0 b 1\n")
    store.import_qrels(plain, name="plain")
    yield store, tmp_path
    store.close()  # a test may have closed it for the command line already


def _tidy_means(text: str) -> dict[tuple[str, str, str], float]:
    return {(r["run_id"], r["query_id"], r["measure"]): float(r["value"])
            for r in csv.DictReader(io.StringIO(text))}


def _eval_file(text: str) -> dict[tuple[str, str, str], str]:
    """`pooling eval -q` output of several runs: (run, topic, measure) -> the printed value."""
    out, run = {}, None
    for line in text.splitlines():
        measure, topic, value = line.split()
        if measure == "runid" and topic == "all":
            run = value
            continue
        out[(run, topic, measure)] = value
    return out


@pytest.mark.parametrize("seed", [11, 12, 13])
@pytest.mark.parametrize("policy", [[], ["--shared-topics"]])
def test_stored_diversity_values_equal_pooling_eval_on_the_exported_files(tmp_path, seed, policy):
    qrels, runs = _write_case(tmp_path, seed)
    db = tmp_path / "d.duckdb"
    with Store.create(db) as s:
        s.import_runs(runs)
        s.import_qrels(qrels, name="div", format="subtopic")
    ms = [a for m in DIVERSITY for a in ("-m", m)]
    stored = pooling("evaluate", str(db), "--qrels", "div", *ms, "-m", "P@10", *policy,
                     "--format", "csv")
    assert stored.returncode == 0, stored.stderr
    ours = _tidy_means(stored.stdout)
    exported = tmp_path / "exported.qrels"
    assert pooling("qrels", "export-subtopics", str(db), "--qrels", "div",
                   "-o", str(exported)).returncode == 0
    files = []
    for r in range(5):
        out = tmp_path / f"exported{r}.txt"
        assert pooling("export", "run", str(db), f"run{r}", "-o", str(out)).returncode == 0
        files.append(str(out))
    flag = ["-c"] if not policy else ["--shared-topics"]
    ref = pooling("eval", *flag, "-q", *ms, "-m", "P@10", str(exported), *files)
    assert ref.returncode == 0, ref.stderr
    theirs = _eval_file(ref.stdout)
    theirs = {k: v for k, v in theirs.items() if k[2] not in ("num_q",)}
    assert theirs
    for key, printed in theirs.items():  # the same value, printed as `pooling eval` prints it
        decimals = len(printed.partition(".")[2])
        assert f"{ours[key]:.{decimals}f}" == printed, key
    measures = {k[2] for k in ours}
    assert {"alpha-nDCG@20", "ERR-IA@20", "P_10", "NRBP", "MAP-IA"} <= measures


def test_ndeval_asks_for_every_diversity_measure_and_plain_ones_keep_their_cache(div_store):
    store, _ = div_store
    both = evaluate_store(store, qrels="div", measures=["ndeval", "map"])
    assert both.measures[0] == "map" and "alpha-nDCG@20" in both.measures
    assert both.options["missing_topics"] == "zero"
    alone = evaluate_store(store, qrels="div", measures=["map"])
    assert alone.computed == []  # the plain values were cached under the plain settings
    again = evaluate_store(store, qrels="div", measures=["alpha-nDCG@20", "ERR-IA@20"])
    assert again.computed == []
    mean = {(r["run_id"], r["measure"]): r["value"] for r in both.means.to_pylist()}
    for r in again.means.to_pylist():
        assert mean[(r["run_id"], r["measure"])] == r["value"]


def test_the_cache_tells_versions_and_options_apart(div_store):
    store, tmp = div_store
    other = tmp / "other.qrels"
    other.write_text("2 1 a 1\n2 2 b 1\n3 1 doc1 2\n")
    store.import_qrels(other, name="div2", format="subtopic")
    one = evaluate_store(store, qrels="div", measures=["alpha-nDCG@20"])
    two = evaluate_store(store, qrels="div2", measures=["alpha-nDCG@20"])
    assert two.computed  # not the first version's values
    assert one.means.to_pylist() != two.means.to_pylist()
    skip = evaluate_store(store, qrels="div", measures=["alpha-nDCG@20"], missing_topics="skip")
    assert skip.computed
    level = evaluate_store(store, qrels="div", measures=["alpha-nDCG@20"], relevance_level=2)
    assert level.computed and level.means.to_pylist() != one.means.to_pylist()
    rows = store.con.execute("SELECT DISTINCT qrels_version, options FROM eval_results "
                             "WHERE measure = 'alpha-nDCG@20'").fetchall()
    assert len(rows) == 4 and all(json.loads(o)["subtopics"] == "ndeval" for _, o in rows)


def test_a_diversity_measure_on_a_version_without_subtopics_names_those_with_them(div_store):
    store, _ = div_store
    with pytest.raises(StoreError, match=r"'plain' has no subtopics; versions with subtopics: div"):
        evaluate_store(store, qrels="plain", measures=["alpha-nDCG@20"])
    store.close()  # the command line opens it next
    done = pooling("evaluate", str(store.path), "--qrels", "plain", "-m", "ERR-IA@20")
    assert done.returncode != 0 and "versions with subtopics: div" in done.stderr


def test_the_leaderboard_ranks_runs_by_a_diversity_measure(div_store):
    store, _ = div_store
    values = evaluate_store(store, qrels="div", measures=["alpha-nDCG@20"])
    means = {r["run_id"]: r["value"] for r in values.means.to_pylist()}
    board = leaderboard(store, qrels="div", measures=["alpha-nDCG@20", "ERR-IA@20"],
                        primary="alpha-nDCG@20", resamples=200)
    assert board.means("alpha-nDCG@20") == pytest.approx(means)
    assert [r["run_id"] for r in board.table.to_pylist()] == sorted(
        means, key=lambda r: (-means[r], r))
    store.close()
    shown = pooling("leaderboard", str(store.path), "--qrels", "div", "-m", "alpha-nDCG@20",
                    "--format", "csv", "--resamples", "100")
    assert shown.returncode == 0, shown.stderr
    assert "alpha-nDCG@20" in shown.stdout.splitlines()[0]


def test_compare_and_topic_report_read_diversity_values(div_store):
    store, _ = div_store
    values = evaluate_store(store, qrels="div", measures=["ERR-IA@20"])
    means = {r["run_id"]: r["value"] for r in values.means.to_pylist()}
    assert board_scores(store, BoardSpec(qrels="div", measure="ERR-IA@20")) == means
    report = topic_report(store, qrels="div", measures=["ERR-IA@20"])
    assert report.num_rows > 0
    store.close()
    done = pooling("compare", str(store.path), "--qrels", "div", "-m", "alpha-nDCG@20",
                   "-m", "ERR-IA@20", "--format", "csv")
    assert done.returncode == 0, done.stderr


def test_pool_bias_on_a_diversity_measure_drops_each_runs_unique_documents(div_store):
    store, _ = div_store
    bias = pool_bias(store, qrels="div", measure="alpha-nDCG@20", depth=5)
    rows = {r["run_id"]: r for r in bias.table.to_pylist()}
    values = evaluate_store(store, qrels="div", measures=["alpha-nDCG@20"])
    means = {r["run_id"]: r["value"] for r in values.means.to_pylist()}
    assert bias.measure == "alpha-nDCG@20" and set(rows) == set(store.run_ids())
    for r in rows.values():  # a run loses what only it found: never scores higher without it
        assert r["score_without"] <= r["score"] + 1e-12
        if r["unique_relevant"] == 0:
            assert r["score_without"] == pytest.approx(r["score"])
    assert any(r["change"] < 0 for r in rows.values())
    # without a depth the qrels are used as they are: the scores are the leaderboard's
    whole = pool_bias(store, qrels="div", measure="alpha-nDCG@20")
    assert {r["run_id"]: r["score"] for r in whole.table.to_pylist()} == pytest.approx(means)


def test_pool_bias_on_a_diversity_measure_of_a_plain_version_is_refused(div_store):
    store, _ = div_store
    with pytest.raises(StoreError, match="versions with subtopics: div"):
        pool_bias(store, qrels="plain", measure="alpha-nDCG@20")


def test_compare_cuts_the_subtopic_rows_to_a_depth_k_pool(div_store):
    import pyarrow as pa
    import pyarrow.compute as pc

    from pooling.evaluation import evaluate
    from pooling.evaluation.trec_input import TrecRun
    from pooling.leaderboard.compare import restricted_qrels
    from pooling.store.qrels import subtopic_qrels_table

    store, _ = div_store
    cut = board_scores(store, BoardSpec(qrels="div", measure="alpha-nDCG@20", depth=3))
    whole = board_scores(store, BoardSpec(qrels="div", measure="alpha-nDCG@20"))
    assert cut != whole
    plain = restricted_qrels(store, "div", depth=3)  # the pairs of the depth-3 pool
    pairs = pc.binary_join_element_wise(plain["query_id"], plain["doc_id"], "\x1f")
    rows = subtopic_qrels_table(store, "div")
    keep = pc.is_in(pc.binary_join_element_wise(rows["query_id"], rows["doc_id"], "\x1f"), pairs)
    runs = [TrecRun(store.run_table(r).append_column(
        "tag", pa.array([r] * store.run_table(r).num_rows, pa.string())), r, r)
        for r in store.run_ids()]
    expected = evaluate(rows.filter(keep), runs, ["alpha-nDCG@20"], missing_topics="zero")
    assert cut == {run.run_id: pytest.approx(run.summary["alpha-nDCG@20"]) for run in expected.runs}


@pytest.mark.parametrize("seed", [21, 22])
def test_stored_diversity_values_equal_pyndeval_on_the_stored_rows(tmp_path, seed):
    from pooling.store.qrels import subtopic_qrels_table

    qrels, runs = _write_case(tmp_path, seed)
    with Store.create(tmp_path / "d.duckdb") as store:
        store.import_runs(runs)
        store.import_qrels(qrels, name="div", format="subtopic")
        ours = evaluate_store(store, qrels="div", measures=["ndeval"], missing_topics="skip")
        got = {(r["run_id"], r["query_id"], r["measure"]): r["value"]
               for r in ours.per_query.to_pylist()}
        rows = [tuple(r.values()) for r in subtopic_qrels_table(store, "div").to_pylist()]
        for run_id in store.run_ids():
            run = [(r["query_id"], r["doc_id"], r["score"])
                   for r in store.run_table(run_id).to_pylist()]
            expected = pyndeval.ndeval(rows, run)
            assert {q for (r, q, _) in got if r == run_id} == set(expected)
            for q, values in expected.items():
                for measure, value in values.items():  # ndeval prints %.6f
                    assert got[run_id, q, measure] == pytest.approx(value, abs=5e-7), (q, measure)
