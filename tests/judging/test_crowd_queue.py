"""The crowd queue's one rule (`pooling.crowds.queue_policy`), on counts alone: K answers take
a pair out of every queue, no worker meets a pair twice, gold stays at its rate, claims end."""

from __future__ import annotations

import random

import pytest

from pooling.crowds.queue_policy import (
    Claims,
    OpenPairs,
    gold_order,
    has_work,
    next_docs,
    reached,
)

QUEUE = [f"d{i}" for i in range(12)]
GOLD = ["g1", "g2", "g3", "g4"]


def simulate(workers: int, k: int, *, rate: float = 0.0, gold=(), seed: int = 0,
             claims: Claims | None = None):
    """Workers arriving in a random order, each answering what the rule hands them, until
    nobody is handed anything: doc -> answering workers, and each worker's answers."""
    rng = random.Random(seed)
    answers: dict[str, set[str]] = {}
    mine: dict[str, list[str]] = {f"w{i}": [] for i in range(workers)}
    while True:
        order = list(mine)
        rng.shuffle(order)
        handed = 0
        for w in order:
            got = next_docs(w, QUEUE, redundancy=k,
                            answers={d: len(a) for d, a in answers.items()},
                            claimed={}, mine=mine[w], gold=list(gold), gold_rate=rate,
                            gold_answered=sum(d in gold for d in mine[w]))
            for d in got:
                answers.setdefault(d, set()).add(w)
                mine[w].append(d)
                handed += 1
        if not handed:
            return answers, mine


@pytest.mark.parametrize("k,workers", [(1, 1), (2, 3), (3, 3), (3, 7), (5, 4)])
def test_every_pair_reaches_k_answers_from_distinct_workers_then_leaves_every_queue(k, workers):
    answers, mine = simulate(workers, k, seed=k * 10 + workers)
    for d in QUEUE:
        assert len(answers[d]) == min(k, workers)
    for w, docs in mine.items():
        assert len(docs) == len(set(docs)), f"{w} met a pair twice"
    assert reached({d: len(a) for d, a in answers.items()}, QUEUE, k) == (
        len(QUEUE) if workers >= k else 0)


def test_a_pair_at_k_is_handed_to_nobody_else():
    answers = {d: 3 for d in QUEUE[:-1]}
    assert next_docs("new", QUEUE, redundancy=3, answers=answers, claimed={}, mine=()) == [QUEUE[-1]]
    answers[QUEUE[-1]] = 3
    assert next_docs("new", QUEUE, redundancy=3, answers=answers, claimed={}, mine=()) == []


def test_fewest_answers_come_first_then_queue_order():
    answers = {"d0": 2, "d1": 1, "d2": 0, "d3": 1}
    got = next_docs("w", QUEUE[:4], redundancy=3, answers=answers, claimed={}, mine=(), limit=4)
    assert got == ["d2", "d1", "d3", "d0"]


@pytest.mark.parametrize("rate", [0.1, 0.25, 0.5])
def test_each_worker_answers_gold_at_the_rate_within_one_pair(rate):
    gold = [f"g{i}" for i in range(40)]
    answered: list[str] = []
    for _ in range(60):
        got = next_docs("w", [f"d{i}" for i in range(100)], redundancy=3, answers={}, claimed={},
                        mine=answered, gold=gold, gold_rate=rate,
                        gold_answered=sum(d in gold for d in answered))
        answered += got
        n_gold = sum(d in gold for d in answered)
        assert abs(n_gold - rate * len(answered)) <= 1, (len(answered), n_gold)
    assert len(answered) == 60


def test_gold_is_never_counted_toward_k_nor_handed_twice():
    answers, mine = simulate(4, 2, rate=0.25, gold=GOLD, seed=3)
    for docs in mine.values():
        assert len(docs) == len(set(docs))
        for n in range(1, len(docs) + 1):
            assert abs(sum(d in GOLD for d in docs[:n]) - 0.25 * n) <= 1
    assert reached({d: len(a) for d, a in answers.items()}, QUEUE + GOLD, 2, GOLD) == len(QUEUE)


def test_workers_meet_the_gold_in_orders_of_their_own():
    gold = [f"g{i}" for i in range(20)]
    assert gold_order("ann", gold) == gold_order("ann", list(reversed(gold)))
    assert gold_order("ann", gold) != gold_order("bob", gold)


def test_a_held_document_comes_back_first_until_answered():
    got = next_docs("w", QUEUE, redundancy=1, answers={}, claimed={"d5": 1}, mine=(), held="d5")
    assert got == ["d5"]
    got = next_docs("w", QUEUE, redundancy=1, answers={"d5": 1}, claimed={}, mine={"d5"})
    assert got == ["d0"]


