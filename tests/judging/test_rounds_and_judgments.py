"""Rounds, assignments, append-only judgments, offline batches and derived qrels versions."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.errors import FormatError, StoreError
from pooling.judging.assessors import add_assessor, assign, authenticate
from pooling.judging.batches import export_batch, import_batch
from pooling.judging.judgments import Judgment, effective_judgments, history, record
from pooling.judging.rounds import create_round, pool_table
from pooling.judging.rules import adjudication_queue, derive_qrels
from pooling.store import Store

RUNS = {
    "a.run": "1 Q0 d1 1 9 A\n1 Q0 d2 2 8 A\n1 Q0 d3 3 7 A\n2 Q0 e1 1 9 A\n2 Q0 e2 2 8 A\n",
    "b.run": "1 Q0 d2 1 9 B\n1 Q0 d4 2 8 B\n1 Q0 d1 3 7 B\n2 Q0 e3 1 9 B\n2 Q0 e1 2 8 B\n",
}


@pytest.fixture
def store(tmp_path):
    s = Store.create(tmp_path / "c.duckdb")
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    s.import_runs([tmp_path / n for n in RUNS])
    yield s
    s.close()


def test_depth_round_queues_round_robin_by_rank(store):
    summary = create_round(store, "r1", "depth", strategy_params={"depth": 2})
    assert summary.per_topic == {"1": 3, "2": 3}
    pool = pool_table(store, "r1").to_pylist()
    assert [(p["query_id"], p["doc_id"], p["position"]) for p in pool] == [
        ("1", "d1", 1), ("1", "d2", 2), ("1", "d4", 3), ("2", "e1", 1), ("2", "e3", 2), ("2", "e2", 3),
    ]


def test_budget_floor_and_duplicate_round_names(store):
    create_round(store, "r1", "take", budget=2, floor=1)
    pool = pool_table(store, "r1").to_pylist()
    assert [p["doc_id"] for p in pool if p["query_id"] == "1"] == ["d1", "d2"]
    with pytest.raises(StoreError, match="already exists"):
        create_round(store, "r1", "depth")


@pytest.mark.parametrize("name", ["", "   ", " r2", "r2\t", "r\udfff"])
def test_a_round_needs_a_name_the_store_can_hold_without_stray_spaces(store, name):
    with pytest.raises(StoreError, match="round"):
        create_round(store, name, "depth")
    assert store.one("n", "SELECT count(*) FROM rounds") == (0,)


def test_cli_pool_refuses_an_empty_round_name_in_one_line(store, tmp_path):
    path = store.path
    store.close()
    done = subprocess.run([sys.executable, "-m", "pooling", "pool", str(path), "--round", "",
                           "--strategy", "depth"], capture_output=True, text=True)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "the round name (--round) is empty; give a name" in done.stderr


def test_tokens_are_shown_once_and_stored_hashed(store):
    new = add_assessor(store, "Ann Lee")
    assert new.assessor_id == "ann-lee" and len(new.token) >= 32
    stored = store.one("t", "SELECT token_sha256 FROM assessors")[0]
    assert new.token not in stored
    assert authenticate(store, new.token) == ("ann-lee", "assessor")
    assert authenticate(store, "wrong") is None


def _judged_round(store):
    create_round(store, "r1", "depth", strategy_params={"depth": 2})
    add_assessor(store, "ann")
    add_assessor(store, "bob")
    add_assessor(store, "org", role="organiser")
    assign(store, "r1", ["ann", "bob"], overlap=1.0)


def test_judgments_are_append_only_and_retries_are_stored_once(store):
    _judged_round(store)
    j = Judgment("r1", "ann", "1", "d1", 2, seconds=4.5, submission_id="s1")
    assert record(store, [j]) == (1, 0)
    assert record(store, [j]) == (0, 1)  # a retry
    record(store, [Judgment("r1", "ann", "1", "d1", 0, submission_id="s2")])  # a correction
    record(store, [Judgment("r1", "ann", "1", "d1", None, kind="retract", submission_id="s3")])
    kinds = [(r["kind"], r["grade"]) for r in history(store).to_pylist()]
    assert kinds == [("judge", 2), ("judge", 0), ("retract", None)]
    current = effective_judgments(store, "r1").to_pylist()
    assert [(r["assessor_id"], r["doc_id"], r["grade"]) for r in current] == [("ann", "d1", 2)]


def test_judging_outside_ones_assignment_or_scale_is_refused(store):
    _judged_round(store)
    with pytest.raises(StoreError, match="not on the round's scale"):
        record(store, [Judgment("r1", "ann", "1", "d1", 7)])
    with pytest.raises(StoreError, match="not assigned"):
        record(store, [Judgment("r1", "ann", "1", "zzz", 1)])
    with pytest.raises(StoreError, match="nothing to undo"):
        record(store, [Judgment("r1", "ann", "1", "d2", None, kind="retract")])
    assert history(store).num_rows == 0


def test_qrels_rules_and_adjudication(store):
    _judged_round(store)
    record(store, [
        Judgment("r1", "ann", "1", "d1", 2), Judgment("r1", "bob", "1", "d1", 0),
        Judgment("r1", "ann", "1", "d2", 1), Judgment("r1", "bob", "1", "d2", 1),
    ])
    queue = adjudication_queue(store, "r1").to_pylist()
    assert queue == [{"query_id": "1", "doc_id": "d1", "grades": "ann=2, bob=0", "adjudicated": False}]
    with pytest.raises(StoreError, match="not adjudicated"):
        derive_qrels(store, "adjudicated", "adj", round_id="r1")
    derive_qrels(store, "majority", "maj", round_id="r1")
    assert store.qrels_table("maj").to_pylist()[0]["relevance"] == 0  # tie -> lower grade
    from pooling.judging.rules import round_agreement

    report = round_agreement(store, "r1")
    assert report.n_shared == 2 and report.pairs[0].n == 2
    derive_qrels(store, "mean", "mean", round_id="r1")
    assert store.qrels_table("mean").to_pylist()[0]["relevance"] == 1
    derive_qrels(store, "primary", "prim", round_id="r1")  # topic 1's primary is ann
    assert store.qrels_table("prim").to_pylist()[0]["relevance"] == 2
    record(store, [Judgment("r1", "org", "1", "d1", 1)])
    derive_qrels(store, "adjudicated", "adj", round_id="r1")
    assert store.qrels_table("adj").to_pylist()[0]["relevance"] == 1
    info = store.qrels_info("adj")
    assert info["method"] == "derived:adjudicated" and list(info["grades"]) == [0, 1, 2]


def test_offline_batch_round_trip_is_all_or_nothing(store, tmp_path):
    _judged_round(store)
    batch = tmp_path / "ann.csv"
    assert export_batch(store, "r1", "ann", batch) == 6  # topic 1 (3) + overlap of topic 2 (3)
    rows = list(csv.DictReader(open(batch, encoding="utf-8")))
    rows[0]["grade"], rows[1]["grade"], rows[2]["grade"] = "2", "9", "x"
    with open(batch, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(FormatError) as info:
        import_batch(store, "r1", "ann", batch)
    assert f"{batch}:3: grade 9 is not on the round's scale" in str(info.value)
    assert f"{batch}:4: grade must be one of" in str(info.value)
    assert history(store).num_rows == 0
    rows[1]["grade"], rows[2]["grade"] = "1", ""
    with open(batch, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert import_batch(store, "r1", "ann", batch) == (2, 0)
    assert import_batch(store, "r1", "ann", batch) == (0, 2)


@pytest.mark.parametrize("depth, fully_judged", [(125, True), (126, False)])
def test_robust03_depth_125_pool_is_inside_the_official_qrels(shared_dir, tmp_path, depth, fully_judged):
    root = shared_dir / "data/trec2003-robust"
    store = Store.create(tmp_path / "r.duckdb")
    store.import_runs(sorted((root / "runs").glob("input.*.gz")))
    store.import_qrels(root / "qrels/robust03_qrels.txt.gz", name="official")
    topics = [str(q) for q in range(601, 651)]
    create_round(store, "d", "depth", strategy_params={"depth": depth}, runs="all", topics=topics)
    (pooled,) = store.one("n", "SELECT count(*) FROM pool_entries WHERE round_id = 'd'")
    (judged,) = store.one(
        "j", "SELECT count(*) FROM pool_entries p JOIN qrels q ON q.version = 'official' "
        "AND q.query_id = p.query_id AND q.doc_id = p.doc_id WHERE p.round_id = 'd'")
    if fully_judged:
        assert pooled == judged == 28_793
    else:
        assert pooled - judged == 76
    store.close()


def test_cli_round_workflow(tmp_path):
    store = tmp_path / "c.duckdb"
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    run = [sys.executable, "-m", "pooling"]

    def ok(*args: str) -> str:
        proc = subprocess.run([*run, *args], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    ok("init", str(store))
    ok("import", "runs", str(store), str(tmp_path / "a.run"), str(tmp_path / "b.run"))
    ok("pool", str(store), "--strategy", "depth", "--depth", "2", "--round", "r1")
    token_line = ok("assessors", "add", str(store), "ann").splitlines()[-1]
    assert token_line.startswith("token (shown once")
    ok("assign", str(store), "--round", "r1", "--assessors", "ann")
    pool = ok("export", "pool", str(store), "--round", "r1").splitlines()
    assert pool[0] == "query_id\tdoc_id\tposition" and len(pool) == 7
    ok("batch", "export", str(store), "--round", "r1", "--assessor", "ann", "-o", str(tmp_path / "b.csv"))
    rows = list(csv.DictReader(open(tmp_path / "b.csv", encoding="utf-8")))
    for r in rows:
        r["grade"] = "1"
    with open(tmp_path / "b.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    ok("batch", "import", str(store), "--round", "r1", "--assessor", "ann", str(tmp_path / "b.csv"))
    ok("qrels", "derive", str(store), "--rule", "latest", "--name", "v1", "--round", "r1")
    ok("export", "judgments", str(store), "-o", str(tmp_path / "h.parquet"))
    qrels = ok("export", "qrels", str(store), "--qrels", "v1", "--with-header").splitlines()
    assert qrels[0].startswith("# pooling qrels version v1; method: derived:latest")
    assert len(qrels) == 7 and Path(tmp_path / "h.parquet").stat().st_size > 0


def test_adaptive_round_serves_live_from_the_judgments_so_far(store):
    from pooling.judging.queue import next_document

    summary = create_round(store, "live", "mtf", depth=3)
    assert summary.round.adaptive and summary.entries == 0
    add_assessor(store, "ann")
    assign(store, "live", ["ann"])
    first = next_document(store, "live", "ann", "1")
    assert first is not None
    assert next_document(store, "live", "ann", "1") == first  # served, not judged yet: same doc
    record(store, [Judgment("live", "ann", "1", first, 0)])
    second = next_document(store, "live", "ann", "1")
    assert second not in (None, first)
    served = [p["doc_id"] for p in pool_table(store, "live").to_pylist() if p["query_id"] == "1"]
    assert served == [first, second]


def test_a_round_with_a_depth_or_budget_out_of_range_is_refused(tmp_path):
    from pooling.errors import StoreError
    from pooling.judging.rounds import create_round
    from pooling.store import Store

    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 9 A\n")
    with Store.create(tmp_path / "s.duckdb") as s:
        s.import_runs([run])
        for options in ({"depth": -5}, {"budget": 0}, {"depth": 10**21},
                        {"strategy_params": {"depth": "-1"}}):
            with pytest.raises(StoreError, match="must be a whole number"):
                create_round(s, "r", "depth", **options)
        assert s.one("n", "SELECT count(*) FROM rounds") == (0,)


def test_a_retried_undo_through_record_is_a_duplicate_not_an_error(tmp_path):
    from pooling.judging.assessors import add_assessor, assign
    from pooling.judging.judgments import Judgment, record
    from pooling.judging.rounds import create_round
    from pooling.store import Store

    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 9 A\n1 Q0 d2 2 8 A\n")
    with Store.create(tmp_path / "s.duckdb") as s:
        s.import_runs([run])
        create_round(s, "r1", "depth", strategy_params={"depth": 2})
        add_assessor(s, "ann")
        assign(s, "r1", ["ann"])
        record(s, [Judgment("r1", "ann", "1", "d1", 1, submission_id="judge-0000000001")])
        undo = Judgment("r1", "ann", "1", "d1", None, kind="retract", submission_id="undo-00000000001")
        assert record(s, [undo]) == (1, 0)
        assert record(s, [undo]) == (0, 1)
