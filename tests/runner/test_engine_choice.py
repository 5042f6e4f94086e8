"""Choosing the engine: an unknown one is refused by name, and `ray` without the extra says
which extra to install (Ray is imported only when asked for)."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest

from pooling.evaluation import evaluate
from pooling.runner import EngineError
from pooling.strategies import replays as sim

QRELS = pa.table({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
RUN = pa.table({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})


def test_an_unknown_engine_is_refused_with_the_known_ones():
    with pytest.raises(EngineError, match="unknown engine 'spark'; use one of local, ray"):
        evaluate(QRELS, RUN, ["map"], engine="spark")


def test_engine_ray_without_ray_installed_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(EngineError, match=r"pip install 'pooling\[ray\]'"):
        evaluate(QRELS, RUN, ["map"], engine="ray")
    data = sim.prepare(QRELS, {"r": RUN}, depth=2)
    with pytest.raises(EngineError, match=r"pooling\[ray\]"):
        sim.simulate(data, [sim.parse_strategy("depth")], [1], engine="ray")


def test_the_local_engine_does_not_import_ray():
    code = ("import sys, pyarrow as pa; from pooling.evaluation import evaluate; "
            "t = pa.table({'query_id': ['1'], 'doc_id': ['a'], 'relevance': [1]}); "
            "r = pa.table({'query_id': ['1'], 'doc_id': ['a'], 'score': [1.0]}); "
            "evaluate(t, r, ['map']); import pooling.cli.eval_cmds; print('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
