"""Query terms highlighted in document text, with every character of the text escaped.

The text is split at term matches and each piece goes through `markupsafe.escape`; only the
`<mark>` tags are markup we add ourselves. Matching on the raw text (rather than on
already-escaped HTML) keeps a term such as "amp" or "lt" from matching inside an entity.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

# Words too common to be worth highlighting (topic titles are short, so the list is too).
STOPWORDS = frozenset(
    "a an and are as at be by for from how in is it of on or that the this to was what when "
    "where which who why with".split()
)


def query_terms(*texts: str | None) -> list[str]:
    """The distinct words of the topic's query text worth highlighting, longest first."""
    words = {
        w.lower() for text in texts if text for w in re.findall(r"\w+", text)
        if len(w) > 1 and w.lower() not in STOPWORDS
    }
    return sorted(words, key=lambda w: (-len(w), w))


def highlight(text: str | None, terms: list[str]) -> Markup:
    """`text` as safe HTML with whole-word, case-insensitive matches of `terms` in <mark>."""
    if not text:
        return Markup("")
    if not terms:
        return escape(text)
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\b", re.IGNORECASE)
    out: list[str] = []  # escaped pieces as plain strings, joined once (a page per judgment)
    last = 0
    for match in pattern.finditer(text):
        out.append(str(escape(text[last:match.start()])))
        out.append("<mark>" + str(escape(match.group(0))) + "</mark>")
        last = match.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))
