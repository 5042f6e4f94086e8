"""Sampled judging in the store, end to end: a round pooled with strata records its design,
derive makes a sampled qrels version, it exports to and imports from sample_eval.pl's five
columns, `pooling evaluate` on it equals the real sample_eval.pl, and the leaderboard states
its estimates with intervals and the sample's size in every format."""

from __future__ import annotations

import html
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.errors import FormatError, StoreError
from pooling.judging.assessors import add_assessor
from pooling.judging.history import Judgment
from pooling.judging.judgments import append_judgments
from pooling.judging.rounds import create_round
from pooling.judging.rules import derive_qrels
from pooling.judging.sampled_rounds import round_design
from pooling.store import Store
from pooling.store.evaluate import evaluate_store
from pooling.store.sampled_qrels import is_sampled, sample_size, sampled_qrels_table


def pooling(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pooling", *args], capture_output=True,
                          text=True, check=False, env={**os.environ, "COLUMNS": "200"})


def _runs(tmp: Path, seed: int) -> list[Path]:
    """Six runs over 8 topics and 60 documents, with score ties and topics a run lacks."""
    rng = random.Random(seed)
    paths = []
    for r in range(6):
        lines = []
        for t in range(1, 9):
            if r == 5 and t == 8:
                continue
            docs = rng.sample([f"d{i:02d}" for i in range(60)], rng.randint(15, 40))
            for i, d in enumerate(docs):
                lines.append(f"{t} Q0 {d} {i + 1} {rng.choice([1, 2, 3, round(rng.random(), 2)])} r{r}")
        path = tmp / f"r{r}.run"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


@pytest.fixture
def sampled_store(tmp_path: Path):
    """A store with a sampled round (ranks 1-5 whole, the rest of depth 20 at 30%) whose queue
    is judged at random, all but a few queued pairs, and a sampled version derived from it."""
    store = Store.create(tmp_path / "s.duckdb")
    store.import_runs(_runs(tmp_path, 7))
    summary = create_round(store, "s1", "sample", depth=20,
                           strategy_params={"strata": "5", "rates": "1,0.3"})
    ada = add_assessor(store, "Ada")
    rng = random.Random(3)
    pool = store.arrow("q", "SELECT query_id, doc_id FROM pool_entries ORDER BY 1, 2").to_pylist()
    rows = [(r["query_id"], r["doc_id"], rng.choice([0, 0, 1, 2])) for r in pool[:-3]]
    append_judgments(store, [Judgment("s1", ada.assessor_id, q, d, g) for q, d, g in rows])
    derive_qrels(store, "latest", "s1", round_id="s1")
    yield store, summary, tmp_path
    store.close()


def test_a_sampled_round_records_every_pooled_pair_with_its_stratum_and_probability(sampled_store):
    store, summary, _ = sampled_store
    design = round_design(store, "s1")
    queued = store.arrow("q", "SELECT query_id, doc_id FROM pool_entries WHERE round_id = 's1'")
    assert design.num_rows > queued.num_rows == summary.entries  # unsampled pairs are kept too
    rows = design.to_pylist()
    assert {r["stratum"] for r in rows} == {"1", "2"}
    assert all(r["inclusion_probability"] == 1.0 for r in rows if r["stratum"] == "1")
    in_queue = set(zip(queued["query_id"].to_pylist(), queued["doc_id"].to_pylist(), strict=True))
    for q in {r["query_id"] for r in rows}:  # the probability is the share of its stratum queued
        lower = [r for r in rows if r["query_id"] == q and r["stratum"] == "2"]
        share = sum((r["query_id"], r["doc_id"]) in in_queue for r in lower) / len(lower)
        assert {r["inclusion_probability"] for r in lower} == {share}
        assert abs(share - 0.3) <= 1 / len(lower)


def test_derive_on_a_sampled_round_keeps_unjudged_pooled_pairs_as_minus_one(sampled_store):
    store, _, _ = sampled_store
    assert is_sampled(store, "s1")
    table = sampled_qrels_table(store, "s1")
    assert table.num_rows == round_design(store, "s1").num_rows
    judged = store.arrow("j", "SELECT count(*) AS n FROM judgments")["n"][0].as_py()
    size = sample_size(store, "s1")
    assert size.judged == judged and size.pooled == table.num_rows
    assert table["relevance"].to_pylist().count(-1) == size.pooled - size.judged
    # The version is plain qrels too: its judged rows, for every command that reads qrels.
    assert store.qrels_table("s1").num_rows == judged


def test_deriving_says_a_version_is_sampled_and_how_big_and_says_nothing_of_plain_qrels(
        sampled_store):
    from pooling.store.sampled_qrels import derived_sample_note

    store, _, tmp = sampled_store
    note = derived_sample_note(store, "s1")
    assert note.startswith("; SAMPLED: ") and sample_size(store, "s1").describe() in note
    assert "estimates" in note
    plain = tmp / "plain.qrels"
    plain.write_text("1 0 d01 1\n")
    store.import_qrels(plain, name="plain")
    assert derived_sample_note(store, "plain") == ""


