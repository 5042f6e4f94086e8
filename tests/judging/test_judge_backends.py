"""The judge registry (names, declared parameters) and prompt templates (filling, grade
reading, hashing)."""

from __future__ import annotations

import hashlib

import pytest

from pooling.judges.backends import (
    BACKENDS,
    DEFAULT_PROMPT,
    PLACEHOLDERS,
    JudgeError,
    Pair,
    backend,
    check_template,
    parse_grade,
    prompt_sha256,
    read_prompt,
    render,
)

PAIR = Pair("q7", "d3", "wing flutter", "flutter of thin wings", None, "A study",
            "text that mentions {query} literally")
URL = "http://127.0.0.1:8000/v1"


def test_the_registry_names_every_backend_with_documented_parameters():
    assert set(BACKENDS) == {"openai", "command", "learned", "lexical"}
    for name, spec in BACKENDS.items():
        assert spec.name == name and spec.description
        assert all(p.help for p in spec.params)
    assert [p.name for p in BACKENDS["openai"].params][:3] == ["base_url", "model", "api_key_env"]
    assert (BACKENDS["openai"].prompted, BACKENDS["learned"].trains) == (True, True)


def test_an_unknown_backend_or_parameter_is_refused_listing_the_allowed_ones():
    with pytest.raises(JudgeError, match="unknown judge backend 'gpt'; known: command, learned, "
                                         "lexical, openai"):
        backend("gpt")
    with pytest.raises(JudgeError, match=r"no parameter\(s\) temp; it takes: base_url, model, "):
        backend("openai", base_url=URL, model="m", temp=0.5)


def test_parameters_given_as_text_are_converted_to_their_declared_types():
    judge = backend("openai", base_url=URL, model="m", concurrency="8", timeout="2.5",
                    logprobs="false", max_tokens=None)
    assert (judge.concurrency, judge.timeout, judge.logprobs, judge.max_tokens) == (
        8, 2.5, False, None)
    for wrong in ({"concurrency": "eight"}, {"concurrency": 2.5}, {"logprobs": "maybe"},
                  {"concurrency": True}):
        with pytest.raises(JudgeError, match=f"parameter {next(iter(wrong))} of judge backend "
                                             "'openai' must be"):
            backend("openai", base_url=URL, model="m", **wrong)
    with pytest.raises(JudgeError, match="concurrency of judge backend 'openai' must be 1 or more"):
        backend("openai", base_url=URL, model="m", concurrency=0)
    with pytest.raises(JudgeError, match="needs the parameter model"):
        backend("openai", base_url=URL)


def test_a_prompt_or_training_is_refused_by_backends_that_do_not_use_them():
    with pytest.raises(JudgeError, match="'command' takes no prompt"):
        backend("command", command="python judge.py", prompt="{query}")
    with pytest.raises(JudgeError, match="'openai' learns nothing from judgments"):
        import pyarrow as pa
        backend("openai", base_url=URL, model="m", training=pa.table({"x": [1]}))


def test_placeholders_are_filled_once_from_the_pair():
    template = "{query_id}|{query}|{description}|{narrative}|{doc_id}|{passage}|{{json}}|{ x }"
    assert render(template, PAIR) == (
        "q7|wing flutter|flutter of thin wings||d3|A study\ntext that mentions {query} "
        "literally|{{json}}|{ x }")
    assert render("{topic}", PAIR) == "Query: wing flutter\nDescription: flutter of thin wings"
    assert set(PLACEHOLDERS) >= {"query", "description", "narrative", "doc_title", "doc_text"}


def test_an_unknown_placeholder_is_named_with_its_line():
    with pytest.raises(JudgeError, match=r"unknown placeholder\(s\) \{Query\} \(line 1\), "
                                         r"\{text\} \(line 3\); use only \{query\}"):
        check_template("{Query}\n{doc_text}\n{text}")
    with pytest.raises(JudgeError, match="is empty"):
        check_template("  \n")
    check_template(DEFAULT_PROMPT)


def test_a_prompt_file_is_read_and_checked_naming_the_file(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("Rate {passage} for {query}.\n##final score: N\n")
    assert read_prompt(good) == good.read_text()
    bad = tmp_path / "bad.txt"
    bad.write_text("Rate {passage}\nfor {querry}\n")
    with pytest.raises(JudgeError, match=r"bad.txt has unknown placeholder\(s\) \{querry\} "
                                         r"\(line 2\)"):
        read_prompt(bad)
    with pytest.raises(JudgeError, match="cannot read the prompt file .*missing.txt"):
        read_prompt(tmp_path / "missing.txt")


def test_the_prompt_hash_is_the_sha256_of_the_exact_text():
    assert prompt_sha256(DEFAULT_PROMPT) == hashlib.sha256(DEFAULT_PROMPT.encode()).hexdigest()
    assert prompt_sha256(DEFAULT_PROMPT) != prompt_sha256(DEFAULT_PROMPT + " ")


@pytest.mark.parametrize(("answer", "grade"), [
    ("##final score: 2", 2),
    ("M: 2\nT: 1\nO: 1\n##final score: 1\n", 1),
    ("**Final Score:** 3", 3),
    ("Final score (O): 0", 0),
    ("final score = 2.", 2),
    ("I said ##final score: 1 first, but on reflection\n##final score: 3", 3),
    ("<think>final score: 0? no.</think>\n##final score: 2", 2),
    ("2", 2),
    ("The passage answers it.\n**3**", 3),
    ("##final score: 2.0", 2),
])
def test_the_grade_is_read_from_the_last_final_score(answer, grade):
    assert parse_grade(answer) == (grade, None)


@pytest.mark.parametrize(("answer", "why"), [
    ("It is quite relevant.", "has no '##final score: N' line"),
    ("##final score: score", "has no '##final score: N' line"),
    ("", "has no '##final score: N' line"),
    ("##final score: 7", "final score 7 is outside the scale 0-3"),
    ("##final score: -1", "final score -1 is outside the scale 0-3"),
    ("##final score: 2.5", "final score 2.5 is not a whole number"),
])
def test_an_answer_without_a_readable_grade_is_never_a_silent_zero(answer, why):
    grade, error = parse_grade(answer)
    assert grade is None and why in error


def test_the_scale_follows_max_grade():
    assert parse_grade("##final score: 4", max_grade=4) == (4, None)
    assert parse_grade("##final score: 2", max_grade=1)[0] is None
