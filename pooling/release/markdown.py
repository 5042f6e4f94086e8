"""Markdown made safe: what came from input shows as the text it is, never as markup.

A title, a run tag, a qrels version's or a round's name is typed by someone, and the
datasheet and the dataset card are rendered by the hub, by GitHub, by a browser. `text`
writes such a value so that it renders as itself: HTML is escaped (`<script>` shows as
text), Markdown punctuation is backslash-escaped (a `|` does not end a table cell, a
backtick does not open a code span, `[x](javascript:…)` is no link), and line breaks become
spaces. `organiser_markdown` keeps the organiser's own account as Markdown (headings, lists,
emphasis, links), but escapes its HTML and disarms links to scripts.
"""

from __future__ import annotations

import html
import re

# What can turn text into markup anywhere in a line (`<` and `&` are HTML-escaped first);
# the rest of Markdown's punctuation only acts at the start of a line, where no value goes.
_PUNCTUATION = re.compile(r"([\\`*_\[\]|~])")
# Schemes a link must never take, also spelled with backslash escapes between the letters
# (Markdown drops those before the browser sees the link).
_UNSAFE_SCHEMES = ("javascript", "vbscript", "data", "file")
_UNSAFE_LINK = re.compile(
    "(" + "|".join(r"\\?".join(scheme) for scheme in _UNSAFE_SCHEMES) + r")\\?\s*:",
    re.IGNORECASE)


def text(value: object) -> str:
    """`value` as Markdown that renders as exactly its text, on one line."""
    one_line = " ".join(str(value).split()) if value is not None else ""
    return _PUNCTUATION.sub(r"\\\1", html.escape(one_line, quote=False))


def organiser_markdown(source: str) -> str:
    """The organiser's Markdown with its HTML escaped (shown as text, never run) and links to
    `javascript:`, `vbscript:`, `data:` and `file:` disarmed (their colon removed)."""
    escaped = html.escape(source, quote=False)
    return _UNSAFE_LINK.sub(lambda m: m.group(1).replace("\\", "") + "-", escaped)
