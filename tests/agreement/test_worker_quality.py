"""Each worker's figures on gold and with the others: hand-computed cases, the intervals
against their textbook closed forms, and a seeded crowd of known accuracies."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from pooling.agreement.kappa import kappa_from_confusion
from pooling.agreement.worker_quality import (
    below_bar,
    gold_pairs,
    kappa_interval,
    kappa_intervals,
    quality_table,
    wilson_interval,
    worker_quality,
)


def answers(rows: list[tuple]) -> pa.Table:
    """(worker, query_id, doc_id, grade or "u" for unjudgeable, seconds) rows."""
    return pa.table({
        "assessor_id": [r[0] for r in rows], "query_id": [r[1] for r in rows],
        "doc_id": [r[2] for r in rows],
        "kind": ["unjudgeable" if r[3] == "u" else "judge" for r in rows],
        "grade": pa.array([None if r[3] == "u" else r[3] for r in rows], pa.int64()),
        "seconds": pa.array([r[4] for r in rows], pa.float64())})


GOLD = gold_pairs({("1", "d1"): 2, ("1", "d2"): 0, ("1", "d3"): 1, ("1", "d4"): 0})


def by_worker(rows, **options):
    return {q.assessor_id: q for q in worker_quality(answers(rows), GOLD, **options)}


def test_accuracy_binary_accuracy_and_kappa_are_those_computed_by_hand():
    # ann: d1 2=2, d2 1≠0 (binary wrong), d3 2≠1 (binary right), d4 0=0 -> 2/4 exact, 3/4 binary
    q = by_worker([("ann", "1", "d1", 2, 10.0), ("ann", "1", "d2", 1, 20.0),
                   ("ann", "1", "d3", 2, 30.0), ("ann", "1", "d4", 0, 40.0)])["ann"]
    assert (q.gold_answered, q.accuracy, q.binary) == (4, 0.5, 0.75)
    # confusion (gold rows, ann columns) over 0,1,2: po = 2/4; pe = (2·1 + 1·1 + 1·2) / 16
    counts = np.array([[1, 1, 0], [0, 0, 1], [0, 0, 1]])
    assert q.kappa == pytest.approx(kappa_from_confusion(counts))
    assert q.kappa == pytest.approx((0.5 - 5 / 16) / (1 - 5 / 16))
    assert q.median_seconds == 25.0
    low, high = wilson_interval(np.array([2]), np.array([4]))
    assert (q.accuracy_low, q.accuracy_high) == pytest.approx((low[0], high[0]))


def test_the_wilson_interval_is_the_textbook_one():
    # Wilson (1927) for 8 of 10: centre (p + z²/2n)/(1 + z²/n) ± z/(1 + z²/n)·sqrt(p(1-p)/n + z²/4n²)
    z = 1.959963984540054
    p, n = 0.8, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = wilson_interval(np.array([8]), np.array([10]))
    assert (low[0], high[0]) == pytest.approx((centre - half, centre + half))
    assert (low[0], high[0]) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    low, high = wilson_interval(np.array([3]), np.array([3]))  # never a point at 100%
    assert high[0] == 1.0 and low[0] == pytest.approx(0.4385, abs=1e-4)


def test_kappa_interval_maps_the_wilson_interval_of_observed_agreement():
    counts = np.array([[5, 1], [2, 4]])
    kappa, low, high = kappa_interval(counts)
    pe = (6 * 7 + 6 * 5) / 144
    w_low, w_high = wilson_interval(np.array([9]), np.array([12]))
    assert kappa == pytest.approx((9 / 12 - pe) / (1 - pe))
    assert (low, high) == pytest.approx(((w_low[0] - pe) / (1 - pe), (w_high[0] - pe) / (1 - pe)))
    assert low < kappa < high


def test_figures_on_gold_wait_for_min_gold_answers():
    rows = [("bob", "1", "d1", 2, None), ("bob", "1", "d2", 0, None), ("bob", "1", "x", 1, None)]
    q = by_worker(rows)["bob"]
    assert q.gold_answered == 2 and q.answers == 3
    assert q.accuracy is q.binary is q.kappa is q.accuracy_low is None
    assert by_worker(rows, min_gold=2)["bob"].accuracy == 1.0
    assert q.median_seconds is None  # no time recorded


def test_unjudgeable_answers_count_apart_and_never_in_a_figure():
    rows = [("cat", "1", "d1", 2, 1.0), ("cat", "1", "d2", "u", 2.0), ("cat", "1", "d3", 1, 3.0),
            ("cat", "1", "d4", 0, 4.0), ("cat", "1", "x", "u", 5.0)]
    q = by_worker(rows)["cat"]
    assert (q.answers, q.unjudgeable, q.gold_answered, q.gold_unjudgeable) == (5, 2, 3, 1)
    assert q.accuracy == 1.0
    assert q.median_seconds == 3.0  # time counts every answer


def test_agreement_is_the_share_agreeing_with_the_others_majority_a_tie_counting_by_its_odds():
    rows = [("a", "1", "p", 1, None), ("b", "1", "p", 1, None), ("c", "1", "p", 0, None),
            ("a", "1", "q", 2, None), ("b", "1", "q", 0, None),
            ("a", "1", "r", 0, None)]  # r: nobody else, not shared
    q = by_worker(rows)
    # a: on p the others are {1, 0}: a tie, 1/2; on q the other says 0: disagree -> 0.25
    assert (q["a"].shared, q["a"].agreement) == (2, pytest.approx(0.25))
    # b: p others {1, 0} -> 1/2; q other 2 -> 0
    assert q["b"].agreement == pytest.approx(0.25)
    # c: p others {1, 1}: majority 1, c says 0 -> 0
    assert (q["c"].shared, q["c"].agreement) == (1, 0.0)


def test_a_worker_with_no_shared_pair_has_no_agreement():
    q = by_worker([("solo", "1", "d1", 2, None)])["solo"]
    assert (q.shared, q.agreement) == (0, None)


def test_pairs_are_matched_by_topic_and_document_together():
    gold = gold_pairs({("1", "d1"): 2, ("2", "d2"): 0})
    table = answers([("w", "2", "d1", 0, None), ("w", "1", "d2", 2, None)])
    (q,) = worker_quality(table, gold, min_gold=1)
    assert q.gold_answered == 0  # (2, d1) and (1, d2) are not gold pairs


def test_binary_accuracy_follows_the_stated_threshold():
    rows = [("w", "1", "d1", 1, None), ("w", "1", "d2", 0, None), ("w", "1", "d3", 1, None)]
    assert by_worker(rows)["w"].binary == 1.0
    assert by_worker(rows, threshold=2)["w"].binary == pytest.approx(2 / 3)  # d1: 1 vs 2


def test_a_seeded_crowd_of_known_accuracies_is_recovered_within_the_intervals():
    rng = np.random.default_rng(28)
    n_gold, n_workers = 400, 40
    truth = rng.integers(0, 3, n_gold)
    gold = gold_pairs({("t", f"g{i}"): int(g) for i, g in enumerate(truth)})
    accuracies = rng.uniform(0.35, 0.95, n_workers)
    rows = []
    for w, acc in enumerate(accuracies):
        for i in rng.choice(n_gold, 60, replace=False):
            right = rng.random() < acc
            wrong = (truth[i] + rng.integers(1, 3)) % 3
            rows.append((f"w{w:02d}", "t", f"g{i}", int(truth[i] if right else wrong), None))
    found = {q.assessor_id: q for q in worker_quality(answers(rows), gold)}
    inside = sum(found[f"w{w:02d}"].accuracy_low <= acc <= found[f"w{w:02d}"].accuracy_high
                 for w, acc in enumerate(accuracies))
    assert inside >= 0.85 * n_workers  # a 95% interval misses about 2 of 40
    errors = [abs(found[f"w{w:02d}"].accuracy - acc) for w, acc in enumerate(accuracies)]
    assert float(np.mean(errors)) < 0.06


def test_below_bar_takes_only_workers_confidently_below_it():
    rng = np.random.default_rng(5)
    truth = {("t", f"g{i}"): int(rng.integers(0, 2)) for i in range(40)}
    rows = [("good", q, d, g, None) for (q, d), g in truth.items()]
    rows += [("bad", q, d, 1 - g, None) for (q, d), g in truth.items()]
    rows += [("few", q, d, 1 - g, None) for (q, d), g in list(truth.items())[:3]]
    qualities = worker_quality(answers(rows), gold_pairs(truth))
    # "few" is wrong 3 times of 3: a point estimate of 0 is below any bar, but its interval
    # (0 to 0.56) is below only a bar above 0.56
    few = next(q for q in qualities if q.assessor_id == "few")
    assert few.accuracy == 0.0 and few.accuracy_high == pytest.approx(0.5615, abs=1e-4)
    assert [q.assessor_id for q in below_bar(qualities, "accuracy", 0.6)] == ["bad", "few"]
    assert [q.assessor_id for q in below_bar(qualities, "accuracy", 0.5)] == ["bad"]
    assert below_bar(qualities, "kappa", 0.0)[0].assessor_id == "bad"


def test_the_figures_as_an_arrow_table_keep_every_field():
    table = quality_table(worker_quality(answers([("a", "1", "d1", 2, 1.0)]), GOLD))
    assert table.num_rows == 1 and table["accuracy"].to_pylist() == [None]
    assert table.schema.field("answers").type == pa.int64()


def test_gold_that_shares_no_pair_with_the_answers_shows_no_figure():
    (q,) = worker_quality(answers([("w", "1", "d1", 2, None)]), gold_pairs({}), min_gold=1)
    assert (q.gold_answered, q.accuracy, q.kappa) == (0, None, None)


def test_the_kappas_of_all_workers_at_once_are_the_kappa_module_s_one_by_one():
    rng = np.random.default_rng(3)
    stack = rng.integers(0, 6, size=(200, 3, 3))
    stack[0] = 0  # no pairs
    stack[1] = [[4, 0, 0], [0, 0, 0], [0, 0, 0]]  # one grade on both sides: undefined
    kappas, lows, highs = kappa_intervals(stack)
    for counts, kappa, low, high in zip(stack, kappas, lows, highs, strict=True):
        expected = kappa_from_confusion(counts)
        if math.isnan(expected):
            assert math.isnan(kappa) and math.isnan(low) and math.isnan(high)
        else:
            assert kappa == pytest.approx(expected, abs=1e-12)
            assert -1 <= low <= kappa <= high <= 1
