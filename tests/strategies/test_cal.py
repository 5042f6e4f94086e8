"""`cal`: continuous active learning finds relevant documents by their words, retrains on a
growing schedule that depends only on the judgments, and starts in fusion order."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from pooling.strategies import StrategyError, TopicRuns, get_strategy
from pooling.strategies.replays import found_share, parse_strategy, prepare, replay

pytest.importorskip("sklearn")

TOPIC_WORDS = "flutter wing aeroelastic panel divergence".split()
OTHER_WORDS = ("heat transfer boundary layer shock tube nozzle combustion viscous plate "
               "hypersonic laminar turbulent skin friction stagnation").split()


def synthetic(n_topics: int = 4, n_docs: int = 60, n_relevant: int = 8, seed: int = 1):
    """Per topic: three runs ranking the same 60 documents in shuffled orders (the relevant
    ones no higher than anyone else), relevant documents sharing the topic's words, the
    others drawn from another vocabulary. Returns qrels, runs and texts."""
    rng = random.Random(seed)
    qrels = {"query_id": [], "doc_id": [], "relevance": []}
    runs = {f"r{i}": {"query_id": [], "doc_id": [], "score": []} for i in range(3)}
    texts = {}
    for t in range(n_topics):
        q = str(t + 1)
        docs = [f"t{q}-d{i:02d}" for i in range(n_docs)]
        relevant = set(rng.sample(docs, n_relevant))
        for d in docs:
            words = TOPIC_WORDS if d in relevant else OTHER_WORDS
            texts[d] = " ".join(rng.choice(words) for _ in range(8)) + " " + " ".join(
                rng.choice(OTHER_WORDS) for _ in range(4))
            qrels["query_id"].append(q)
            qrels["doc_id"].append(d)
            qrels["relevance"].append(int(d in relevant))
        for run in runs.values():
            order = docs[:]
            rng.shuffle(order)
            for rank, d in enumerate(order):
                run["query_id"].append(q)
                run["doc_id"].append(d)
                run["score"].append(float(n_docs - rank))
    return pa.table(qrels), {r: pa.table(v) for r, v in runs.items()}, texts


def test_cal_finds_relevant_documents_faster_than_depth_when_they_share_words():
    qrels, runs, texts = synthetic()
    data = prepare(qrels, runs, depth=60, texts=texts)
    shares = {}
    for name in ("cal", "depth", "mixfuse"):
        rep = replay(data, parse_strategy(name), 20)
        shares[name] = found_share(data, rep, 20)
    assert shares["cal"] >= 0.9  # nearly every relevant document within 20 judgments
    assert shares["cal"] > shares["depth"] + 0.3 and shares["cal"] > shares["mixfuse"] + 0.3


def drive(selector, grades, limit=100):
    order = []
    while len(order) < limit and (doc := selector.next()) is not None:
        order.append(doc)
        selector.observe(doc, grades.get(doc, 0))
    return order


def one_topic():
    qrels, runs, texts = synthetic(n_topics=1)
    data = prepare(qrels, runs, depth=60, texts=texts)
    grades = {d: g for d, g in zip(qrels["doc_id"].to_pylist(), qrels["relevance"].to_pylist(),
                                   strict=True)}
    return data.topics["1"], texts, grades


def test_a_selector_rebuilt_from_the_judgments_serves_what_the_live_one_served():
    topic, texts, grades = one_topic()
    live = drive(get_strategy("cal").given(texts=texts).selector(topic, 0), grades, limit=30)
    for k in range(len(live)):
        rebuilt = get_strategy("cal").given(texts=texts).selector(topic, 0)
        for doc in live[:k]:
            rebuilt.observe(doc, grades.get(doc, 0))
        assert rebuilt.next() == live[k], f"after {k} judgments"


def test_training_is_batched_with_growing_batches_and_growth_zero_retrains_every_time():
    topic, texts, grades = one_topic()
    batched = get_strategy("cal").given(texts=texts).selector(topic, 0)
    every = get_strategy("cal", growth=0).given(texts=texts).selector(topic, 0)
    order = drive(batched, grades, limit=60)
    drive(every, grades, limit=60)
    first_warm = next(i for i in range(1, 61) if len({grades[d] > 0 for d in order[:i]}) == 2)
    # warm after judgment w: trainings at w, w+1, ... while the batch is 1, then fewer
    assert every.trainings == 60 - first_warm  # one per judgment from warm to the last ask
    assert 0 < batched.trainings < every.trainings / 2


def test_until_both_classes_are_judged_the_cold_start_strategy_chooses(tiny_topic):
    texts = {d: f"words {d}{d}" for d in tiny_topic.candidates()}
    nothing_relevant: dict[str, int] = {}
    for cold in ("mixfuse", "take", "depth"):
        sel = get_strategy("cal", cold=cold).given(texts=texts).selector(tiny_topic, 0)
        order = drive(sel, nothing_relevant)  # never warm
        assert order == drive(get_strategy(cold).selector(tiny_topic, 0), nothing_relevant)
        assert sel.trainings == 0
    assert get_strategy("cal").options["cold"] == "mixfuse"
    # mixfuse learns from the non-relevant judgments while cold: another order than RRF's
    assert drive(get_strategy("cal").given(texts=texts).selector(tiny_topic, 0), {"e": 1}) != \
        drive(get_strategy("cal", cold="take").given(texts=texts).selector(tiny_topic, 0), {"e": 1})


def test_cal_without_texts_or_with_bad_parameters_is_refused(tiny_topic):
    with pytest.raises(StrategyError, match="documents' text"):
        get_strategy("cal").selector(tiny_topic, 0)
    with pytest.raises(StrategyError, match="growth"):
        get_strategy("cal", growth=-1).given(texts={}).selector(tiny_topic, 0)
    for cold in ("cal", "uncertain"):
        with pytest.raises(StrategyError, match="reads only the runs"):
            get_strategy("cal", cold=cold).given(texts={}).selector(tiny_topic, 0)
    with pytest.raises(StrategyError, match="unknown strategy"):
        get_strategy("cal", cold="nope").given(texts={}).selector(tiny_topic, 0)
    with pytest.raises(StrategyError, match="no input"):
        get_strategy("depth").given(texts={})


def test_judged_documents_without_text_are_not_learned_from():
    topic = TopicRuns("1", {"r": ["a", "b", "c", "d"]})
    sel = get_strategy("cal", growth=0).given(texts={"a": "wing flutter", "c": "wing flutter",
                                                     "d": "heat shock"}).selector(topic, 0)
    sel.observe("a", 1)
    sel.observe("b", 0)  # no text: judged, but it teaches nothing, so still cold
    assert sel.next() == "c" and sel.trainings == 0
    sel.observe("c", 1)
    assert sel.next() == "d" and sel.trainings == 0
