"""Declarative measure entries and their parameters, parsed the way trec_eval parses `-m`.

A `MeasureSpec` is one registry entry (a trec_eval measure or one of the extras); a
`Measure` is a spec with concrete parameters and relevance level, equal by identity and
usable as a dict key. Its `columns` are the output names (`P_5`, `ndcg_cut_10`,
`P(rel=2)@5`, `Judged@10`): the trec_eval name where one exists, else the ir_measures one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pooling.errors import MeasureError


class Params(Enum):
    """How a measure's parameter string is read.

    The rules: docs/trec_eval-semantics.md#measure-names-and-parameters.
    """

    NONE = "none"
    CUTOFFS = "cutoffs"  # integer cutoffs: atol, sorted, positive, distinct
    FRACTIONS = "fractions"  # float cutoffs: atof, sorted, distinct; names use %3.2f
    FRACTION_LIST = "fraction list"  # floats in the order typed (11pt_avg)
    NUMBER = "number"  # one float (set_F's beta)
    DEPTH = "depth"  # one integer (relstring)
    UTILITY = "utility"  # exactly four floats a,b,c,d
    GAINS = "gains"  # grade=gain pairs (ndcg, G, ndcg_rel, Rndcg)
    RBP = "rbp"  # p=persistence plus grade=gain pairs


class Kind(Enum):
    """How a value is printed and averaged."""

    FLOAT = "float"  # %6.4f, mean over topics
    COUNT = "count"  # %ld, summed over topics
    GEO = "geo"  # summary only: geometric mean with a 1e-5 floor
    TEXT = "text"  # per topic only (relstring)
    RUNID = "runid"  # summary only: the run tag
    NUM_Q = "num_q"  # summary only: number of topics


class CutoffError(MeasureError):
    """A cutoff list trec_eval cannot initialise (exit 2).

    The rules: docs/trec_eval-semantics.md#measure-names-and-parameters.
    """

    exit_code = 2


class CoefficientError(MeasureError):
    """utility needs exactly four coefficients (trec_eval exits 4)."""

    exit_code = 4


Compute = Callable[..., Any]


@dataclass(frozen=True)
class MeasureSpec:
    """One measure of the registry."""

    name: str  # trec_eval name, or the ir_measures base name for extras
    family: str
    description: str
    compute: Compute = field(repr=False, compare=False)
    params: Params = Params.NONE
    default: str = ""  # default parameter text, as trec_eval would read it
    kind: Kind = Kind.FLOAT
    uses_level: bool = True  # whether -l / rel= changes the value
    ir_name: str | None = None  # ir_measures spelling, `@k` where a cutoff goes
    trec: bool = True  # a trec_eval 10.0 measure
    # The relevance information it needs (trec_eval's -R): "qrels", "prefs" (prefs or
    # qrels_prefs files), "qrels_jg" or "subtopics"; None for runid and num_q, which need none.
    rel_info: str | None = "qrels"
    # Named numeric settings it takes besides cutoffs and rel (the diversity measures'
    # alpha and beta), written `name(alpha=0.3)@k`; the Measure's param_text holds them.
    settings: tuple[str, ...] = ()
    # Output name template where it is neither the trec_eval nor the ir_measures name
    # (ndeval's own: `alpha-nDCG@k`).
    column: str | None = None


@dataclass(frozen=True, eq=False)
class Measure:
    """A spec with parameters: what one `-m` (or ir_measures string) asks for.

    Equal (and hashed) by identity, its output names: `nDCG@10` == `ndcg_cut.10`.
    """

    spec: MeasureSpec
    param_text: str | None  # as typed (trec_eval names use it verbatim); None = default
    values: tuple[Any, ...]
    rel: int | None = None  # ir_measures rel=, overriding -l for this measure only

    @property
    def columns(self) -> list[str]:
        """Output names, one per value column, in trec_eval's order."""
        spec = self.spec
        if self.rel is not None or not spec.trec:
            extra = self.param_text if spec.settings else None
            return [ir_column(spec, v, self.rel, extra) for v in self._column_values()]
        if spec.params is Params.CUTOFFS:
            return [f"{spec.name}_{k}" for k in self.values]
        if spec.params is Params.FRACTIONS:
            return [f"{spec.name}_{x:3.2f}" for x in self.values]
        if self.param_text is None:
            return [spec.name]
        return [f"{spec.name}_{self.param_text}"]

    @property
    def identity(self) -> tuple[str, ...]:
        return tuple(self.columns)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and self.identity == other.identity

    def __hash__(self) -> int:
        return hash(self.identity)

    def __str__(self) -> str:
        return ",".join(self.columns)

    def _column_values(self) -> list[Any]:
        if self.spec.params in (Params.CUTOFFS, Params.FRACTIONS):
            return list(self.values)
        return [None if self.spec.settings else self.param_text]

    @property
    def multi(self) -> bool:
        return self.spec.params in (Params.CUTOFFS, Params.FRACTIONS)

    def level(self, default: int) -> int:
        return self.rel if self.rel is not None else default


