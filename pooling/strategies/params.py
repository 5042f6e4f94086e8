"""Declared parameters of strategies and judge backends, and the one rule that converts values.

A strategy (`pooling pool --param`) and a judge backend (`pooling judges add --param`) declare
their parameters as `Param(name, type, default, help)`; values arrive as text from the command
line, or as JSON / Python values from the web API and the library. `convert_params` turns them
into the declared types, the same way for both (see docs/params.md):

- int: a whole number; "3", 3 and also "3.0" or 3.0 give 3; "3.5", 3.5 and true are refused.
- float: any number; "3" gives 3.0; true is refused.
- bool: true/false, yes/no, 1/0 in any case (and True/False, 1/0); anything else is refused.
- str: the text as given.
None stands for the default. An unknown name is refused with the names the owner takes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pooling.errors import PoolingError

TRUE_WORDS = ("true", "yes", "1")
FALSE_WORDS = ("false", "no", "0")


@dataclass(frozen=True)
class Param:
    """A declared strategy parameter: name, type, default and a one-line help text."""

    name: str
    type: type
    default: Any
    help: str


def parse_key_values(items: Iterable[str], error: type[PoolingError]) -> dict[str, str]:
    """`--param key=value` items as a dict of text (both sides stripped; a later key wins)."""
    out: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise error(f"--param takes key=value, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def convert_params(
    params: Sequence[Param], given: Mapping[str, Any], owner: str, error: type[PoolingError]
) -> dict[str, Any]:
    """Every declared parameter: `given` converted to its type (`convert_value`), the default
    where a value is missing or None. `owner` names who declares them in messages, e.g.
    "strategy 'depth'" or "judge backend 'openai'"; `error` is the exception raised."""
    declared = {p.name: p for p in params}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise error(f"{owner} has no parameter(s) {', '.join(unknown)}; "
                    f"it takes: {', '.join(declared) or 'none'}")
    out = {p.name: p.default for p in params}
    for key, value in given.items():
        if value is not None:
            out[key] = convert_value(declared[key], value, owner, error)
    return out


def convert_value(param: Param, value: Any, owner: str, error: type[PoolingError]) -> Any:
    """One value as `param.type`, by the rules of the module docstring."""
    if param.type is bool:
        word = str(value).strip().lower() if isinstance(value, (str, int)) else None
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return word in TRUE_WORDS  # True/False (bools) arrive here as "true"/"false"
        raise error(f"parameter {param.name} of {owner} must be true or false (or yes/no, "
                    f"1/0), got {value!r}")
    wrong = error(f"parameter {param.name} of {owner} must be {param.type.__name__}, "
                  f"got {value!r}")
    if isinstance(value, bool) and param.type is not str:
        raise wrong  # True is not the number 1 here
    if param.type is int:
        number = whole_number(value)
        if number is None:
            raise wrong
        return number
    try:
        return param.type(value)
    except (TypeError, ValueError) as exc:
        raise wrong from exc


def whole_number(value: Any) -> int | None:
    """An int from an int, or from a number or text that is a whole number ("3", "3.0");
    None for anything else (a fraction, a word, nan, a bool)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass  # "3.0" or "1e3": read as a number below
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() else None  # nan and inf are not whole
