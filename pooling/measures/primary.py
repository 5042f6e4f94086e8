"""Which measure is primary: the one a ranking command ranks, tests and charts by.

The rule, in one place for every command that ranks runs (leaderboard, report runs,
compare, topic-report, pool-bias, folds, agreement): the primary measure is the first `-m`
as the person gave it, or `--primary M`. A `--primary` not among the `-m` given is added
to them, first, as an IR person expects of `-m P_10 --primary map`: ranked by MAP, P@10
shown beside it. The primary must give one value per run (`P_10`, not `P`).

`parse_measures` keeps trec_eval's output order (what `pooling eval` prints, a drop-in for
trec_eval); these functions keep the order given instead, so `-m ndcg_cut_10 -m P_10`
ranks by nDCG@10 although trec_eval prints P_10 first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pooling.errors import MeasureError
from pooling.measures.names import parse_measures
from pooling.measures.sampled_names import parse_sampled_measures
from pooling.measures.spec import Kind

# Kinds with no per-run number to rank by (runid, the topic count, free text).
_NOT_RANKABLE = (Kind.TEXT, Kind.RUNID, Kind.NUM_Q)


@dataclass(frozen=True)
class RankedMeasures:
    """The value columns to show, in the order given (primary first if --primary added it),
    and the primary column among them."""

    columns: list[str]
    primary: str


def columns_as_given(names: Iterable[str], *, sampled: bool = False) -> list[str]:
    """Canonical value columns of the measure names, in the order the names were given
    (each name's own columns in trec_eval's order), each once, rankable ones only. sampled:
    read the names as sample_eval's measures (`infAP`, `infNDCG`, `statAP`, `iP10`...)."""
    out: list[str] = []
    for name in names:
        if sampled:
            out += [m.name for m in parse_sampled_measures([name]) if m.kind is not Kind.COUNT]
            continue
        for m in parse_measures([name]):
            if m.spec.kind not in _NOT_RANKABLE:
                out += m.columns
    return list(dict.fromkeys(out))


def single_column(name: str, *, sampled: bool = False) -> str:
    """The one value column a measure name gives; an error naming a cutoff to pick if it
    gives several (`P`) or none (`runid`)."""
    columns = columns_as_given([name], sampled=sampled)
    if len(columns) != 1:
        raise MeasureError(
            f"{name!r} gives {len(columns)} values per run; a primary measure needs one: name "
            "one cutoff, e.g. P_10 or ndcg_cut_10")
    return columns[0]


def ranked_measures(names: Iterable[str], primary: str | None = None, *,
                    sampled: bool = False) -> RankedMeasures:
    """The columns to show and the primary among them: `primary` when given (added first if
    the names lack it), else the first column of the first name given. sampled: as for
    `columns_as_given`."""
    columns = columns_as_given(names, sampled=sampled)
    if primary is None:
        if not columns:
            raise MeasureError("no measure with a value per run to rank by; pass e.g. -m map")
        return RankedMeasures(columns, columns[0])
    column = single_column(primary, sampled=sampled)
    if column not in columns:
        columns.insert(0, column)
    return RankedMeasures(columns, column)


def primary_first(names: Iterable[str], primary: str | None = None) -> list[str]:
    """The measure names as given, the primary first: `primary` (added if the names lack
    it, moved to the front if they hold it), else the first name. The primary must give one
    value per run; with no names and no primary, an error saying to pass one."""
    given = list(names)
    if primary is None:
        if not given:
            raise MeasureError("no measure given; pass e.g. -m map")
        single_column(given[0])
        return given
    column = single_column(primary)
    return [primary, *(n for n in given if columns_as_given([n]) != [column])]
