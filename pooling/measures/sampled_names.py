"""Names of the measures read from sampled qrels: sample_eval.pl's own, plus statAP.

Output names are the script's: `infAP`, `infNDCG`, `iP10`, `iprec@rec0.50`, `inum_rel_ret`,
`inum_rel`, `num_ret`; and `statAP`. Accepted spellings: those names, `xinfAP` (the SIGIR 2008
name of the stratified infAP), ir_measures-style `iP@20` and `IPrec@0.5`, `iP` alone (the
script's cut-offs 10, 50, 1000) and `iprec_at_recall` alone (its 11 levels). `sample_eval`
asks for everything the script prints, in its order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pooling.measures.inferred import PRECISION_CUTOFFS, RECALL_LEVELS
from pooling.measures.names import UnknownMeasureError
from pooling.measures.spec import Kind

# Base measures in the order their lines print (the script's summary order, statAP last).
BASES = ("infAP", "infNDCG", "iprec@rec", "iP", "inum_rel_ret", "inum_rel", "num_ret", "statAP")
DESCRIPTIONS = {
    "infAP": "xinfAP: average precision inferred from a stratified sample (sample_eval.pl).",
    "infNDCG": "nDCG inferred from a stratified sample (sample_eval.pl).",
    "iprec@rec": "Inferred interpolated precision at recall 0.0, 0.1, ... 1.0 (mean over topics).",
    "iP": "Inferred precision at k (sample_eval.pl: 10, 50, 1000).",
    "inum_rel_ret": "Estimated relevant documents retrieved (summed over topics in `all`).",
    "inum_rel": "Estimated relevant documents (summed over every qrels topic in `all`).",
    "num_ret": "Documents retrieved (per topic: run lines; `all`: ranked, at most 1000 a topic).",
    "statAP": "Statistical AP (Pavlu & Aslam 2007): Horvitz-Thompson estimate from the sample.",
}
NICKNAME = "sample_eval"
_ALIASES = {"xinfAP": "infAP", "infAP": "infAP", "infNDCG": "infNDCG", "statAP": "statAP",
            "inum_rel_ret": "inum_rel_ret", "inum_rel": "inum_rel", "num_ret": "num_ret",
            "NumRet": "num_ret"}


@dataclass(frozen=True)
class SampledMeasure:
    """One output value: `iP` with k=20 prints as `iP20`, iprec@rec at 0.5 as `iprec@rec0.50`."""

    base: str
    cutoff: float | None = None

    @property
    def name(self) -> str:
        if self.base == "iP":
            return f"iP{int(self.cutoff or 0)}"
        if self.base == "iprec@rec":
            return f"iprec@rec{self.cutoff or 0.0:4.2f}"
        return self.base

    @property
    def kind(self) -> Kind:
        return Kind.COUNT if self.base == "num_ret" else Kind.FLOAT


def parse_sampled_measures(names: Iterable[str]) -> list[SampledMeasure]:
    """Measure strings -> distinct measures in printing order (cut-offs ascending)."""
    found: set[SampledMeasure] = set()
    for name in names:
        found.update(_parse_one(name.strip()))
    return sorted(found, key=lambda m: (BASES.index(m.base), m.cutoff or 0.0))


def _parse_one(name: str) -> list[SampledMeasure]:
    if name == NICKNAME:
        return [SampledMeasure(b) for b in BASES if b not in ("iP", "iprec@rec", "statAP")] + [
            SampledMeasure("iP", float(k)) for k in PRECISION_CUTOFFS] + [
            SampledMeasure("iprec@rec", x) for x in RECALL_LEVELS]
    if name in _ALIASES:
        return [SampledMeasure(_ALIASES[name])]
    if name in ("iP", "iP@k"):
        return [SampledMeasure("iP", float(k)) for k in PRECISION_CUTOFFS]
    if name in ("iprec@rec", "iprec_at_recall", "IPrec"):
        return [SampledMeasure("iprec@rec", x) for x in RECALL_LEVELS]
    m = re.fullmatch(r"iP(?:@|_)?([0-9]+)", name)
    if m and int(m.group(1)) >= 1:
        return [SampledMeasure("iP", float(int(m.group(1))))]
    m = re.fullmatch(r"(?:iprec@rec|iprec_at_recall_|IPrec@)([0-9]*\.?[0-9]+)", name)
    if m:
        level = [x for x in RECALL_LEVELS if abs(x - float(m.group(1))) < 1e-9]
        if not level:
            raise UnknownMeasureError(f"{name!r}: inferred interpolated precision is estimated "
                                      "at recall 0.0, 0.1, ... 1.0 only; pick one of those")
        return [SampledMeasure("iprec@rec", level[0])]
    raise UnknownMeasureError(
        f"unknown measure {name!r} for sampled qrels; use {NICKNAME}, xinfAP (or infAP), "
        "infNDCG, iP@k (or iP10), iprec@rec0.50, inum_rel_ret, inum_rel, num_ret or statAP")
