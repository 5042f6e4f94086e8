"""`uncertain`: people get the pairs an automatic judge is least sure of, or that two judges
disagree on most; a static queue from the judges' grades."""

from __future__ import annotations

import pytest

from pooling.strategies import StrategyError, get_strategy
from pooling.strategies.uncertain import JudgeGrade


def queue(tiny_topic, grades: dict[str, dict[str, JudgeGrade]], **params) -> list[str]:
    strategy = get_strategy("uncertain", judges=",".join(grades), **params)
    given = {j: {"1": by_doc} for j, by_doc in grades.items()}
    return strategy.given(judge_grades=given).queue(tiny_topic, 0)


def binary(p: float) -> JudgeGrade:
    return JudgeGrade(int(p >= 0.5), p, 0, 1)


def test_one_judge_queues_its_least_sure_pairs_first(tiny_topic):
    grades = {"a": binary(0.95), "b": binary(0.55), "c": binary(0.1), "x": binary(0.4),
              "y": binary(0.7)}
    assert queue(tiny_topic, {"j": grades}) == ["b", "x", "y", "c", "a"]


def test_without_probabilities_grades_in_the_middle_of_the_scale_are_least_sure(tiny_topic):
    scale = {"a": 3, "b": 1, "c": 0, "x": 2}
    grades = {d: JudgeGrade(g, None, 0, 3) for d, g in scale.items()}
    # b and x sit 1/6 from the middle, a and c at the ends; ties in round-robin order a x c b
    assert queue(tiny_topic, {"j": grades}) == ["x", "b", "a", "c"]


def test_two_judges_disagreeing_most_come_first_ties_to_the_least_sure(tiny_topic):
    graded = {"a": JudgeGrade(3, None, 0, 3), "b": JudgeGrade(0, None, 0, 3),
              "c": JudgeGrade(2, None, 0, 3), "x": JudgeGrade(1, None, 0, 3)}
    learned = {"a": binary(0.1), "b": binary(0.8), "c": binary(0.6), "x": binary(0.45),
               "y": binary(0.5)}  # y: only one judge graded it, so no disagreement to weigh
    # a and b: the judges at opposite ends (difference 1); b's second judge is less sure.
    # c and x: a third of the scale apart; x is the less sure pair.
    assert queue(tiny_topic, {"umbrela": graded, "learned": learned}) == ["b", "a", "x", "c"]


def test_candidates_pool_keeps_only_the_pooled_runs_candidates(tiny_topic):
    grades = {"a": binary(0.9), "outside": binary(0.5)}
    assert queue(tiny_topic, {"j": grades}) == ["outside", "a"]
    assert queue(tiny_topic, {"j": grades}, candidates="pool") == ["a"]


def test_uncertain_needs_one_or_two_judges_and_their_grades(tiny_topic):
    with pytest.raises(StrategyError, match="--judge NAME"):
        get_strategy("uncertain").given(judge_grades={}).queue(tiny_topic, 0)
    with pytest.raises(StrategyError, match="one judge or two"):
        get_strategy("uncertain", judges="a,b,c").given(judge_grades={}).queue(tiny_topic, 0)
    with pytest.raises(StrategyError, match="no grades of judge"):
        get_strategy("uncertain", judges="a").given(judge_grades={"b": {}}).queue(tiny_topic, 0)
    with pytest.raises(StrategyError, match="automatic judges' grades"):
        get_strategy("uncertain", judges="a").queue(tiny_topic, 0)
    with pytest.raises(StrategyError, match="candidates"):
        get_strategy("uncertain", judges="a", candidates="all").given(
            judge_grades={"a": {}}).queue(tiny_topic, 0)


def test_two_judges_both_saying_three_agree_on_a_declared_scale_whatever_else_they_said(
        tiny_topic):
    # Judge one also gave two stray 5s elsewhere; with the scale declared 0-5 for both, the
    # pairs both graded 3 still agree, and the pair they grade 0 and 5 comes first.
    one = {"a": JudgeGrade(3, None, 0, 5), "b": JudgeGrade(5, None, 0, 5),
           "c": JudgeGrade(3, None, 0, 5), "x": JudgeGrade(5, None, 0, 5)}
    two = {"a": JudgeGrade(3, None, 0, 5), "b": JudgeGrade(0, None, 0, 5),
           "c": JudgeGrade(3, None, 0, 5), "x": JudgeGrade(2, None, 0, 5)}
    order = queue(tiny_topic, {"one": one, "two": two})
    assert order[:2] == ["b", "x"] and set(order[2:]) == {"a", "c"}
    # max_grade puts both on 0..3 whatever scale the grades came with; 5 is then off it.
    with pytest.raises(StrategyError, match=r"judge one gave 2 grade\(s\) outside its scale "
                                            r"0-3: \(1, b\) grade 5, \(1, x\) grade 5"):
        queue(tiny_topic, {"one": one, "two": two}, max_grade="3")


def test_max_grade_is_one_number_or_one_per_judge(tiny_topic):
    loose = {"a": JudgeGrade(1, None, 0, None), "b": JudgeGrade(0, None, 0, None)}
    three = {"a": JudgeGrade(3, None, 0, None), "b": JudgeGrade(2, None, 0, None)}
    # umbrela grades 0-3, learned 0-1: a is at the top of both scales, b 2/3 against 0.
    assert queue(tiny_topic, {"umbrela": three, "learned": loose}, max_grade="3,1") == ["b", "a"]
    for bad in ("0", "3,1,2", "three", "-1", "3,"):
        with pytest.raises(StrategyError, match="max_grade takes one whole number"):
            queue(tiny_topic, {"umbrela": three, "learned": loose}, max_grade=bad)


def test_a_judge_without_a_scale_is_refused_where_its_grades_are_read(tiny_topic):
    undeclared = {"a": JudgeGrade(1, 0.8, 0, None), "b": JudgeGrade(0, 0.3, 0, None)}
    # One judge whose every judgment has a probability: its grades are never read.
    assert queue(tiny_topic, {"j": undeclared}) == ["b", "a"]
    with pytest.raises(StrategyError, match=r"judge j declares no grade scale, and its grades "
                                            r"are read \(some of its judgments carry no "
                                            r"probability\).*--param max_grade=N"):
        queue(tiny_topic, {"j": {**undeclared, "c": JudgeGrade(1, None, 0, None)}})
    with pytest.raises(StrategyError, match=r"judge k declares no grade scale.*two judges"):
        queue(tiny_topic, {"j": {"a": binary(0.8)}, "k": undeclared})


def test_off_scale_grades_are_reported_together_for_every_judge(tiny_topic):
    many = {f"d{i}": JudgeGrade(4 + i % 2, None, 0, 3) for i in range(12)}
    low = {"a": JudgeGrade(-1, None, 0, 1)}
    with pytest.raises(StrategyError) as raised:
        queue(tiny_topic, {"j": many, "k": low})
    text = str(raised.value)
    assert "judge j gave 12 grade(s) outside its scale 0-3: (1, d0) grade 4, (1, d1) grade 5" in text
    assert "and 2 more" in text and "judge k gave 1 grade(s) outside its scale 0-1: (1, a) grade -1" in text
    assert "retract or fix those judgments" in text


def test_uncertain_reads_the_runs_only_to_keep_pool_candidates():
    assert not get_strategy("uncertain", judges="a").reads_runs()
    assert get_strategy("uncertain", judges="a", candidates="pool").reads_runs()
    assert get_strategy("depth").reads_runs()
    assert not get_strategy("uncertain").replays() and get_strategy("cal").replays()
