"""Topic selections (a store concept every floor above may use): lists with ranges (`601-650,303`), and named subsets kept in the store.

A subset (e.g. Robust03's `old` topics 303–448 and `new` topics 601–650) is stored in the
`topic_subsets` table (name, query_id) and can then be named wherever topics are chosen.
A range `a-b` of integers means every topic the store knows whose id is a number in [a, b],
so `301-450` picks the 50 old Robust topics without listing them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pooling.errors import StoreError
from pooling.store.core import Store


class TopicSelectionError(StoreError):
    """A topic selection names a topic, range or subset the store cannot give."""


_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


def known_topics(store: Store) -> set[str]:
    """Every query_id the store mentions: topics, qrels and runs."""
    rows = store.sql(
        "known topics",
        # The union over the three places a topic can appear.
        "SELECT query_id FROM topics UNION SELECT query_id FROM qrels "
        "UNION SELECT DISTINCT query_id FROM run_results",
    ).fetchall()
    return {r[0] for r in rows}


def expand_topics(items: Iterable[str], known: set[str] | None = None) -> list[str]:
    """Topic ids from tokens (each an id, a comma list, or a range a-b), in first-seen order.

    With `known`, a range keeps only known numeric ids and single ids must be known; every
    unknown id is reported at once.
    """
    out: list[str] = []
    unknown: list[str] = []
    for item in items:
        for token in (t.strip() for t in str(item).split(",")):
            if not token:
                continue
            match = _RANGE.match(token)
            if match:
                lo, hi = int(match.group(1)), int(match.group(2))
                if lo > hi:
                    raise TopicSelectionError(f"topic range {token!r} runs backwards; write {hi}-{lo}")
                if known is None:
                    ids = [str(x) for x in range(lo, hi + 1)]
                else:
                    ids = sorted((q for q in known if q.isdigit() and lo <= int(q) <= hi), key=int)
                out += ids
            elif known is not None and token not in known:
                unknown.append(token)
            else:
                out.append(token)
    if unknown:
        raise TopicSelectionError(
            f"unknown topic(s) {', '.join(unknown[:10])}; the store has no topic, judgment or "
            "run line with these ids"
        )
    return list(dict.fromkeys(out))


def topic_subsets(store: Store) -> dict[str, list[str]]:
    """Stored subsets: name -> query_ids (numeric ids in numeric order)."""
    rows = store.sql(
        "list topic subsets", "SELECT name, query_id FROM topic_subsets ORDER BY name"
    ).fetchall()
    out: dict[str, list[str]] = {}
    for name, query_id in rows:
        out.setdefault(name, []).append(query_id)
    return {name: _sorted(ids) for name, ids in out.items()}


def save_topic_subset(store: Store, name: str, items: Iterable[str]) -> list[str]:
    """Store (or replace) a named subset; items are ids, comma lists or ranges. Returns the ids."""
    if not name.strip() or "," in name or _RANGE.match(name):
        raise TopicSelectionError(
            f"{name!r} cannot name a subset: use a word without commas that is not a range"
        )
    ids = expand_topics(items, known_topics(store))
    if not ids:
        raise TopicSelectionError(f"subset {name!r} would be empty; the ranges match no known topic")
    with store.transaction() as con:
        con.execute("DELETE FROM topic_subsets WHERE name = ?", [name])
        con.executemany("INSERT INTO topic_subsets VALUES (?, ?)", [[name, q] for q in ids])
    return _sorted(ids)


def delete_topic_subset(store: Store, name: str) -> None:
    if name not in topic_subsets(store):
        raise TopicSelectionError(f"no topic subset {name!r} in {store.path}")
    with store.transaction() as con:
        con.execute("DELETE FROM topic_subsets WHERE name = ?", [name])


def resolve_topic_selection(store: Store, topics: str | list[str] | None) -> list[str] | None:
    """None (all topics), or ids, ranges and stored subset names (a comma string or a list)."""
    if topics is None:
        return None
    items = [topics] if isinstance(topics, str) else list(topics)
    subsets = topic_subsets(store)
    tokens = [t.strip() for item in items for t in str(item).split(",") if t.strip()]
    known = known_topics(store)
    ids: list[str] = []
    for token in tokens:
        ids += subsets[token] if token in subsets else expand_topics([token], known)
    return _sorted(dict.fromkeys(ids))


def topic_key(query_id: str) -> tuple:
    """Sort key: numeric ids numerically, then the others as text."""
    return (not query_id.isdigit(), int(query_id) if query_id.isdigit() else 0, query_id)


def _sorted(ids: Iterable[str]) -> list[str]:
    return sorted(ids, key=topic_key)
