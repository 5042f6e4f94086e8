"""Prompt templates for model judges: the default UMBRELA-style prompt, `{placeholder}`
filling, reading the grade back from an answer, and the template's hash.

The default follows UMBRELA (Upadhyay et al. 2024, the open reproduction of Bing's relevance
assessor used for TREC RAG 2024): grades 0-3 with their meanings, the query (with the topic's
description and narrative when it has them), the passage, and a last line `##final score: N`.
A template is plain text; `{name}` is replaced by the pair's field of that name (see
PLACEHOLDERS), any other `{identifier}` is an error, and other braces are kept as written.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pooling.judges.backends.base import JudgeError, Pair

PLACEHOLDERS = {
    "query": "the topic's title (its query)",
    "description": "the topic's description, empty when it has none",
    "narrative": "the topic's narrative, empty when it has none",
    "topic": "'Query: <title>', then 'Description: ...' and 'Narrative: ...' lines for those "
             "the topic has",
    "doc_title": "the document's title, empty when it has none",
    "doc_text": "the document's text, empty when it has none",
    "passage": "the document's title and text, one per line, whichever it has",
    "query_id": "the topic's id",
    "doc_id": "the document's id",
}

DEFAULT_MAX_GRADE = 3

DEFAULT_PROMPT = """\
Given a query and a passage, grade how relevant the passage is to the query on an integer \
scale of 0 to 3, where:
0 = the passage has nothing to do with the query,
1 = the passage seems related to the query but does not answer it,
2 = the passage has some answer for the query, but the answer may be a bit unclear, or hidden \
amongst extraneous information,
3 = the passage is dedicated to the query and contains the exact answer.

Important instruction: give 1 if the passage is somewhat related to the topic but not \
completely, 2 if it presents something very important related to the entire topic but also \
has some extra information, and 3 if it refers only and entirely to the topic. If none of \
these fits, give 0. A description or narrative, when given, says what the searcher counts \
as relevant.

{topic}
Passage: {passage}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score \
(O). The final score must be an integer only.
Do not provide any code in the result. Answer with one line in the format \
##final score: N, without giving your reasoning.
"""

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def prompt_sha256(prompt_text: str) -> str:
    """The sha256 (hex) of a template's exact text: part of a model judge's identity."""
    return hashlib.sha256(prompt_text.encode("utf-8")).hexdigest()


def read_prompt(path: str | Path) -> str:
    """A template file's text, checked (see `check_template`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise JudgeError(f"cannot read the prompt file {path}: {exc.strerror or exc}; "
                         "check the path") from exc
    except UnicodeDecodeError as exc:
        raise JudgeError(f"the prompt file {path} is not UTF-8 text; save it as UTF-8") from exc
    check_template(text, source=str(path))
    return text


def check_template(template: str, source: str = "the prompt") -> None:
    """Refuse a template with placeholders other than PLACEHOLDERS, naming their lines."""
    unknown = []
    for number, line in enumerate(template.splitlines(), start=1):
        unknown += [f"{{{m.group(1)}}} (line {number})" for m in _PLACEHOLDER.finditer(line)
                    if m.group(1) not in PLACEHOLDERS]
    if unknown:
        raise JudgeError(
            f"{source} has unknown placeholder(s) {', '.join(unknown)}; "
            f"use only {', '.join('{' + name + '}' for name in PLACEHOLDERS)}")
    if not template.strip():
        raise JudgeError(f"{source} is empty; write the instructions for the judge in it")


def values(pair: Pair) -> dict[str, str]:
    """The text each placeholder stands for, for one pair."""
    topic = [f"Query: {pair.title}"]
    if pair.description:
        topic.append(f"Description: {pair.description}")
    if pair.narrative:
        topic.append(f"Narrative: {pair.narrative}")
    return {
        "query": pair.title,
        "description": pair.description or "",
        "narrative": pair.narrative or "",
        "topic": "\n".join(topic),
        "doc_title": pair.doc_title or "",
        "doc_text": pair.doc_text or "",
        "passage": "\n".join(t for t in (pair.doc_title, pair.doc_text) if t),
        "query_id": pair.query_id,
        "doc_id": pair.doc_id,
    }


def render(template: str, pair: Pair) -> str:
    """The template filled in for `pair`, in one pass (text that looks like a placeholder
    inside a document is not filled again). The template must have passed check_template."""
    filled = values(pair)
    return _PLACEHOLDER.sub(lambda m: filled.get(m.group(1), m.group(0)), template)


# The last "final score" in the answer, in the forms models write it: "##final score: 2",
# "**Final Score:** 2", "Final score (O): 2", "final score = 2".
_FINAL = re.compile(r"final[\s_*#-]*score\b[^\d\n-]{0,12}?(-?\d+(?:\.\d+)?)", re.IGNORECASE)
# With no such line, a last line that is just a number ("2", "**2**", "2.").
_BARE = re.compile(r"^[\s*#:>`'\"]*(-?\d+(?:\.\d+)?)[\s*.`'\"]*$")
# Reasoning models think aloud first; only what follows the thinking is the answer.
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def parse_grade(answer: str, max_grade: int = DEFAULT_MAX_GRADE) -> tuple[int | None, str | None]:
    """(grade, None) read from an answer's final-score line, or (None, why it cannot be)."""
    text = _THINKING.sub("", answer)
    found = _FINAL.findall(text)
    if found:
        number = found[-1]
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        bare = _BARE.match(lines[-1]) if lines else None
        if bare is None:
            return None, "the answer has no '##final score: N' line to read a grade from"
        number = bare.group(1)
    if "." in number and not float(number).is_integer():
        return None, f"the answer's final score {number} is not a whole number"
    grade = int(float(number))
    if not 0 <= grade <= max_grade:
        return None, f"the answer's final score {grade} is outside the scale 0-{max_grade}"
    return grade, None
