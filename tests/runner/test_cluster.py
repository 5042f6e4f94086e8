"""Evaluation, replays and automatic judging on a real two-node Ray cluster give what the
local engine gives; a node killed mid-job (SIGKILL) loses nothing and stores nothing twice."""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pooling.evaluation import evaluate, format_trec_runs
from pooling.judges.model_judges import add_judge, judge_pairs, round_pairs
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import Judgment, record
from pooling.judging.rounds import create_round
from pooling.store import Store
from pooling.store.evaluate import evaluate_store
from pooling.strategies import replays as sim

pytestmark = pytest.mark.cluster

WORD_JUDGE = Path(__file__).parent.parent / "judging" / "word_judge.py"
WORDS = ["wind", "solar", "river", "glacier", "forest", "desert", "ocean", "storm"]


def write_collection(root: Path, runs: int = 6, topics: int = 30, docs: int = 60,
                     seed: int = 7) -> tuple[Path, list[Path]]:
    """Qrels (grades 0-2) and TREC run files: tied scores, and topics some runs lack."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    qrels = []
    for t in range(topics):
        for d in rng.sample(range(docs * 2), docs // 2):
            qrels.append(f"{100 + t} 0 D{d:04d} {rng.choice([0, 0, 1, 2])}\n")
    (root / "qrels").write_text("".join(qrels))
    paths = []
    for r in range(runs):
        lines = []
        for t in range(topics):
            if (t + r) % 11 == 0:
                continue  # a topic this run lacks
            for rank, d in enumerate(rng.sample(range(docs * 2), docs), start=1):
                score = round(rng.random(), 1)  # ties, settled by doc_id as trec_eval does
                lines.append(f"{100 + t} Q0 D{d:04d} {rank} {score} run{r}\n")
        path = root / f"run{r}.txt"
        path.write_text("".join(lines))
        paths.append(path)
    return root / "qrels", paths


def test_evaluating_files_on_the_cluster_gives_the_local_values_and_trec_text(two_nodes, tmp_path):
    qrels, runs = write_collection(tmp_path)
    for options in ({"missing_topics": "zero"}, {"missing_topics": "skip", "max_docs": 20,
                                                 "relevance_level": 2}):
        local = evaluate(qrels, runs, ["all_trec", "ndcg_cut.5,10"], **options)
        remote = evaluate(qrels, runs, ["all_trec", "ndcg_cut.5,10"], engine="ray", **options)
        assert [r.run_id for r in remote.runs] == [f"run{i}" for i in range(6)]
        assert format_trec_runs(remote.runs, True) == format_trec_runs(local.runs, True)
        assert remote.per_query.equals(local.per_query) and remote.means.equals(local.means)
        assert [r.missing_query_ids for r in remote.runs] == [r.missing_query_ids for r in local.runs]


def test_a_run_error_on_a_worker_is_the_error_the_local_engine_raises(two_nodes, tmp_path):
    from pooling.evaluation.topics import MissingTopicsError

    qrels, runs = write_collection(tmp_path, runs=2)
    with pytest.raises(MissingTopicsError) as local:
        evaluate(qrels, runs, ["map"])
    with pytest.raises(MissingTopicsError) as remote:
        evaluate(qrels, runs, ["map"], engine="ray")
    assert str(remote.value) == str(local.value)


def test_pooling_eval_with_engine_ray_prints_the_bytes_of_the_local_engine(two_nodes, tmp_path):
    qrels, runs = write_collection(tmp_path, runs=3)
    command = [sys.executable, "-m", "pooling", "eval", "-q", "-c", "-m", "all_trec", str(qrels),
               *map(str, runs)]
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    local = subprocess.run(command, capture_output=True, timeout=120, env=env)
    remote = subprocess.run(command + ["--engine", "ray", "--ray-address", two_nodes.address],
                            capture_output=True, timeout=120, env=env)
    assert local.returncode == 0 and remote.returncode == 0, remote.stderr.decode()
    assert remote.stdout == local.stdout and b"runid" in remote.stdout


def make_store(path: Path, qrels: Path, runs: list[Path]) -> Path:
    with Store.create(path) as s:
        s.import_runs(runs)
        s.import_qrels(qrels, name="q1")
    return path


def test_evaluating_a_store_on_the_cluster_caches_the_local_values(two_nodes, tmp_path):
    qrels, runs = write_collection(tmp_path / "data")
    a = make_store(tmp_path / "a.duckdb", qrels, runs)
    b = tmp_path / "b.duckdb"
    shutil.copy(a, b)
    parts = tmp_path / "parts"
    with Store(a) as s:
        local = evaluate_store(s, measures=["all_trec"])
    with Store(b) as s:
        remote = evaluate_store(s, measures=["all_trec"], engine="ray", partitions=str(parts))
        assert sorted(remote.computed) == sorted(local.computed) == sorted(s.run_ids())
        again = evaluate_store(s, measures=["all_trec"], engine="ray")
        assert again.computed == []  # cached: no task at all
    assert remote.per_query.equals(local.per_query) and remote.means.equals(local.means)
    # The workers read hive partitions by run_id, exported from the store.
    assert sorted(p.name for p in parts.iterdir()) == sorted(f"run_id=run{i}" for i in range(6))


def test_a_replay_grid_on_the_cluster_is_the_local_table(two_nodes, tmp_path):
    tables = {}
    for name, seed in (("a", 1), ("b", 2)):
        qrels, runs = write_collection(tmp_path / name, runs=5, topics=12, docs=40, seed=seed)
        inputs = sim.read_inputs(str(qrels), [str(r) for r in runs])
        tables[name] = sim.prepare(inputs.qrels, inputs.runs, depth=20)
    specs = [sim.parse_strategy(s) for s in ("depth", "maxmean", "take:fusion=rbp,p=0.8",
                                             "random")]
    budgets = [5, 15, 30]
    local = sim.replay_grid(tables, specs, budgets, seeds=[0, 3], floor=1)
    remote = sim.replay_grid(tables, specs, budgets, seeds=[0, 3], floor=1, engine="ray")
    assert remote.num_rows == 2 * 2 * 4 * 3
    assert remote.equals(local)
    one = sim.simulate(tables["a"], specs, budgets, seed=3, engine="ray")
    assert one.equals(sim.simulate(tables["a"], specs, budgets, seed=3))


TOPICS = [{"query_id": "1", "title": "wind turbines"}, {"query_id": "2", "title": "solar panels"}]


def judged_store(path: Path, per_topic: int) -> Path:
    """Two topics, one run, a round pooling all its documents (every third about the topic),
    and people's judgments of a few of them (training for the learned judge)."""
    root = path.parent / (path.stem + "-files")
    root.mkdir()
    run, docs = [], []
    for topic in TOPICS:
        q = topic["query_id"]
        for i in range(per_topic):
            d = f"q{q}d{i:03d}"
            run.append(f"{q} Q0 {d} {i + 1} {1000 - i} A\n")
            about = topic["title"] if i % 3 == 0 else f"{WORDS[i % 8]} and {WORDS[(i * 5) % 8]}"
            docs.append({"doc_id": d, "title": f"doc {d}", "text": f"a page on {about}"})
    (root / "a.run").write_text("".join(run))
    (root / "topics.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOPICS))
    (root / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    with Store.create(path) as s:
        s.import_runs([root / "a.run"])
        s.import_topics(root / "topics.jsonl")
        s.import_documents(root / "docs.jsonl")
        create_round(s, "r1", "depth", strategy_params={"depth": per_topic}, grades=[0, 1])
        add_assessor(s, "ann")
        assign(s, "r1", ["ann"])
        record(s, [Judgment("r1", "ann", q["query_id"], f"q{q['query_id']}d{i:03d}", int(i % 3 == 0))
                   for q in TOPICS for i in range(6)])
    return path


def command(*args: str) -> str:
    return " ".join(shlex.quote(a) for a in (sys.executable, str(WORD_JUDGE), *args))


def stored(path: Path, judge: str) -> list[tuple]:
    with Store(path, read_only=True) as s:
        return s.con.execute(
            "SELECT query_id, doc_id, grade, probability, rationale FROM judgments "
            "WHERE assessor_id = ? ORDER BY query_id, doc_id", [judge]).fetchall()


def calls(path: Path, judge: str) -> list[tuple]:
    with Store(path, read_only=True) as s:
        return s.con.execute("SELECT query_id, doc_id, count(*) FROM judge_calls WHERE judge_id = ? "
                             "GROUP BY ALL ORDER BY ALL", [judge]).fetchall()


@pytest.mark.parametrize("backend", ["command", "learned"])
def test_judging_on_the_cluster_stores_what_the_local_engine_stores(two_nodes, tmp_path, backend):
    params = {"command": command()} if backend == "command" else {}
    paths = {}
    for engine in ("local", "ray"):
        path = paths[engine] = judged_store(tmp_path / f"{engine}.duckdb", per_topic=20)
        with Store(path) as s:
            add_judge(s, "j", backend, params)
            report = judge_pairs(s, "j", round_pairs(s, "r1"), round_id="r1", batch=3, engine=engine)
            assert (report.judged, report.failed, report.pairs) == (40, 0, 40)
            again = judge_pairs(s, "j", round_pairs(s, "r1"), round_id="r1", engine=engine)
            assert (again.judged, again.already) == (0, 40)  # resumes: nothing asked twice
    assert stored(paths["ray"], "j") == stored(paths["local"], "j")
    assert calls(paths["ray"], "j") == calls(paths["local"], "j")
    assert len(stored(paths["ray"], "j")) == 40


def test_pooling_judge_with_engine_ray_reports_like_the_local_engine(two_nodes, tmp_path):
    path = judged_store(tmp_path / "c.duckdb", per_topic=8)
    with Store(path) as s:
        add_judge(s, "words", "command", {"command": command()})
    done = subprocess.run([sys.executable, "-m", "pooling", "judge", str(path), "--judge", "words",
                           "--round", "r1", "--engine", "ray", "--ray-address", two_nodes.address],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "16 judged now" in done.stdout and "0 failed" in done.stdout
    assert len(stored(path, "words")) == 16


# -- a node killed mid-job ------------------------------------------------------------------


def test_a_node_killed_mid_evaluation_loses_no_run_and_stores_none_twice(two_nodes, tmp_path,
                                                                        monkeypatch):
    import pooling.store.evaluate as store_evaluate

    qrels, runs = write_collection(tmp_path / "data", runs=16, topics=60, docs=300)
    path = make_store(tmp_path / "c.duckdb", qrels, runs)
    local = evaluate(qrels, runs, ["official"], missing_topics="zero")
    victim = two_nodes.workers[-1]
    save, saved = store_evaluate._save, []

    def save_then_kill(store, runs, version, key):
        save(store, runs, version, key)
        saved.extend(run.run_id for run in runs)
        if len(saved) == 1:
            two_nodes.kill(victim)  # SIGKILL the second node while blocks are still out

    monkeypatch.setattr(store_evaluate, "_save", save_then_kill)
    with Store(path) as s:
        result = store_evaluate.evaluate_store(s, measures=["official"], engine="ray")
        rows = s.one("rows", "SELECT count(*), count(DISTINCT (run_id, measure, query_id)) "
                     "FROM eval_results")
    assert victim.poll() is not None and len(saved) == 16 and len(set(saved)) == 16
    assert rows[0] == rows[1]  # no value stored twice
    means = {(r["run_id"], r["measure"]): r["value"] for r in result.means.to_pylist()}
    assert means == {(r["run_id"], r["measure"]): r["value"] for r in local.means.to_pylist()}


def test_a_node_killed_mid_judging_loses_no_pair_and_judges_none_twice(two_nodes, tmp_path):
    log = tmp_path / "asked.log"
    path = judged_store(tmp_path / "c.duckdb", per_topic=20)
    with Store(path) as s:
        add_judge(s, "words", "command", {"command": command("--delay", "0.2", "--log", str(log))})
    victim = two_nodes.workers[-1]

    def kill_mid_batch():
        """SIGKILL the second node once its actor's program has been sent a batch (4 pairs,
        0.2 s each): the actor dies holding pairs it was asked but never answered in full."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
                "word_judge.py" in _cmdline(pid) for pid in two_nodes.processes(victim)):
            time.sleep(0.01)
        time.sleep(0.1)
        two_nodes.kill(victim)

    killer = threading.Thread(target=kill_mid_batch)
    killer.start()
    with Store(path) as s:
        report = judge_pairs(s, "words", round_pairs(s, "r1"), round_id="r1", batch=4,
                             engine="ray")
    killer.join()
    assert victim.poll() is not None
    assert (report.judged, report.failed) == (40, 0)
    assert calls(path, "words") == [(q, d, 1) for q, d, *_ in stored(path, "words")]  # once each
    rows = stored(path, "words")
    assert len(rows) == 40
    for q, d, g, *_ in rows:  # every grade is the program's: a word shared with the title
        assert g == int(int(d[-3:]) % 3 == 0 or _shares(q, int(d[-3:])))
    asked = log.read_text().splitlines()
    assert set(asked) == {f"{q} {d}" for q, d, *_ in rows}
    assert len(asked) > 40  # the dead actor's pairs were asked again, and stored once


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _shares(query_id: str, i: int) -> bool:
    title = {t["query_id"]: set(t["title"].split()) for t in TOPICS}[query_id]
    return bool(title & {WORDS[i % 8], WORDS[(i * 5) % 8]})