def ir_column(spec: MeasureSpec, value: Any, rel: int | None, settings: str | None = None) -> str:
    """ir_measures-style name: `P(rel=2)@5`, `Judged@10`, `AP(rel=2)`,
    `alpha-nDCG(alpha=0.3)@20` (settings: the measure's `alpha=0.3` text)."""
    template = spec.column or spec.ir_name or spec.name
    base, _, _ = template.partition("@")
    args = []
    if "(" in base:
        base, inner = base[:-1].split("(", 1)
        args.append(inner)
    if settings:
        args.append(settings)
    if rel is not None:
        args.append(f"rel={rel}")
    name = base + (f"({','.join(args)})" if args else "")
    if spec.params is Params.CUTOFFS and value is not None:
        return f"{name}@{value}"
    if spec.params is Params.FRACTIONS and value is not None:
        return f"{name}@{value:g}"
    if value is not None and spec.params is not Params.NONE:
        return f"{name}_{value}"
    return name


# ---------------------------------------------------------------- parameter parsing

_ATOL = re.compile(r"^\s*([+-]?\d+)")
_ATOF = re.compile(r"^\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.I)


def atol(text: str) -> int:
    m = _ATOL.match(text)
    return int(m.group(1)) if m else 0


def atof(text: str) -> float:
    m = _ATOF.match(text)
    return float(m.group(1)) if m else 0.0


def parse_params(spec: MeasureSpec, text: str | None) -> tuple[Any, ...]:
    """Parameter values from trec_eval's text (None = the measure's default)."""
    if spec.params is Params.NONE:
        if text:
            raise MeasureError(f"measure {spec.name} takes no parameters (got {text!r})")
        return ()
    raw = spec.default if text is None else text
    parts = raw.split(",") if raw else []
    if spec.params is Params.CUTOFFS:
        return _checked_cutoffs(spec, sorted(atol(p) for p in parts))
    if spec.params is Params.FRACTIONS:
        values = sorted(atof(p) for p in parts)
        if len(set(values)) != len(values):
            raise CutoffError(f"measure {spec.name}: duplicate cutoffs detected in {raw!r}")
        return tuple(values)
    if spec.params is Params.FRACTION_LIST:
        return tuple(atof(p) for p in parts)
    if spec.params is Params.NUMBER:
        return (atof(raw),)
    if spec.params is Params.DEPTH:
        return (atol(raw),)
    if spec.params is Params.UTILITY:
        if len(parts) != 4:
            raise CoefficientError(
                f"utility needs exactly four coefficients a,b,c,d (got {raw!r}), "
                "e.g. -m utility.1,-1,0,0"
            )
        return tuple(atof(p) for p in parts)
    if spec.params is Params.GAINS:
        return tuple(_pairs(spec, parts))
    if spec.params is Params.RBP:
        p = 0.9
        gains = []
        for name, value in _named(parts):
            if name == "p":
                p = atof(value)
            elif _is_int(name):
                gains.append((atol(name), atof(value)))
        return (p, tuple(gains))
    raise AssertionError(spec.params)  # pragma: no cover


def _checked_cutoffs(spec: MeasureSpec, values: list[int]) -> tuple[int, ...]:
    if any(v <= 0 for v in values):
        raise CutoffError(f"measure {spec.name}: negative cutoff detected; cutoffs must be >= 1")
    if len(set(values)) != len(values):
        raise CutoffError(f"measure {spec.name}: duplicate cutoffs detected")
    return tuple(values)


def _named(parts: list[str]) -> list[tuple[str, str]]:
    out = []
    for p in parts:
        name, eq, value = p.partition("=")
        if eq:
            out.append((name.strip(), value))
    return out


def _pairs(spec: MeasureSpec, parts: list[str]) -> list[tuple[int, float]]:
    out = []
    for name, value in _named(parts):
        if not _is_int(name):
            raise MeasureError(f"measure {spec.name}: gain pairs look like 2=9, not {name}={value}")
        out.append((atol(name), atof(value)))
    return out


def _is_int(text: str) -> bool:
    return bool(re.fullmatch(r"[+-]?\d+", text.strip()))


def merge_cutoffs(*groups: tuple[Any, ...]) -> tuple[Any, ...]:
    """Union of cutoff lists (ir_measures requests add to a trec_eval list)."""
    return tuple(sorted({v for g in groups for v in g}))
