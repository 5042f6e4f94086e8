"""Reading measure names: trec_eval `-m` strings, output names, and ir_measures strings.

trec_eval: `P`, `P.5,10`, `ndcg_cut.5,10`, `ndcg.1=3,2=9`, `all_trec`, `official`. As in
trec_eval, only the first `-m` with parameters counts for a measure (`-m P.5 -m P.10` gives
P_5 only). Output names (`P_5`, `ndcg_cut_10`, `iprec_at_recall_0.10`) and ir_measures
strings (`nDCG@10`, `P(rel=2)@5`, `AP`, `R@1000`, `Judged@10`) add their cutoffs instead.
Every measure ranks in trec_eval's order; `Judged(ties=asc)@10` is ir_measures' Judged@10,
which breaks score ties by doc_id ascending instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pooling.errors import MeasureError
from pooling.measures.intent_aware import ALPHA, BETA, check_setting
from pooling.measures.registry import NICKNAMES, ORDER, REGISTRY
from pooling.measures.spec import (
    Measure,
    MeasureSpec,
    Params,
    atof,
    atol,
    merge_cutoffs,
    parse_params,
)


class UnknownMeasureError(MeasureError):
    """A name that is neither a trec_eval measure nor an ir_measures string we know."""


_IR = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_]*)(?:\((?P<args>[^)]*)\))?(?:@(?P<k>[0-9]*\.?[0-9]+))?$"
)
# ir_measures base name -> (registry name without a cutoff, registry name with one)
_IR_NAMES: dict[str, tuple[str | None, str | None]] = {
    "P": (None, "P"),
    "R": (None, "recall"),
    "AP": ("map", "map_cut"),
    "nDCG": ("ndcg", "ndcg_cut"),
    "RR": ("recip_rank", "RR"),
    "Success": (None, "success"),
    "IPrec": (None, "iprec_at_recall"),
    "Judged": (None, "Judged"),
    "ERR": (None, "ERR"),
    "CG": (None, "CG"),
    "DCG": (None, "DCG"),
    "Rprec": ("Rprec", None),
    "Bpref": ("bpref", None),
    "infAP": ("infAP", None),
    "NumRet": ("num_ret", None),
    "NumRel": ("num_rel", None),
    "NumRelRet": ("num_rel_ret", None),
    "NumQ": ("num_q", None),
    "SetP": ("set_P", None),
    "SetR": ("set_recall", None),
    "SetAP": ("set_map", None),
    "SetF": ("set_F", None),
    "RBP": ("rbp", None),
    "Fallout": (None, "Fallout"),
    "set_fallout": ("set_fallout", None),
}
# Diversity measures: ndeval's names and ir_measures' spellings -> registry name
_INTENT_NAMES: dict[str, str] = {
    **{n: n for n in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "NRBP", "nNRBP",
                      "MAP-IA", "P-IA", "strec")},
    "ERR_IA": "ERR-IA", "nERR_IA": "nERR-IA", "alpha_DCG": "alpha-DCG", "α_DCG": "alpha-DCG",
    "α-DCG": "alpha-DCG", "alpha_nDCG": "alpha-nDCG", "α_nDCG": "alpha-nDCG",
    "α-nDCG": "alpha-nDCG", "AP_IA": "MAP-IA", "MAP_IA": "MAP-IA", "P_IA": "P-IA",
    "StRecall": "strec",
}
_INTENT = re.compile(r"^(?P<name>[^\s(@]+)(?:\((?P<args>[^)]*)\))?(?:@(?P<k>[0-9]+))?$")
_SETTING_DEFAULTS = {"alpha": ALPHA, "beta": BETA}


@dataclass
class _Request:
    spec: MeasureSpec
    text: str | None = None  # trec_eval parameter text
    first_wins: bool = False  # a trec_eval `-m` (its first parameterised form counts)
    cutoffs: tuple[Any, ...] = ()
    rel: int | None = None


@dataclass
class _Group:
    spec: MeasureSpec
    rel: int | None
    text: str | None = None
    whole: bool = False  # asked for with its own (or default) parameter list
    cutoffs: list[Any] = field(default_factory=list)


def parse_measures(names: Iterable[str]) -> list[Measure]:
    """Resolve measure strings into distinct measures, in trec_eval's output order."""
    groups: dict[tuple[str, int | None], _Group] = {}
    for name in names:
        for req in _parse_one(name.strip()):
            settings = req.text if req.spec.settings else None  # alpha=0.3: another measure
            key = (req.spec.name, req.rel, settings)
            group = groups.setdefault(key, _Group(req.spec, req.rel, settings))
            if req.cutoffs:
                group.cutoffs.extend(req.cutoffs)
            else:
                group.whole = True
                if req.text is not None and group.text is None:
                    group.text = req.text
    measures = [_build(g) for g in groups.values()]
    return sorted(measures, key=lambda m: (ORDER[m.spec.name], m.rel is not None, m.rel or 0))


def _build(group: _Group) -> Measure:
    spec = group.spec
    if spec.rel_info == "subtopics":  # param_text holds alpha / beta, never cutoffs
        base = parse_params(spec, None) if group.whole and spec.params is Params.CUTOFFS else ()
        return Measure(spec, group.text, merge_cutoffs(base, tuple(group.cutoffs)), group.rel)
    if spec.params in (Params.CUTOFFS, Params.FRACTIONS):
        base = parse_params(spec, group.text) if group.whole else ()
        extra = tuple(group.cutoffs)
        if spec.params is Params.CUTOFFS and any(k <= 0 for k in extra):
            raise MeasureError(f"{spec.name}: cutoffs must be >= 1")
        return Measure(spec, group.text, merge_cutoffs(base, extra), group.rel)
    return Measure(spec, group.text, parse_params(spec, group.text), group.rel)


