"""Fixtures for the pooling-strategy tests: tiny inline rankings and the Robust03 replay."""

from __future__ import annotations

import pytest

from pooling.strategies import TopicRuns

ROBUST = "data/trec2003-robust"


@pytest.fixture
def tiny_topic() -> TopicRuns:
    """Three runs over eight documents; a, b and e are the relevant ones (see `tiny_grades`)."""
    return TopicRuns(
        "1",
        {
            "good": ["a", "b", "c", "e"],
            "bad": ["x", "y", "z", "a"],
            "mid": ["c", "a", "w", "b"],
        },
    )


@pytest.fixture
def tiny_grades() -> dict[str, int]:
    return {"a": 1, "b": 2, "e": 1}


@pytest.fixture(scope="session")
def robust03(shared_dir):
    """Robust03's 17 runs and official qrels, read once per session."""
    from pooling.simulate import load_inputs

    base = shared_dir / ROBUST
    paths = [str(p) for p in sorted((base / "runs").glob("input.*.gz"))]
    return load_inputs(str(base / "qrels" / "robust03_qrels.txt.gz"), paths)


@pytest.fixture(scope="session")
def robust03_replay(robust03):
    """Candidates = each run's top 100 on topics 601-650, with the qrels as the oracle."""
    from pooling.simulate import parse_topics, prepare

    qrels, runs = robust03
    return prepare(qrels, runs, 100, parse_topics("601-650"))
