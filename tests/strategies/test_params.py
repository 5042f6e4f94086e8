"""One rule converts `--param` values for strategies and judge backends (docs/params.md)."""

from __future__ import annotations

import math
import re
from typing import ClassVar

import pytest

from pooling.errors import StoreError
from pooling.judges.backends import BACKENDS, JudgeError
from pooling.judges.backends.base import checked_params
from pooling.strategies import Strategy, StrategyError, get_strategy
from pooling.strategies.params import Param, parse_key_values

# (declared type, value given, value taken); the same for strategies and judges.
ACCEPTED = [
    (int, "3", 3), (int, 3, 3), (int, " 3 ", 3), (int, "3.0", 3), (int, 3.0, 3), (int, "-2", -2),
    (float, "3", 3.0), (float, 3, 3.0), (float, "0.5", 0.5), (float, "1e-3", 0.001),
    (bool, "true", True), (bool, "TRUE", True), (bool, "Yes", True), (bool, "1", True),
    (bool, True, True), (bool, 1, True),
    (bool, "false", False), (bool, "False", False), (bool, "no", False), (bool, "0", False),
    (bool, False, False), (bool, 0, False),
    (str, "rbp", "rbp"), (str, 3, "3"),
]
# (declared type, value given, what the message says the value must be)
BOOL = "true or false (or yes/no, 1/0)"
REFUSED = [
    (int, "3.5", "int"), (int, 3.5, "int"), (int, "three", "int"), (int, True, "int"),
    (int, "nan", "int"), (int, "", "int"),
    (float, "half", "float"), (float, True, "float"),
    (bool, "maybe", BOOL), (bool, "on", BOOL), (bool, "off", BOOL),
    (bool, 2, BOOL), (bool, "", BOOL), (bool, 0.5, BOOL),
]


class Probe(Strategy):
    """A strategy (never registered) with one parameter of each type."""

    name = "probe"
    params: ClassVar[tuple[Param, ...]] = (
        Param("n", int, 1, "an int"), Param("x", float, 0.5, "a float"),
        Param("flag", bool, False, "a bool"), Param("word", str, "a", "a text"))


NAMES = {int: "n", float: "x", bool: "flag", str: "word"}
JUDGE_NAMES = {int: "concurrency", float: "timeout", bool: "logprobs", str: "model"}


def strategy_value(kind: type, value: object) -> object:
    return Probe(**{NAMES[kind]: value}).options[NAMES[kind]]


def judge_value(kind: type, value: object) -> object:
    return checked_params(BACKENDS["openai"], {JUDGE_NAMES[kind]: value})[JUDGE_NAMES[kind]]


@pytest.mark.parametrize(("kind", "given", "taken"), ACCEPTED)
def test_a_strategy_parameter_is_converted_to_its_declared_type(kind, given, taken):
    value = strategy_value(kind, given)
    assert value == taken and type(value) is kind


@pytest.mark.parametrize(("kind", "given", "taken"), ACCEPTED)
def test_a_judge_parameter_is_converted_exactly_as_a_strategy_parameter(kind, given, taken):
    value = judge_value(kind, given)
    assert value == taken and type(value) is kind


@pytest.mark.parametrize(("kind", "given", "expected"), REFUSED)
def test_a_strategy_parameter_that_does_not_convert_is_refused_naming_it(kind, given, expected):
    with pytest.raises(StrategyError, match=re.escape(
            f"parameter {NAMES[kind]} of strategy 'probe' must be {expected}, got {given!r}")):
        strategy_value(kind, given)


@pytest.mark.parametrize(("kind", "given", "expected"), [r for r in REFUSED if r[0] is not str])
def test_a_judge_parameter_that_does_not_convert_is_refused_naming_it(kind, given, expected):
    name = JUDGE_NAMES[kind]
    with pytest.raises(JudgeError, match=re.escape(
            f"parameter {name} of judge backend 'openai' must be {expected}, got {given!r}")):
        judge_value(kind, given)


def test_none_stands_for_the_default_in_both():
    assert Probe(n=None, flag=None).options == {"n": 1, "x": 0.5, "flag": False, "word": "a"}
    assert checked_params(BACKENDS["openai"], {"concurrency": None})["concurrency"] == 4


def test_an_unknown_parameter_is_refused_with_the_valid_ones_in_both():
    with pytest.raises(StrategyError, match=r"strategy 'probe' has no parameter\(s\) m, z; it "
                                            "takes: n, x, flag, word"):
        Probe(z=1, m=2)
    with pytest.raises(StrategyError, match=r"strategy 'depth' has no parameter\(s\) dept; it "
                                            "takes: depth"):
        get_strategy("depth", dept="10")
    with pytest.raises(JudgeError, match=r"judge backend 'command' has no parameter\(s\) cmd; "
                                         "it takes: command, timeout"):
        checked_params(BACKENDS["command"], {"cmd": "x"})


def test_registered_strategies_take_text_from_the_command_line():
    assert get_strategy("depth", depth="3.0").options == {"depth": 3}
    assert get_strategy("hedge", beta="1").options == {"beta": 1.0}


def test_key_value_items_are_split_at_the_first_equals_sign_and_stripped():
    assert parse_key_values([" command = python j.py --x=1", "a=", "a=2"], StoreError) == {
        "command": "python j.py --x=1", "a": "2"}
    with pytest.raises(StoreError, match="--param takes key=value, got 'depth'"):
        parse_key_values(["depth"], StoreError)


def test_nan_is_a_float_but_not_an_int():
    assert math.isnan(strategy_value(float, "nan"))
