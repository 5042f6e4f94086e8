"""The order topic ids are listed in: natural, so topic 12 comes before topic 101.

Topic ids are text (`101`, `L007`, `2024-q3`), and sorted as text `10, 101, 103, 12` reads as
a jumble. Each id is split into runs of digits and of other characters; digit runs compare
as numbers, the rest as text, and the id itself breaks ties (`007` before `7`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_RUNS = re.compile(r"(\d+)")


def topic_key(query_id: str) -> tuple:
    """A sort key putting topic ids in natural order (numbers as numbers)."""
    parts = _RUNS.split(query_id)
    # Alternating text and digit runs, always starting with text (maybe ''): the items of two
    # keys at one index are of one type, so any two keys compare.
    return (tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), query_id)


def in_topic_order(query_ids: Iterable[str]) -> list[str]:
    """The topic ids sorted naturally (`topic_key`)."""
    return sorted(query_ids, key=topic_key)