def _parse_one(name: str) -> list[_Request]:
    if not name:
        raise UnknownMeasureError("empty measure name")
    if name in NICKNAMES:
        return [_Request(REGISTRY[n], first_wins=True) for n in NICKNAMES[name]]
    intent = _parse_intent(name)
    if intent is not None:
        return [intent]
    if "@" in name or "(" in name:
        return [_parse_ir(name)]
    base, dot, params = name.partition(".")
    spec = REGISTRY.get(base)
    if spec is not None and spec.trec:
        return [_Request(spec, params if dot and params else None, first_wins=True)]
    output = _parse_output_name(name)
    if output is not None:
        return [output]
    if name in _IR_NAMES and _IR_NAMES[name][0] is not None:
        return [_parse_ir(name)]
    raise UnknownMeasureError(
        f"unknown measure {name!r}; `pooling measures` lists every measure and its spellings"
    )


def _parse_output_name(name: str) -> _Request | None:
    """`P_5`, `ndcg_cut_10`, `iprec_at_recall_0.10`: one column of a cutoff measure."""
    base, _, value = name.rpartition("_")
    spec = REGISTRY.get(base)
    if spec is None or not spec.trec or not value:
        return None
    if spec.params is Params.CUTOFFS and value.isdigit():
        return _Request(spec, cutoffs=(int(value),))
    if spec.params is Params.FRACTIONS and re.fullmatch(r"\d*\.?\d+", value):
        return _Request(spec, cutoffs=(float(value),))
    return None


def _parse_ir(name: str) -> _Request:
    m = _IR.match(name)
    if not m or m.group("name") not in _IR_NAMES:
        raise UnknownMeasureError(
            f"unknown measure {name!r}; `pooling measures` lists every measure and its spellings"
        )
    plain, with_cutoff = _IR_NAMES[m.group("name")]
    args = _ir_args(name, m.group("args"))
    k = m.group("k")
    if m.group("name") == "AP" and args.pop("denom", None) == "minrk":
        plain, with_cutoff = None, "AP_minrk"
    if m.group("name") == "nDCG" and args.pop("dcg", None) == "exp-log2":
        plain, with_cutoff = None, "nDCG_exp"
    if m.group("name") == "Judged" and "ties" in args:
        ties = args.pop("ties")
        if ties not in ("asc", "desc"):
            raise MeasureError(f"{name!r}: ties is asc (ir_measures' order) or desc (trec_eval's, "
                               "the default)")
        if ties == "asc":
            plain, with_cutoff = None, "Judged_ties_asc"
    target = with_cutoff if k is not None else plain
    if target is None:
        need = "needs a cutoff, e.g. @10" if k is None else "takes no cutoff"
        raise MeasureError(f"measure {name!r} {need}")
    spec = REGISTRY[target]
    rel = None
    if "rel" in args:
        if not spec.uses_level:
            raise MeasureError(f"{name!r}: {spec.name} does not depend on the relevance level")
        rel = atol(args.pop("rel"))
        if rel < 1:
            raise MeasureError(f"{name!r}: rel must be >= 1")
    text = None
    if spec.name == "rbp" and "p" in args:
        text = f"p={args.pop('p')}"
    if spec.name == "set_F" and "beta" in args:
        text = args.pop("beta")
    if args:
        raise MeasureError(f"{name!r}: unsupported parameter(s) {', '.join(sorted(args))}")
    if k is None:
        return _Request(spec, text=text, rel=rel)
    cutoff: Any = atof(k) if spec.params is Params.FRACTIONS else int(atof(k))
    return _Request(spec, cutoffs=(cutoff,), rel=rel)


def _parse_intent(name: str) -> _Request | None:
    """A diversity measure (`alpha-nDCG@20`, `alpha_nDCG(alpha=0.3)@20`, `NRBP(beta=0.8)`,
    `ndeval`'s names or ir_measures'), or None when the name is not one."""
    m = _INTENT.match(name)
    if not m or m.group("name") not in _INTENT_NAMES:
        return None
    spec = REGISTRY[_INTENT_NAMES[m.group("name")]]
    args = _ir_args(name, m.group("args"))
    rel = None
    if "rel" in args:
        rel = atol(args.pop("rel"))
        if rel < 1:
            raise MeasureError(f"{name!r}: rel must be >= 1")
    given = {}
    for key in spec.settings:
        if key in args:
            value = atof(args.pop(key))
            check_setting(key, value)
            if value != _SETTING_DEFAULTS[key]:
                given[key] = value
    if args:
        takes = ", ".join((*spec.settings, "rel"))
        raise MeasureError(f"{name!r}: unsupported parameter(s) {', '.join(sorted(args))}; "
                           f"{spec.name} takes {takes}")
    text = ",".join(f"{k}={v!r}" for k, v in given.items()) or None
    k = m.group("k")
    if k is None:
        return _Request(spec, text=text, rel=rel)
    if spec.params is not Params.CUTOFFS:
        raise MeasureError(f"measure {name!r} takes no cutoff")
    if int(k) < 1:
        raise MeasureError(f"{name!r}: cutoffs must be >= 1")
    return _Request(spec, text=text, cutoffs=(int(k),), rel=rel)


def _ir_args(name: str, text: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        if not eq:
            raise MeasureError(f"{name!r}: parameters look like rel=2")
        out[key.strip()] = value.strip().strip("'\"")
    return out
