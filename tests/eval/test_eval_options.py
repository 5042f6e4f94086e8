"""One evaluation-input signature: EvalOptions, or its fields as keywords, for every evaluator."""

from __future__ import annotations

import inspect
from typing import get_type_hints

import pyarrow as pa
import pytest

from pooling import evaluate
from pooling.errors import EvaluationError
from pooling.evaluation import EvalOptions
from pooling.evaluation.engine import evaluate_qrels
from pooling.evaluation.judgment_groups import evaluate_judgment_groups
from pooling.evaluation.options import FIELDS, EvalInputs
from pooling.evaluation.preferences import evaluate_prefs
from pooling.evaluation.trec_input import parse_qrels, parse_run
from pooling.measures import parse_measures

QRELS = parse_qrels(b"q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\nq3 0 y 1\n")
RUN = parse_run(b"q1 Q0 a 1 3 t\nq1 Q0 c 2 2 t\nq1 Q0 z 3 1 t\nq2 Q0 z 1 1 t\n")


def test_the_keywords_are_the_options_fields_and_the_defaults_live_in_the_options():
    assert tuple(get_type_hints(EvalInputs)) == FIELDS
    assert EvalOptions() == EvalOptions("error", 1, None, None, False, None, None)
    for evaluator in (evaluate, evaluate_qrels, evaluate_judgment_groups, evaluate_prefs):
        parameters = inspect.signature(evaluator).parameters
        assert "options" in parameters and "inputs" in parameters, evaluator.__name__
        assert not set(FIELDS) & set(parameters), evaluator.__name__


def test_options_and_keywords_give_the_same_evaluation():
    options = EvalOptions(missing_topics="zero", relevance_level=2, max_docs=2,
                          topics=iter(["q1", "q2"]))  # an iterator is read once, kept
    given = evaluate(QRELS, RUN, ["map", "P.2"], options)
    keywords = evaluate(QRELS, RUN, ["map", "P.2"], missing_topics="zero", relevance_level=2,
                        max_docs=2, topics=["q1", "q2"])
    assert given.per_query.equals(keywords.per_query)
    assert (given.missing_topics, given.relevance_level, given.max_docs) == ("zero", 2, 2)
    assert given.runs[0].query_ids == ["q1", "q2"]


def test_keywords_override_the_options_they_are_given_with():
    options = EvalOptions(missing_topics="error")
    result = evaluate(QRELS, RUN, ["map"], options, missing_topics="skip")
    assert result.missing_topics == "skip" and result.runs[0].query_ids == ["q1", "q2"]


@pytest.mark.parametrize(("inputs", "message"), [
    ({"relevance_level": 0}, "relevance level must be >= 1"),
    ({"max_docs": 0}, r"max_docs \(-M\) must be >= 1"),
    ({"collection_size": -1}, r"collection size \(-N\) must be >= 0"),
])
def test_out_of_range_options_are_refused_whichever_way_they_come(inputs, message):
    with pytest.raises(EvaluationError, match=message):
        evaluate(QRELS, RUN, ["map"], missing_topics="skip", **inputs)
    with pytest.raises(EvaluationError, match=message):
        evaluate(QRELS, RUN, ["map"], EvalOptions(missing_topics="skip", **inputs))


def test_the_judgment_group_evaluator_takes_the_same_options():
    groups = pa.table({"query_id": ["q1", "q1", "q2"], "jg": ["u1", "u2", "u1"],
                       "doc_id": ["a", "c", "x"], "relevance": [1, 1, 1]})
    wanted = parse_measures(["map_avgjg"])
    via_options = evaluate_judgment_groups(groups, [RUN], wanted, EvalOptions("skip"))
    via_keywords = evaluate_judgment_groups(groups, [RUN], wanted, missing_topics="skip")
    assert via_options.per_query.equals(via_keywords.per_query)