def test_claims_count_toward_k_for_others_and_expire_after_the_lease():
    claims = Claims(lease=60)
    key = ("r", "1")
    for i in range(3):
        claims.claim(f"w{i}", key, "d0", now=0.0)
    assert dict(claims.counts(key, now=1.0)) == {"d0": 3}
    assert next_docs("w9", QUEUE[:1], redundancy=3, answers={},
                     claimed=claims.counts(key, now=1.0), mine=()) == []
    claims.release("w0", key, "d0")
    assert dict(claims.counts(key, now=2.0)) == {"d0": 2}
    assert claims.held("w1", key, now=59.0) == "d0"
    assert dict(claims.counts(key, now=60.0)) == {}  # the lease ran out: nobody blocks d0
    assert claims.held("w1", key, now=60.0) is None
    assert next_docs("w9", QUEUE[:1], redundancy=3, answers={},
                     claimed=claims.counts(key, now=60.0), mine=()) == ["d0"]


def test_a_new_claim_in_the_topic_replaces_the_one_before():
    claims = Claims(lease=60)
    key = ("r", "1")
    claims.claim("w", key, "d0", now=0.0)
    claims.claim("w", key, "d1", now=10.0)
    assert dict(claims.counts(key, now=11.0)) == {"d1": 1}
    assert dict(claims.counts(key, now=65.0)) == {"d1": 1}  # d0's old lease ends nothing now
    assert dict(claims.counts(key, now=70.0)) == {}


def test_has_work_says_whether_next_docs_would_hand_anything():
    rng = random.Random(5)
    for _ in range(500):
        queue = [f"d{i}" for i in range(rng.randint(0, 6))]
        gold = [f"g{i}" for i in range(rng.randint(0, 3))]
        mine = {d for d in queue + gold if rng.random() < 0.4}
        state = dict(redundancy=rng.randint(1, 3),
                     answers={d: rng.randint(0, 3) for d in queue},
                     claimed={d: rng.randint(0, 1) for d in queue}, mine=mine, gold=gold,
                     gold_rate=rng.choice((0.0, 0.2, 0.5)),
                     gold_answered=sum(d in gold for d in mine),
                     held=rng.choice([None, *queue]) if queue else None)
        assert has_work(queue, worker="w", **state) == bool(next_docs("w", queue, **state))


def test_open_pairs_hand_out_what_ordering_the_whole_queue_would():
    rng = random.Random(9)
    for _ in range(200):
        queue = [f"d{i}" for i in range(rng.randint(1, 12))]
        k = rng.randint(1, 4)
        answers = {d: rng.randint(0, k) for d in queue}
        claimed = {d: rng.randint(0, 1) for d in queue}
        pairs = OpenPairs(queue, k)
        for d in queue:  # counts arrive one change at a time, as the server sees them
            pairs.set(d, answers[d])
            pairs.set(d, answers[d] + claimed[d])
        mine = {d for d in queue if rng.random() < 0.3}
        state = dict(redundancy=k, answers=answers, claimed=claimed, mine=mine,
                     limit=rng.randint(1, 5))
        assert next_docs("w", queue, **state, order=pairs.in_order()) == next_docs("w", queue, **state)


def test_no_fixed_position_gives_the_gold_away():
    """Gold slots are drawn per worker and topic within each block of 1 / rate answers: not
    every worker's first pair, and not the same positions for every worker."""
    gold = [f"g{i}" for i in range(30)]
    queue = [f"d{i}" for i in range(200)]
    positions = {}
    for w in [f"w{i}" for i in range(40)]:
        answered: list[str] = []
        while True:
            docs = next_docs(w, queue, redundancy=1, answers={}, claimed={}, mine=answered,
                             gold=gold, gold_rate=0.1, gold_answered=sum(d in gold for d in answered))
            if not docs or len(answered) >= 50:
                break
            answered += docs
        positions[w] = tuple(i for i, d in enumerate(answered) if d in gold)
        assert len(positions[w]) == 5
        assert all(10 * b <= p < 10 * (b + 1) for b, p in enumerate(positions[w]))  # one a block
    firsts = [p[0] for p in positions.values()]
    assert sum(p == 0 for p in firsts) < 12  # about one worker in ten meets gold first
    assert len(set(firsts)) >= 6
    assert len(set(positions.values())) >= 35


def test_has_work_agrees_with_next_docs_on_the_gold_turn():
    gold = ["g1", "g2"]
    for w in [f"w{i}" for i in range(30)]:
        for answered in range(0, 12):
            mine = [f"d{i}" for i in range(answered)]
            assert has_work([], redundancy=1, answers={}, claimed={}, mine=mine, gold=gold,
                            gold_rate=0.25, gold_answered=0, worker=w) == bool(
                next_docs(w, [], redundancy=1, answers={}, claimed={}, mine=mine, gold=gold,
                          gold_rate=0.25, gold_answered=0))
