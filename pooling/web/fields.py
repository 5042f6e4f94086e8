"""Typed, ranged fields of the organiser's forms (form-encoded or JSON), read at the boundary.

A value of the wrong type or out of range is refused with a 400 whose message names the
field and what it may be, so nothing the library cannot take (a seed of 1.5, a depth of
10^21 or -5, text holding a lone surrogate) gets further.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Protocol

from starlette.exceptions import HTTPException

from pooling.judging.storable import unstorable

MAX_TEXT = 1_000  # characters of a name, id or rule
_WHOLE = re.compile(r"[+-]?\d{1,30}")


class Fields(Protocol):
    def get(self, name: str, default: Any = None) -> Any: ...

    def getlist(self, name: str) -> list[Any]: ...


class FieldRefused(HTTPException):
    """A field of the wrong type or out of range (HTTP 400, the message says which)."""

    def __init__(self, message: str):
        super().__init__(400, message)


def text(body: Fields, name: str, default: str = "", *, max_length: int = MAX_TEXT) -> str:
    """A text field, stripped; `default` when missing or empty."""
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, str) or len(value) > max_length:
        raise FieldRefused(f"{name} must be text of at most {max_length:,} characters")
    why = unstorable(value, name)
    if why:
        raise FieldRefused(why)
    return value.strip() or default


def texts(body: Fields, name: str, *, max_length: int = MAX_TEXT) -> list[str]:
    """A repeated text field (form) or a list of text (JSON)."""
    values = body.getlist(name)
    if len(values) == 1 and isinstance(values[0], list):
        values = values[0]
    if not all(isinstance(v, str) and len(v) <= max_length for v in values):
        raise FieldRefused(f"{name} must be a list of texts of at most {max_length:,} characters")
    why = unstorable(values, name)
    if why:
        raise FieldRefused(why)
    return [v.strip() for v in values if v.strip()]


def choice(body: Fields, name: str, allowed: Sequence[str], default: str) -> str:
    """One of `allowed`; `default` when missing or empty."""
    value = body.get(name)
    if value is None or value == "":
        return default
    if value not in allowed:
        raise FieldRefused(f"{name} must be one of {', '.join(allowed)}")
    return value


def whole_number(body: Fields, name: str, *, low: int, high: int,
                 default: int | None = None) -> int | None:
    """An integer from `low` to `high`; `default` when missing or empty."""
    value = body.get(name)
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return default
        value = int(value) if _WHOLE.fullmatch(value) else None
    elif value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FieldRefused(f"{name} must be a whole number from {low:,} to {high:,}")
    return value


def number(body: Fields, name: str, *, low: float, high: float, default: float) -> float:
    """A finite number from `low` to `high`; `default` when missing or empty."""
    value = body.get(name)
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return default
        try:
            value = float(value) if len(value) <= 40 else None
        except ValueError:
            value = None
    elif value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or not low <= value <= high:
        raise FieldRefused(f"{name} must be a number from {low:g} to {high:g}")
    return float(value)


def whole_numbers(body: Fields, name: str, *, low: int, high: int, default: tuple[int, ...],
                  most: int = 100) -> tuple[int, ...]:
    """Comma-separated integers (a form) or a list of integers (JSON), each from `low` to
    `high`, at most `most` of them; `default` when missing or empty."""
    value = body.get(name)
    if value is None or value == "":
        return default
    items = value.split(",") if isinstance(value, str) else value
    wrong = FieldRefused(f"{name} must be up to {most} whole numbers from {low:,} to {high:,}, "
                         "separated by commas")
    if not isinstance(items, list) or not 0 < len(items) <= most:
        raise wrong
    out = []
    for item in items:
        if isinstance(item, str) and _WHOLE.fullmatch(item.strip()):
            item = int(item.strip())
        if isinstance(item, bool) or not isinstance(item, int) or not low <= item <= high:
            raise wrong
        out.append(item)
    return tuple(out)
