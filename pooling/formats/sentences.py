"""The stated rule that splits a plain response into sentences.

A plain response (the iKAT files, a TSV of texts) comes without sentences, yet an answer is
shown, cited and judged sentence by sentence. The rule, applied the same way on every
import so that sentence numbers are stable:

1. A line break that ends a paragraph (a blank line) always ends a sentence; a single line
   break ends one when the line before it ends with `.`, `!`, `?` or `:`, or the next line
   starts a list item (`-`, `*`, `•`, or `1.` / `1)`).
2. Inside a line, a sentence ends after `.`, `!` or `?` (and any closing quotes or
   brackets right after it) that is followed by whitespace and then an upper-case letter, a
   digit, or an opening quote or bracket.
3. It does not end after an abbreviation of the list `ABBREVIATIONS` (`e.g.`, `Dr.`,
   `U.S.`), after a single capital letter (an initial, `J. Smith`), nor after a number
   followed by a period when the next word is lower-case (rule 2 already requires upper case).
4. Each sentence is stripped of surrounding whitespace; empty ones are dropped. The text of
   the response is never changed otherwise: joining the sentences with one space gives the
   response with its whitespace runs collapsed.
"""

from __future__ import annotations

import re

# Words ending in a period that do not end a sentence (compared lower-cased, period included).
# Words that often end one too ("no.", "etc.", "min.", "Sat.") are left out: a split missed
# joins two sentences, a split made wrongly cuts one.
ABBREVIATIONS = frozenset({
    "e.g.", "i.e.", "vs.", "cf.", "al.", "approx.", "ca.", "fig.",
    "figs.", "eq.", "vol.", "pp.", "p.", "ed.", "eds.", "dr.", "mr.", "mrs.", "ms.", "prof.",
    "sr.", "jr.", "st.", "mt.", "ft.", "inc.", "ltd.", "co.", "corp.", "dept.", "univ.",
    "u.s.", "u.k.", "u.s.a.", "e.u.", "a.m.", "p.m.", "jan.", "feb.", "mar.", "apr.", "jun.",
    "jul.", "aug.", "sep.", "sept.", "oct.", "nov.", "dec.", "mon.", "tue.", "wed.", "thu.",
    "fri.", "avg.", "gov.", "gen.", "col.",
    "lt.", "sgt.", "capt.", "rev.", "hon.",
})

_END = re.compile(r"""[.!?]+["')\]’”]*(?=\s+["'(\[‘“]?[A-Z0-9À-Ý])""")
_PARAGRAPH = re.compile(r"\n\s*\n")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s")
_LINE_END = re.compile(r"[.!?:][\"')\]’”]*\s*$")


def split_sentences(text: str) -> list[str]:
    """The sentences of `text` by the module's rule, in order (none for blank text)."""
    sentences: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        for block in _line_blocks(paragraph):
            sentences.extend(_split_block(block))
    return sentences


def _line_blocks(paragraph: str) -> list[str]:
    """A paragraph's lines joined into blocks: a line break ends a block after a line that
    ends a sentence or before a list item (rule 1)."""
    blocks: list[str] = []
    current: list[str] = []
    for line in paragraph.split("\n"):
        if current and (_LINE_END.search(current[-1]) or _LIST_ITEM.match(line)):
            blocks.append(" ".join(current))
            current = []
        current.append(line)
    if current:
        blocks.append(" ".join(current))
    return blocks


def _split_block(block: str) -> list[str]:
    out: list[str] = []
    start = 0
    for match in _END.finditer(block):
        if match.group().startswith(".") and _abbreviation_before(block, match.start()):
            continue
        piece = block[start:match.end()].strip()
        if piece:
            out.append(" ".join(piece.split()))
        start = match.end()
    rest = block[start:].strip()
    if rest:
        out.append(" ".join(rest.split()))
    return out


def _abbreviation_before(block: str, period: int) -> bool:
    """Whether the period at `period` ends an abbreviation or an initial (rule 3)."""
    word_start = period
    while word_start > 0 and not block[word_start - 1].isspace():
        word_start -= 1
    word = block[word_start:period + 1].lstrip("\"'([‘“").lower()
    if word in ABBREVIATIONS:
        return True
    return len(word) == 2 and word[0].isalpha() and block[word_start:period].lstrip("\"'([‘“").isupper()
