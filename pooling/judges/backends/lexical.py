"""A deterministic judge by word overlap: how much of what is sought the text says.

What is sought is the pair's description when it has one (a nugget, a subtopic), else the
topic's title; the text is the unit's (a document's title and text, an answer). Both are
cut into words (lower-cased letters and digits, a plural `s` dropped, stop words left out);
the overlap is the share of the sought words found in the text. The grade is `top` when the
overlap reaches `support_from`, `top - 1` from `partial_from`, else 0: on a nugget round's
scale (top 2), support, partial support and none. It reads no model and no network, gives
the same grade for the same texts every time, and is the reference judge of the tests and
the worked examples: a baseline, not a replacement for people or a model.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from functools import lru_cache

from pooling.judges.backends.base import JudgeError, Pair, Verdict, failed, ok

STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
also may might must shall can't cannot it's one two get gets got use used using like
""".split())
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@lru_cache(maxsize=4096)
def words(text: str | None) -> frozenset[str]:
    """The content words of `text` (module doc); the last few thousand texts are kept, as a
    round asks one answer about each of its topic's nuggets."""
    out = set()
    for w in _WORD.findall((text or "").lower()):
        if w in STOP_WORDS:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return frozenset(out)


def overlap(sought: str | None, text: str | None) -> float:
    """The share of `sought`'s content words that `text` holds (0 when it has none)."""
    wanted = words(sought)
    if not wanted:
        return 0.0
    return len(wanted & words(text)) / len(wanted)


class LexicalBackend:
    """The word-overlap judge (module doc)."""

    name = "lexical"

    def __init__(self, support_from: float = 0.6, partial_from: float = 0.3, top: int = 2):
        if not 0 < partial_from <= support_from <= 1:
            raise JudgeError(f"judge backend 'lexical' needs 0 < partial_from <= support_from <= 1, "
                             f"got partial_from={partial_from}, support_from={support_from}")
        if top < 1:
            raise JudgeError(f"judge backend 'lexical': top must be 1 or more, got {top}")
        self.support_from, self.partial_from, self.top = support_from, partial_from, top

    def judge(self, pairs: Sequence[Pair]) -> Iterator[Verdict]:
        for pair in pairs:
            start = time.perf_counter()
            text = " ".join(t for t in (pair.doc_title, pair.doc_text) if t)
            if not text:
                yield failed(pair, "the unit has no text to compare with")
                continue
            share = overlap(pair.description or pair.title, text)
            grade = (self.top if share >= self.support_from
                     else self.top - 1 if share >= self.partial_from else 0)
            yield ok(pair, grade, probability=min(1.0, share / self.support_from),
                     answer=f"overlap {share:.3f}", seconds=time.perf_counter() - start)

    def close(self) -> None:
        return None
