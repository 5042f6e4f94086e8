"""What every judge backend shares: a pair to judge, its verdict, the backend protocol, and
a registry entry declaring the backend's parameters.

Backends know nothing of the store: they take (topic, document) pairs with their texts and
yield one verdict per pair as answers arrive. A pair the judge could not grade is a verdict
with status "failed" and a one-sentence error, never an exception and never a silent 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from pooling.errors import PoolingError
from pooling.strategies.params import Param, convert_params

OK = "ok"
FAILED = "failed"


class JudgeError(PoolingError):
    """A judge cannot be set up or run as asked (unknown backend, bad parameter, bad prompt)."""


@dataclass(frozen=True)
class Pair:
    """One thing to judge: a topic (title, description, narrative) and a document; in a
    subtopic round, also the subtopic's number (its text is then the description); for a
    jury's later samples of one judge, the sample's number (so a program can seed on it)."""

    query_id: str
    doc_id: str
    title: str
    description: str | None
    narrative: str | None
    doc_title: str | None
    doc_text: str | None
    subtopic: str | None = None
    sample: int | None = None  # a jury's sample 2, 3, ... of one judge (None: its first)

    def ids(self) -> dict[str, str | int | None]:
        """The pair without any text (what a judge that needs ids only reads): query_id and
        doc_id, and `subtopic` and `sample` as in `fields`."""
        return {k: v for k, v in self.fields().items() if k in ID_FIELDS}

    def fields(self) -> dict[str, str | int | None]:
        """The pair as a plain dict (the JSON a judge program reads); `subtopic` only in a
        subtopic round and `sample` only for a judge's second and later samples, so a plain
        round's requests are as they always were."""
        out: dict[str, str | int | None] = {
            "query_id": self.query_id, "doc_id": self.doc_id, "title": self.title,
            "description": self.description, "narrative": self.narrative,
            "doc_title": self.doc_title, "doc_text": self.doc_text}
        if self.subtopic is not None:
            out["subtopic"] = self.subtopic
        if self.sample is not None:
            out["sample"] = self.sample
        return out


ID_FIELDS = ("query_id", "doc_id", "subtopic", "sample")
NEEDS = ("text", "ids")  # what a judge needs of a pair: its texts, or its ids only


def needs_of(backend: str, params: Mapping[str, Any]) -> str:
    """What a judge with these parameters needs of a pair ('text' unless it declares
    needs=ids); any other value is refused with the allowed ones."""
    needs = params.get("needs") or "text"
    if needs not in NEEDS:
        raise JudgeError(f"parameter needs of judge backend {backend!r} is 'text' (the pair's "
                         f"texts are sent) or 'ids' (query_id and doc_id only), got {needs!r}")
    return needs


@dataclass(frozen=True)
class Verdict:
    """A judge's answer for one pair.

    status "ok": `grade` on the judge's scale, `probability` P(relevant) when the backend has
    one; status "failed": grade None, `error` says why in one sentence and `answer` holds the
    text that could not be read. `seconds` is the wall time spent on the pair.
    """

    query_id: str
    doc_id: str
    status: str
    grade: int | None
    probability: float | None
    answer: str | None
    error: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float
    part: str | None = None  # the pair's subtopic (or nugget), so a verdict finds its part


def ok(pair: Pair, grade: int, *, probability: float | None = None, answer: str | None = None,
       prompt_tokens: int | None = None, completion_tokens: int | None = None,
       seconds: float = 0.0) -> Verdict:
    """A graded verdict for `pair`."""
    return Verdict(pair.query_id, pair.doc_id, OK, grade, probability, answer, None,
                   prompt_tokens, completion_tokens, seconds, pair.subtopic)


def failed(pair: Pair, error: str, *, answer: str | None = None,
           prompt_tokens: int | None = None, completion_tokens: int | None = None,
           seconds: float = 0.0) -> Verdict:
    """A verdict saying `pair` could not be graded, and why."""
    return Verdict(pair.query_id, pair.doc_id, FAILED, None, None, answer, error,
                   prompt_tokens, completion_tokens, seconds, pair.subtopic)


@dataclass(frozen=True)
class Ask:
    """A request for text rather than a grade (a nugget list, importance labels): `prompt`
    is what a chat model reads, `fields` what a program reads as its JSON line; `key` names
    what it is about within the topic (recorded as the call's doc_id)."""

    query_id: str
    key: str
    prompt: str
    fields: Mapping[str, Any]


@dataclass(frozen=True)
class Reply:
    """A backend's answer to an `Ask`: its text (a chat model's content, a program's JSON
    line) when status is "ok", else `error` says why in one sentence."""

    query_id: str
    key: str
    status: str
    text: str | None
    error: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0


class Backend(Protocol):
    """A judge: yields one verdict per pair, in any order, as answers arrive; a backend that
    writes text (a chat model, a program) also answers `Ask`s with `ask`."""

    name: str

    def judge(self, pairs: Sequence[Pair]) -> Iterator[Verdict]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class BackendSpec:
    """A registry entry: a backend's name, one-line description, declared parameters and
    factory `make(prompt, training, **params)`.

    prompted: the backend grades from a prompt template (whose hash is part of a judge's
    identity); trains: it learns from the human judgments passed as `training`.
    """

    name: str
    description: str
    params: tuple[Param, ...]
    make: Callable[..., Backend]
    prompted: bool = False
    trains: bool = False

    def build(self, prompt: str | None = None, training: pa.Table | None = None,
              **params: Any) -> Backend:
        """The backend with `params` checked and converted; defaults fill the rest."""
        if prompt is not None and not self.prompted:
            raise JudgeError(f"judge backend {self.name!r} takes no prompt; leave the prompt out")
        if training is not None and not self.trains:
            raise JudgeError(
                f"judge backend {self.name!r} learns nothing from judgments; leave training out")
        return self.make(prompt, training, **checked_params(self, params))


def checked_params(spec: BackendSpec, given: Mapping[str, Any]) -> dict[str, Any]:
    """`given` converted to the declared types, with defaults for the rest; None means the
    default. Unknown names and values that do not convert are refused with the allowed ones
    (the rules are `pooling.strategies.params`', shared with the strategies)."""
    return convert_params(spec.params, given, f"judge backend {spec.name!r}", JudgeError)


def require(backend: str, name: str, value: Any, example: str) -> None:
    """Refuse a missing required parameter, with an example of one."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise JudgeError(f"judge backend {backend!r} needs the parameter {name} (e.g. {example})")


def at_least(backend: str, name: str, value: float | None, low: float,
             strict: bool = False) -> None:
    """Refuse a numeric parameter below `low` (or equal to it when `strict`)."""
    if value is not None and (value < low or (strict and value == low)):
        bound = f"more than {low:g}" if strict else f"{low:g} or more"
        raise JudgeError(f"parameter {name} of judge backend {backend!r} must be {bound}, "
                         f"got {value:g}")
