"""Pools built in a lab's run order: by score (trec_eval's, as NIST pools) or by the submitted
rank (as CLEF pools), for every strategy, static or adaptive, and recorded with the round."""

from __future__ import annotations

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pooling.cli.app import app
from pooling.judges.model_judges import add_judge
from pooling.judging.assessors import add_assessor, assign
from pooling.judging.judgments import Judgment, append_judgments, record
from pooling.judging.queue import next_document
from pooling.judging.rounds import create_round, get_round, pool_table
from pooling.store import Store
from pooling.strategies import REGISTRY, StrategyError, rankings_by_topic

# Ranks and scores disagree. By rank, A reads a1 a2 a3 a4 and B b1 a3 b3 b5 (b3 and b5 share
# rank 3: the higher score first); by score, A reads a2 a4 a3 a1 and B b3 b5 a3 b1. Topic 2
# by rank: A c1 c2, B c3 c4 c1; by score: A c2 c1, B c1 c3 c4.
RUNS = {
    "a.run": "1 Q0 a1 1 0.1 A\n1 Q0 a2 2 0.9 A\n1 Q0 a3 3 0.5 A\n1 Q0 a4 4 0.7 A\n"
             "2 Q0 c1 1 1.0 A\n2 Q0 c2 2 5.0 A\n",
    "b.run": "1 Q0 b1 1 1.0 B\n1 Q0 a3 2 2.0 B\n1 Q0 b5 3 2.5 B\n1 Q0 b3 3 3.0 B\n"
             "2 Q0 c3 1 0.5 B\n2 Q0 c4 2 0.2 B\n2 Q0 c1 3 9.0 B\n",
}
# Depth-2 pools, worked out by hand from the lines above.
BY_RANK = {("1", "a1"), ("1", "a2"), ("1", "b1"), ("1", "a3"),
           ("2", "c1"), ("2", "c2"), ("2", "c3"), ("2", "c4")}
BY_SCORE = {("1", "a2"), ("1", "a4"), ("1", "b3"), ("1", "b5"),
            ("2", "c2"), ("2", "c1"), ("2", "c3")}


@pytest.fixture
def store(tmp_path):
    s = Store.create(tmp_path / "c.duckdb")
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    s.import_runs([tmp_path / n for n in RUNS])
    yield s
    s.close()


def pairs(store, round_id: str) -> set[tuple[str, str]]:
    return {(p["query_id"], p["doc_id"]) for p in pool_table(store, round_id).to_pylist()}


def test_a_depth_pool_by_rank_is_the_rank_pooled_pool_and_differs_from_the_score_pool(store):
    create_round(store, "clef", "depth", strategy_params={"depth": 2}, order="rank")
    create_round(store, "trec", "depth", strategy_params={"depth": 2})
    assert pairs(store, "clef") == BY_RANK
    assert pairs(store, "trec") == BY_SCORE
    assert get_round(store, "clef").params["order"] == "rank"
    assert get_round(store, "trec").order == "score"


def test_rank_ties_go_to_the_higher_score_then_the_higher_doc_id():
    run = pa.table({"query_id": ["1"] * 4, "doc_id": ["x", "z", "y", "w"],
                    "rank": [2, 2, 2, 1], "score": [5.0, 1.0, 5.0, 0.0]})
    (topic,) = rankings_by_topic({"r": run}, None, "rank").values()
    assert topic.rankings["r"] == ["w", "y", "x", "z"]
    unranked = run.set_column(2, "rank", pa.array([None, 1, None, 2], pa.int64()))
    (topic,) = rankings_by_topic({"r": unranked}, None, "rank").values()
    assert topic.rankings["r"] == ["z", "w", "y", "x"]  # rows without a rank come last


def test_an_unknown_order_is_refused_before_anything_is_stored(store):
    with pytest.raises(StrategyError, match="unknown run order 'date'; use one of score, rank"):
        create_round(store, "r", "depth", order="date")
    assert store.one("rounds", "SELECT count(*) FROM rounds") == (0,)


def needs_of(store, tmp_path, name: str) -> dict[str, str]:
    """Give the store what the strategy needs beyond the runs (document text, a judge who
    graded every document); the strategy's parameters to use it."""
    needs = REGISTRY[name].needs
    docs = sorted({d for q, d in BY_RANK | BY_SCORE})
    if "texts" in needs:
        (tmp_path / "docs.tsv").write_text("".join(f"{d}\tpage {d} words{d}\n" for d in docs))
        store.import_documents(tmp_path / "docs.tsv")
    if "judge_grades" in needs:
        add_judge(store, "j", "learned")
        append_judgments(store, [Judgment(None, "j", q, d, 1, probability=0.6)
                                 for q, d in sorted(BY_RANK | BY_SCORE)])
        return {"judges": "j", "candidates": "pool"}
    return {}


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_strategy_pools_from_the_rank_order(store, name, tmp_path):
    """Static queues and adaptive choices alike draw only from each run's top 2 by rank."""
    params = needs_of(store, tmp_path, name)
    summary = create_round(store, "r", name, depth=2, order="rank", strategy_params=params)
    if not summary.round.adaptive:
        assert pairs(store, "r") <= BY_RANK
        return
    add_assessor(store, "ann")
    assign(store, "r", ["ann"])
    served = set()
    for q in ("1", "2"):
        while (doc := next_document(store, "r", "ann", q)) is not None:
            served.add((q, doc))
            record(store, [Judgment("r", "ann", q, doc, 0)])
    assert served == BY_RANK


def test_cli_pool_takes_the_order_and_says_it(store):
    path = store.path
    store.close()
    result = CliRunner().invoke(app, ["pool", str(path), "--round", "clef", "--strategy", "depth",
                                      "--depth", "2", "--order", "rank"])
    assert result.exit_code == 0, result.output
    assert "round clef: depth over 2 runs (by rank) and 2 topics, 8 documents queued" in result.output
    with Store(path) as s:
        assert pairs(s, "clef") == BY_RANK
