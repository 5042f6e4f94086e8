"""Text the store can hold: one check every writer asks before it writes.

A Python string may hold a lone surrogate (half of a UTF-16 pair, as the JSON escape
"\\udfff" makes); it is not Unicode text, and DuckDB refuses the statement that carries it.
Asking first keeps one sender's such text from failing a commit shared with others.
"""

from __future__ import annotations


def unstorable(value: object, name: str) -> str | None:
    """Why `value` cannot be stored as text, or None when it can (non-text values: None).

    A string holding a lone surrogate (half of a UTF-16 pair, as the JSON escape "\\udfff"
    makes) is not Unicode text, and the store refuses it; every writer asks this first, so one
    sender's such text is refused alone instead of failing a commit shared with others. Lists
    and dicts (e.g. bound parameters) are checked item by item. NUL is text the store keeps.
    """
    found = _lone_surrogate(value)
    if found is None:
        return None
    where, text, at = found
    return (f"{name}{where} holds a lone surrogate (U+{ord(text[at]):04X} at character {at + 1}), "
            "which is not text that can be stored; send UTF-8 text (in JSON, a character "
            "outside the BMP needs both halves of its \\u pair)")


def _lone_surrogate(value: object) -> tuple[str, str, int] | None:
    """(where in `value`, the text, the offset) of the first lone surrogate, or None."""
    if isinstance(value, str):
        if value.isascii():
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return "", value, exc.start
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if not (item is None or isinstance(item, (int, float))):
                found = _lone_surrogate(item)
                if found is not None:
                    return f"[{i + 1}]{found[0]}", found[1], found[2]
    elif isinstance(value, dict):
        for key, item in value.items():
            found = _lone_surrogate(key)
            if found is not None:
                return f" (a key){found[0]}", found[1], found[2]
            found = _lone_surrogate(item)
            if found is not None:
                return f".{key}{found[0]}", found[1], found[2]
    return None
