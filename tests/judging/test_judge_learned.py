"""The `learned` judge: a per-topic TF-IDF + logistic regression classifier trained on the
human judgments so far, and its cross-validated agreement with them."""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline

from pooling.judges.backends import JudgeError, Pair, backend, cross_validated

NOISE = [f"w{i}" for i in range(2000)]
ZIPF = 1 / np.arange(1, len(NOISE) + 1) / np.sum(1 / np.arange(1, len(NOISE) + 1))
TOPIC_WORDS = {"q1": ["flutter", "wing", "panel", "aeroelastic", "vibration", "mode", "damping"],
               "q2": ["boundary", "layer", "laminar", "transition", "reynolds", "skin", "drag"]}


def document(rng: np.random.Generator, query_id: str, relevant: bool) -> str:
    """Relevant documents share their topic's words; every document has words drawn as in
    text (Zipf), and some non-relevant ones mention a topic word."""
    words = list(rng.choice(NOISE, 30, p=ZIPF))
    topic = TOPIC_WORDS[query_id]
    words += list(rng.choice(topic, 5 if relevant else int(rng.integers(0, 2))))
    rng.shuffle(words)
    return " ".join(words)


def collection(seed: int, per_class: int, query_ids=("q1", "q2"), grades=(2, 0)):
    """Rows of query_id, doc_id, grade, doc_title, doc_text with `per_class` documents of each
    grade in `grades` per topic."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in query_ids:
        for grade in grades:
            for i in range(per_class):
                rows.append({"query_id": q, "doc_id": f"{q}-{seed}-{grade}-{i}", "grade": grade,
                             "doc_title": None, "doc_text": document(rng, q, grade >= 1)})
    return rows


def table(rows) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("query_id", pa.string()), ("doc_id", pa.string()), ("grade", pa.int64()),
        ("doc_title", pa.string()), ("doc_text", pa.string())]))


def as_pairs(rows) -> list[Pair]:
    return [Pair(r["query_id"], r["doc_id"], "topic", None, None, r["doc_title"], r["doc_text"])
            for r in rows]


def test_it_ranks_held_out_relevant_documents_above_non_relevant_ones():
    judge = backend("learned", training=table(collection(seed=1, per_class=15)))
    held_out = collection(seed=2, per_class=20)
    verdicts = {(v.query_id, v.doc_id): v for v in judge.judge(as_pairs(held_out))}
    for q in ("q1", "q2"):
        rows = [r for r in held_out if r["query_id"] == q]
        truth = [r["grade"] >= 1 for r in rows]
        probability = [verdicts[(q, r["doc_id"])].probability for r in rows]
        assert roc_auc_score(truth, probability) > 0.9
    for v in verdicts.values():
        assert v.status == "ok" and 0.0 <= v.probability <= 1.0
        assert v.grade == (1 if v.probability >= 0.5 else 0)  # a binary scale


def test_its_verdicts_are_the_same_every_time():
    training = table(collection(seed=3, per_class=10))
    pairs = as_pairs(collection(seed=4, per_class=10))
    first = [(v.doc_id, v.grade, v.probability) for v in backend("learned", training=training)
             .judge(pairs)]
    again = [(v.doc_id, v.grade, v.probability) for v in backend("learned", training=training)
             .judge(list(reversed(pairs)))]
    assert sorted(first) == sorted(again)


def test_a_topic_with_too_few_judgments_of_a_class_is_refused_saying_how_many():
    rows = collection(seed=5, per_class=6, query_ids=("q1",))
    rows = [r for r in rows if r["grade"] == 0] + [r for r in rows if r["grade"] == 2][:1]
    rows += collection(seed=6, per_class=3, query_ids=("q2",))
    judge = backend("learned", training=table(rows), min_per_class=2)
    pairs = as_pairs(collection(seed=7, per_class=2, query_ids=("q1", "q2")))
    pairs.append(Pair("q3", "x", "a topic nobody judged", None, None, None, "flutter"))
    verdicts = list(judge.judge(pairs))
    refused = [v for v in verdicts if v.query_id == "q1"]
    assert refused and all(v.status == "failed" and v.grade is None for v in refused)
    assert ("has 1 relevant and 6 non-relevant judgment(s) (grade >= 1 is relevant) and the "
            "learned judge needs at least 2 of each") in refused[0].error
    assert all(v.status == "ok" for v in verdicts if v.query_id == "q2")
    q3 = next(v for v in verdicts if v.query_id == "q3")
    assert q3.status == "failed" and "no human judgments" in q3.error


def test_relevant_from_sets_which_grades_count_as_relevant():
    rows = collection(seed=8, per_class=5, query_ids=("q1",), grades=(2, 1))
    # with grade >= 2 relevant there are 5 of each class; with >= 1, all 10 are relevant
    assert all(v.status == "ok" for v in backend(
        "learned", training=table(rows), relevant_from=2).judge(as_pairs(rows)))
    refused = list(backend("learned", training=table(rows)).judge(as_pairs(rows)))
    assert "has 10 relevant and 0 non-relevant" in refused[0].error


def test_it_needs_training_with_the_right_columns():
    with pytest.raises(JudgeError, match="needs the human judgments"):
        backend("learned")
    with pytest.raises(JudgeError, match="lacks column.s. doc_text"):
        backend("learned", training=pa.table({"query_id": ["q"], "doc_id": ["d"], "grade": [1],
                                              "doc_title": ["t"]}))


def test_without_scikit_learn_the_error_names_the_extra(monkeypatch):
    for name in [m for m in sys.modules if m == "sklearn" or m.startswith("sklearn.")]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(JudgeError, match=r"pooling\[learned\]"):
        backend("learned", training=table(collection(seed=1, per_class=3)))


def test_cross_validation_matches_scikit_learns_own_and_skips_thin_topics():
    rows = collection(seed=9, per_class=20)
    thin = [dict(r, query_id="q9") for r in collection(seed=11, per_class=4, query_ids=("q1",))]
    report = cross_validated(table(rows + thin), folds=5)
    assert set(report["topics"]) == {"q1", "q2"}
    assert "q9" in report["skipped"] and "5-fold cross-validation needs at least 5" in (
        report["skipped"]["q9"])
    truths, probabilities = [], []
    for q in ("q1", "q2"):
        topic = [r for r in rows if r["query_id"] == q]
        truth = np.array([r["grade"] >= 1 for r in topic])
        # the same model and folds, predicted by scikit-learn's own cross_val_predict
        model = make_pipeline(TfidfVectorizer(sublinear_tf=True, strip_accents="unicode"),
                              LogisticRegression(class_weight="balanced", max_iter=1000,
                                                 random_state=0))
        probability = cross_val_predict(
            model, [r["doc_text"] for r in topic], truth, method="predict_proba",
            cv=StratifiedKFold(5, shuffle=True, random_state=0))[:, 1]
        ours = report["topics"][q]
        assert (ours["n"], ours["relevant"]) == (40, 20)
        assert ours["roc_auc"] == pytest.approx(roc_auc_score(truth, probability))
        assert ours["kappa"] == pytest.approx(cohen_kappa_score(truth, probability >= 0.5))
        assert ours["roc_auc"] > 0.9
        truths.append(truth)
        probabilities.append(probability)
    overall = report["overall"]
    assert (overall["topics"], overall["n"], overall["relevant"]) == (2, 80, 40)
    truth, probability = np.concatenate(truths), np.concatenate(probabilities)
    assert overall["roc_auc"] == pytest.approx(roc_auc_score(truth, probability))
    assert overall["kappa"] == pytest.approx(cohen_kappa_score(truth, probability >= 0.5))
    assert overall["mean_roc_auc"] == pytest.approx(
        np.mean([report["topics"][q]["roc_auc"] for q in ("q1", "q2")]))


@pytest.mark.shared
@pytest.mark.slow
def test_on_cranfield_it_tells_relevant_abstracts_from_the_rest(shared_dir):
    """Cranfield's judgments are near exhaustive, so every unjudged abstract counts as not
    relevant; ten topics with at least five relevant abstracts, all 1,400 abstracts each."""
    from pooling.formats.smart import read_smart_documents, read_smart_qrels

    cranfield = shared_dir / "data" / "cranfield"
    docs = read_smart_documents(cranfield / "cran.all.1400").to_pylist()
    qrels = read_smart_qrels(cranfield / "cranqrel").to_pylist()
    relevant: dict[str, set[str]] = {}
    for row in qrels:
        if row["relevance"] > 0:
            relevant.setdefault(row["query_id"], set()).add(row["doc_id"])
    topics = [q for q in sorted(relevant, key=int) if len(relevant[q]) >= 5][:10]
    rows = [{"query_id": q, "doc_id": d["doc_id"], "grade": int(d["doc_id"] in relevant[q]),
             "doc_title": d["title"], "doc_text": d["text"]} for q in topics for d in docs]
    report = cross_validated(table(rows), folds=5)
    assert set(report["topics"]) == set(topics) and report["skipped"] == {}
    assert report["overall"]["n"] == 10 * len(docs)
    assert report["overall"]["roc_auc"] > 0.9
    assert all(t["roc_auc"] > 0.75 for t in report["topics"].values())
    assert report["overall"]["kappa"] > 0.2
