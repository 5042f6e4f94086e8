"""Topic subsets and ranges, NIST-style per-topic reports, and cross-validated selection."""

from __future__ import annotations

import numpy as np
import pytest

from pooling.leaderboard import LeaderboardError, topic_subsets
from pooling.leaderboard.folds import cross_validate, topic_folds
from pooling.leaderboard.per_topic import topic_report
from pooling.store.topic_selection import (
    TopicSelectionError,
    expand_topics,
    resolve_topic_selection,
)

pytestmark = pytest.mark.shared


def test_ranges_expand_to_the_topics_the_store_knows(robust_store):
    subsets = topic_subsets(robust_store)
    assert subsets["new"] == [str(q) for q in range(601, 651)]
    assert len(subsets["old"]) == 50 and subsets["old"][0] == "303" and subsets["old"][-1] == "448"
    both = resolve_topic_selection(robust_store, "old,new")
    assert len(both) == 100
    assert resolve_topic_selection(robust_store, "303, 601-603") == ["303", "601", "602", "603"]


def test_unknown_topics_and_backward_ranges_are_reported_together():
    with pytest.raises(TopicSelectionError, match="999, 1000"):
        expand_topics(["601", "999,1000"], known={"601"})
    with pytest.raises(TopicSelectionError, match="write 601-650"):
        expand_topics(["650-601"])
    assert expand_topics(["1-3", "x"]) == ["1", "2", "3", "x"]


def test_topic_report_sets_each_run_beside_best_median_and_worst(robust_store):
    table = topic_report(robust_store, measures=["map"], topics="new")
    assert table.num_rows == 17 * 50
    rows = table.to_pylist()
    per_topic: dict[str, list[float]] = {}
    for r in rows:
        per_topic.setdefault(r["query_id"], []).append(r["value"])
    for r in rows:
        values = per_topic[r["query_id"]]
        assert r["best"] == max(values) and r["worst"] == min(values)
        assert r["median"] == pytest.approx(float(np.median(values)))
        assert r["worst"] <= r["value"] <= r["best"]
    mine = topic_report(robust_store, measures=["map"], topics="new", runs=["pircRBa1"])
    assert set(mine["run_id"].to_pylist()) == {"pircRBa1"} and mine.num_rows == 50
    assert mine["query_id"].to_pylist()[:3] == ["601", "602", "603"]
    assert mine["best"].to_pylist() == [r["best"] for r in rows if r["run_id"] == "pircRBa1"]


def test_seeded_folds_partition_the_topics():
    topics = [str(q) for q in range(601, 651)]
    folds = topic_folds(topics, 5, seed=3)
    assert sorted(q for f in folds for q in f) == sorted(topics)
    assert [len(f) for f in folds] == [10] * 5
    assert folds == topic_folds(topics, 5, seed=3) != topic_folds(topics, 5, seed=4)


def test_cross_validation_picks_on_training_topics_and_scores_held_out(robust_store):
    result = cross_validate(robust_store, measure="map", k=5, seed=0, topics="new")
    lb_rows = result.folds.to_pylist()
    assert len(lb_rows) == 5 and sum(r["n_test"] for r in lb_rows) == 50
    assert all(r["n_train"] == 40 for r in lb_rows)
    for r in lb_rows:
        assert r["test_score"] <= r["best_test_score"] + 1e-12
    # Held-out selection cannot beat the run that is best on all topics by more than noise,
    # and here the choice is stable: the best run wins every fold.
    assert result.oracle_run == "pircRBa1"
    assert result.cv_score <= result.oracle_score + 1e-12


def test_cross_validation_accepts_stored_subsets_as_folds_and_a_family_pattern(robust_store):
    result = cross_validate(robust_store, family=["fub*", "UAms*", "InexpC2"], measure="map",
                            folds=["old", "new"])
    assert result.family == ["InexpC2", "UAmsT03RDesc", "fub03IeOLKe3"]
    assert result.folds["n_test"].to_pylist() == [50, 50]
    with pytest.raises(LeaderboardError, match="at least two"):
        cross_validate(robust_store, family="nothing*", measure="map")
