"""Fixtures for the pooling-strategy tests: tiny inline rankings and the Robust03 replay."""

from __future__ import annotations

import pytest

from pooling.strategies import Strategy, TopicRuns, get_strategy
from pooling.strategies.uncertain import JudgeGrade

ROBUST = "data/trec2003-robust"


class WordsOf(dict):
    """Any document's text: its id repeated, so every document reads differently."""

    def __missing__(self, doc_id: str) -> str:
        return f"{doc_id} {doc_id}x"

    def get(self, doc_id, default=None):
        return self[doc_id]


def _ready(name: str, topic: TopicRuns | None = None, **params) -> Strategy:
    """A registered strategy with what it needs beyond the rankings: text for every document;
    for `uncertain`, one judge (j) who graded every candidate of `topic`."""
    if name == "uncertain":
        params.setdefault("judges", "j")
    strategy = get_strategy(name, **params)
    inputs = {}
    if "texts" in strategy.needs:
        inputs["texts"] = WordsOf()
    if "judge_grades" in strategy.needs:
        docs = sorted(topic.candidates()) if topic is not None else []
        grades = {d: JudgeGrade(1, 0.99 - 0.01 * i, 0, 1) for i, d in enumerate(docs)}
        inputs["judge_grades"] = {"j": {topic.query_id: grades} if topic is not None else {}}
    return strategy.given(**inputs)


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
    from pooling.strategies.replays import load_inputs

    base = shared_dir / ROBUST
    paths = [str(p) for p in sorted((base / "runs").glob("input.*.gz"))]
    return load_inputs(str(base / "qrels" / "robust03_qrels.txt.gz"), paths)


@pytest.fixture(scope="session")
def robust03_replay(robust03):
    """Candidates = each run's top 100 on topics 601-650, with the qrels as the oracle."""
    from pooling.strategies.replays import parse_topics, prepare

    qrels, runs = robust03
    return prepare(qrels, runs, 100, parse_topics("601-650"))


@pytest.fixture
def ready():
    """`ready(name, topic, **params)`: a registered strategy with what it needs beyond the
    rankings (see `_ready`)."""
    return _ready