def test_sampled_qrels_export_and_import_round_trip(sampled_store):
    store, _, tmp = sampled_store
    out = tmp / "s1.sampled"
    store.export_sampled_qrels(out, "s1")
    assert out.with_name("s1.sampled.meta.json").is_file()
    again = store.import_qrels(out, name="again")
    assert again.format == "sampled"
    assert sampled_qrels_table(store, "again").equals(sampled_qrels_table(store, "s1"))


def test_a_bad_line_refuses_the_whole_import_naming_file_and_line(sampled_store):
    store, _, tmp = sampled_store
    bad = tmp / "bad.sampled"
    bad.write_text("1 0 d1 1 1\n1 0 d2 1 -1\n1 0 d3 1 -7\n")
    before = store.table_digest("qrels_strata"), store.table_digest("qrels_versions")
    with pytest.raises(FormatError, match="bad.sampled:3: relevance -7 is below -1"):
        store.import_qrels(bad, name="bad")
    assert (store.table_digest("qrels_strata"), store.table_digest("qrels_versions")) == before


def test_stratified_rounds_refuse_options_that_break_the_design(sampled_store):
    store, _, _ = sampled_store
    with pytest.raises(StoreError, match="--floor changes which documents are judged"):
        create_round(store, "s2", "sample", floor=3)


@pytest.fixture(scope="module")
def sample_eval(shared_dir: Path) -> list[str]:
    script = shared_dir / "oracles" / "sample_eval" / "sample_eval.pl"
    perl = shutil.which("perl")
    if perl is None or not script.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"perl or {script} is missing")
        pytest.skip(f"perl or {script} is missing")
    return [perl, str(script)]


def test_evaluate_on_a_sampled_version_equals_sample_eval_pl_on_its_export(sampled_store,
                                                                            sample_eval):
    store, _, tmp = sampled_store
    exported = tmp / "s1.txt"
    store.export_sampled_qrels(exported, "s1")
    result = evaluate_store(store, qrels="s1", measures=["sample_eval"])
    ours = {(r["run_id"], r["measure"]): r["value"] for r in result.means.to_pylist()}
    for run_id in store.run_ids():
        run_file = tmp / f"{run_id}.run"
        store.export_run(run_id, run_file)
        text = subprocess.run([*sample_eval, str(exported), str(run_file)], capture_output=True,
                              text=True, check=True).stdout
        for line in text.splitlines():
            measure, _, value = line.split()
            if measure == "num_ret":
                assert int(ours[(run_id, measure)]) == int(value), (run_id, measure)
            else:
                assert f"{ours[(run_id, measure)]:.4f}" == value, (run_id, measure)


def test_the_cli_plans_pools_evaluates_and_ranks_a_sampled_round(tmp_path: Path):
    store = tmp_path / "c.duckdb"
    assert pooling("init", str(store)).returncode == 0
    assert pooling("import", "runs", str(store), *map(str, _runs(tmp_path, 2))).returncode == 0
    plan = pooling("plan-sample", str(store), "--budget", "12", "--depth", "20")
    assert plan.returncode == 0, plan.stderr
    line = plan.stdout.strip().splitlines()[-1]
    assert line.startswith("pool it with: pooling pool")
    params = line.split("--strategy sample", 1)[1].replace("--runs pooled", "").split()
    done = pooling("pool", str(store), "--round", "s", "--strategy", "sample", *params)
    assert done.returncode == 0, done.stderr
    with Store(store) as s:
        pool = s.arrow("q", "SELECT query_id, doc_id FROM pool_entries").to_pylist()
        assert len(pool) <= 12 * 8 + 8  # the budget, and at most one extra per topic's stratum
        ada = add_assessor(s, "Ada")
        append_judgments(s, [Judgment("s", ada.assessor_id, r["query_id"], r["doc_id"],
                                      int(r["doc_id"][-1]) % 3) for r in pool])
    derived = pooling("qrels", "derive", str(store), "--round", "s", "--rule", "latest",
                      "--name", "s")
    assert derived.returncode == 0, derived.stderr
    said = " ".join(derived.stdout.split())
    assert "SAMPLED:" in said and "judged of" in said and "values are estimates" in said
    ev = pooling("evaluate", str(store), "--qrels", "s", "-m", "xinfAP", "--format", "csv")
    assert ev.returncode == 0 and "infAP" in ev.stdout, ev.stderr
    for fmt in ("table", "md", "csv", "latex", "html"):
        board = pooling("leaderboard", str(store), "--qrels", "s", "--format", fmt)
        assert board.returncode == 0, board.stderr
        text = " ".join(board.stdout.split())
        assert "Estimates from a sample" in text and "judged of" in text, fmt
        assert "pooled pairs" in text and "per stratum" in text, fmt
        # what the interval leaves out, in every format
        said = html.unescape(text)
        assert "not the estimator's own bias" in said and "complete judgments" in said, fmt
