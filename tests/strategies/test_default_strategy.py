"""The default strategy: named in one place, marked by `pooling strategies`, used by `pooling
pool`, and mixfuse's votes (AP prior, RRF, or a mix) behave as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pooling.cli import app
from pooling.store import Store
from pooling.strategies import DEFAULT_STRATEGY, REGISTRY, StrategyError, TopicRuns, get_strategy
from pooling.strategies.replays import found_share, load_inputs, parse_strategy, prepare, replay

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "collections" / "demo"


def test_the_default_is_a_registered_adaptive_strategy_and_marked_with_its_reason():
    assert DEFAULT_STRATEGY in REGISTRY and REGISTRY[DEFAULT_STRATEGY].adaptive
    result = CliRunner().invoke(app, ["strategies"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert f"{DEFAULT_STRATEGY} (default)" in result.stdout
    assert "scripts/tune_default.py" in result.stdout


def test_pool_without_a_strategy_uses_the_default(tmp_path):
    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 3 a\n1 Q0 d2 2 2 a\n2 Q0 d3 1 1 a\n")
    store = tmp_path / "s.duckdb"
    with Store.create(store) as s:
        s.import_runs([run])
    result = CliRunner().invoke(app, ["pool", str(store), "--round", "r1", "--budget", "2"])
    assert result.exit_code == 0, result.output
    with Store(store, read_only=True) as s:
        assert s.one("strategy", "SELECT strategy, adaptive FROM rounds") == (DEFAULT_STRATEGY, True)


def topic() -> TopicRuns:
    # Two runs that agree on c and d deep down; a's top document is its own.
    return TopicRuns("1", {"a": ["x", "c", "d", "e"], "b": ["y", "z", "c", "d"]})


def test_ap_votes_are_top_heavy_and_rrf_votes_reward_consensus():
    ap = get_strategy("mmfuse", votes="ap", flatten=1).selector(topic(), 0)
    rrf = get_strategy("mmfuse", votes="rrf", k=60).selector(topic(), 0)
    assert ap.next() in ("x", "y")  # a run's first document outweighs agreement further down
    assert rrf.next() == "c"  # found by both runs: the flat RRF vote favours agreement


def test_mix_zero_and_one_are_the_two_pure_votes():
    def order(strategy) -> list[str]:
        sel, out = strategy.selector(topic(), 0), []
        while (doc := sel.next()) is not None:
            out.append(doc)
            sel.observe(doc, 1 if doc in ("c", "x") else 0)
        return out

    assert order(get_strategy("mixfuse", mix=0)) == order(get_strategy("mmfuse", votes="ap", flatten=1,
                                                                        prior_mean=0.2, strength=4, power=8))
    assert order(get_strategy("mixfuse", mix=1)) == order(get_strategy("mmfuse", votes="rrf", k=10,
                                                                       prior_mean=0.2, strength=4, power=8))


def test_bad_votes_are_refused_plainly():
    with pytest.raises(StrategyError, match="votes"):
        get_strategy("mixfuse", votes="borda").selector(topic(), 0)
    with pytest.raises(StrategyError, match="mix"):
        get_strategy("mixfuse", mix=1.5).selector(topic(), 0)


def test_the_default_finds_more_than_a_depth_pool_on_the_demo_at_every_budget():
    qrels, runs = load_inputs(str(DEMO / "truth.qrels"), [str(p) for p in sorted((DEMO / "runs").glob("*.run"))])
    data = prepare(qrels, runs, 100)
    default = replay(data, parse_strategy(DEFAULT_STRATEGY), 100)
    depth = replay(data, parse_strategy("depth"), 100)
    for budget in (10, 20, 50, 100):
        assert found_share(data, default, budget) > found_share(data, depth, budget) + 0.03


@pytest.mark.slow
def test_cranfield_runs_from_real_retrieval_models(shared_dir, tmp_path):
    out = tmp_path / "cran"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_cranfield_runs.py"), str(out),
                           "--cranfield", str(shared_dir / "data" / "cranfield")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (out / "DONE").exists()
    runs = sorted((out / "runs").glob("*.run"))
    assert len(runs) == 10
    maps = {line.split()[0]: float(line.split()[1]) for line in done.stdout.splitlines()[1:]}
    assert len(maps) == 10
    # BM25 on Cranfield with every graded judgment relevant lands near 0.28 MAP here; the weak
    # runs (first three query terms, raw overlap) must be clearly worse, for a varied pool.
    assert 0.25 <= max(maps.values()) <= 0.35
    assert max(maps.values()) - min(maps.values()) >= 0.1
    for path in runs:
        lines = path.read_text().splitlines()
        per_topic: dict[str, int] = {}
        for line in lines:
            per_topic[line.split()[0]] = per_topic.get(line.split()[0], 0) + 1
        assert len(per_topic) == 225 and max(per_topic.values()) <= 100
