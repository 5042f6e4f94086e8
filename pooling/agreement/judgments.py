"""Judgments in, aligned grades out: agreement is keyed by (query_id, doc_id), never by position.

Every statistic in this package starts here. Inputs are converted once into one Arrow table
(`JUDGMENTS_SCHEMA`), then `align` puts the assessors side by side on the pairs they judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.agreement.errors import AgreementError

# One judgment per (query_id, doc_id, assessor).
JUDGMENTS_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("doc_id", pa.string()),
        ("assessor", pa.string()),
        ("grade", pa.int64()),
    ]
)

# Names accepted for our columns: the store's `assessor_id`, qrels' `relevance`.
_ALIASES = {"assessor_id": "assessor", "relevance": "grade"}

_MAX_SHOWN = 10


class _PairCounts:
    """How many pairs one, two or more, or all of the assessors judged, from
    `raters_per_pair`: one rule for the dense and the sparse form."""

    assessors: tuple[str, ...]

    @property
    def raters_per_pair(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def n_shared(self) -> int:
        """Pairs judged by at least two of the assessors: the ones agreement is measured on."""
        return int(np.sum(self.raters_per_pair >= 2))

    @property
    def n_single(self) -> int:
        """Pairs judged by exactly one of the assessors."""
        return int(np.sum(self.raters_per_pair == 1))

    @property
    def n_complete(self) -> int:
        """Pairs judged by every one of the assessors."""
        return int(np.sum(self.raters_per_pair == len(self.assessors)))


@dataclass(frozen=True)
class Alignment(_PairCounts):
    """Assessors side by side on every (query_id, doc_id) pair at least one of them judged.

    `grades[i, j]` is assessor `assessors[j]`'s grade of pair i, NaN where they did not judge it.
    Rows are sorted by (query_id, doc_id). Pairs judged by one assessor only cannot show
    (dis)agreement: every statistic skips them, and `n_single` says how many there were.
    """

    assessors: tuple[str, ...]
    query_id: np.ndarray
    doc_id: np.ndarray
    grades: np.ndarray

    @property
    def raters_per_pair(self) -> np.ndarray:
        return (~np.isnan(self.grades)).sum(axis=1)

    def shared(self) -> np.ndarray:
        """The grades matrix restricted to pairs judged by at least two assessors."""
        return self.grades[self.raters_per_pair >= 2]

    def pair(self, a: str, b: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Grades of `a` and `b` (int64) on the pairs both judged, and those pairs' query_ids."""
        ia, ib = self.index(a), self.index(b)
        if ia == ib:
            raise AgreementError(f"assessor {a!r} was given twice; name two different assessors")
        both = ~np.isnan(self.grades[:, ia]) & ~np.isnan(self.grades[:, ib])
        x = self.grades[both, ia].astype(np.int64)
        y = self.grades[both, ib].astype(np.int64)
        return x, y, self.query_id[both]

    def index(self, name: str) -> int:
        try:
            return self.assessors.index(name)
        except ValueError:
            raise AgreementError(
                f"assessor {name!r} is not among the aligned assessors "
                f"{', '.join(self.assessors)}; check the name or align with it included"
            ) from None


def as_judgments(data: Any) -> pa.Table:
    """Convert judgments to `JUDGMENTS_SCHEMA`: an Arrow table, a pandas DataFrame, or a
    sequence of (query_id, doc_id, assessor, grade) tuples.

    Columns `assessor_id` and `relevance` are accepted for `assessor` and `grade`. Every
    problem found (missing columns, nulls, non-integer grades) is reported at once.
    """
    table = _to_arrow(data)
    present = set(table.column_names)
    table = table.rename_columns(
        [_ALIASES[n] if n in _ALIASES and _ALIASES[n] not in present else n
         for n in table.column_names]
    )
    missing = [n for n in JUDGMENTS_SCHEMA.names if n not in table.column_names]
    if missing:
        raise AgreementError(
            f"judgments lack column(s) {', '.join(missing)}; found {', '.join(table.column_names)}."
            " Expected query_id, doc_id, assessor (or assessor_id), grade (or relevance)"
        )
    problems = []
    columns = []
    for field in JUDGMENTS_SCHEMA:
        col = table.column(field.name)
        nulls = col.null_count
        if nulls:
            problems.append(f"{nulls} row(s) have no {field.name}")
        try:
            columns.append(col.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            expected = "whole numbers" if field.name == "grade" else "text"
            problems.append(f"column {field.name} ({col.type}) should hold {expected}")
            columns.append(None)
    if problems:
        if table.column("grade").null_count:
            hint = "drop rows without a grade (skipped documents) first"
        else:
            hint = "fix these rows and try again"
        raise AgreementError("judgments are not usable: " + "; ".join(problems) + f" — {hint}")
    return pa.Table.from_arrays(columns, schema=JUDGMENTS_SCHEMA)


@dataclass(frozen=True)
class Answers(_PairCounts):
    """The same judgments kept sparse: one entry per answer, coded, pairs sorted by
    (query_id, doc_id). A crowd's 2,000 workers on 20,000 pairs give 60,000 answers but a
    dense pairs × assessors matrix of 40 million cells: every aggregate here is a bincount
    over the answers, so its cost grows with them, never with the square of the workers.

    pair[k], assessor[k], grade[k]: answer k's row in query_id/doc_id, index in assessors
    and grade (int64). Every pair has at least one answer.
    """

    assessors: tuple[str, ...]
    query_id: np.ndarray
    doc_id: np.ndarray
    pair: np.ndarray
    assessor: np.ndarray
    grade: np.ndarray

    @property
    def raters_per_pair(self) -> np.ndarray:
        return np.bincount(self.pair, minlength=len(self.query_id))

    def category_counts(self, scale: np.ndarray) -> np.ndarray:
        """Pairs × grades (ordered `scale`): how many assessors gave each grade to each pair,
        over every pair (the input of Fleiss' kappa and Krippendorff's alpha)."""
        k = len(scale)
        cell = self.pair * k + np.searchsorted(scale, self.grade)
        return np.bincount(cell, minlength=len(self.query_id) * k).reshape(-1, k)

    def subset(self, keep: np.ndarray) -> Answers:
        """The answers where `keep` (a mask over answers) holds; pairs keep their rows."""
        return Answers(self.assessors, self.query_id, self.doc_id, self.pair[keep],
                       self.assessor[keep], self.grade[keep])

    def dense(self) -> Alignment:
        """The pairs × assessors matrix (NaN where an assessor did not judge a pair): for a few
        assessors only; a crowd's would hold pairs × workers cells."""
        grades = np.full((len(self.query_id), len(self.assessors)), np.nan)
        grades[self.pair, self.assessor] = self.grade
        return Alignment(self.assessors, self.query_id, self.doc_id, grades)


def align(
    judgments: Any,
    assessors: Sequence[str] | None = None,
    *,
    on_duplicate: Literal["error", "last"] = "error",
) -> Alignment:
    """Put assessors side by side on the pairs they judged (all assessors when None).

    An `Alignment` passes through unchanged (restricted to `assessors` if given). A repeated
    (query_id, doc_id, assessor) is an error, or with on_duplicate="last" the later row wins.
    """
    if isinstance(judgments, Alignment):
        if on_duplicate not in ("error", "last"):
            raise AgreementError(f"unknown on_duplicate={on_duplicate!r}; use 'error' or 'last'")
        return judgments if assessors is None else _restrict(judgments, assessors)
    return sparse_answers(judgments, assessors, on_duplicate=on_duplicate).dense()


def sparse_answers(
    judgments: Any,
    assessors: Sequence[str] | None = None,
    *,
    on_duplicate: Literal["error", "last"] = "error",
) -> Answers:
    """The judgments as `Answers` (all assessors when None), duplicates treated as by `align`.

    An `Alignment` is turned back into answers; `Answers` pass through (restricted to
    `assessors` if given)."""
    if on_duplicate not in ("error", "last"):
        raise AgreementError(f"unknown on_duplicate={on_duplicate!r}; use 'error' or 'last'")
    if isinstance(judgments, Answers):
        if assessors is None:
            return judgments
        judgments = judgments.dense()
    if isinstance(judgments, Alignment):
        alignment = judgments if assessors is None else _restrict(judgments, assessors)
        pair, who = np.nonzero(~np.isnan(alignment.grades))
        return Answers(alignment.assessors, alignment.query_id, alignment.doc_id, pair, who,
                       alignment.grades[pair, who].astype(np.int64))
    table = as_judgments(judgments)
    q_code, q_names = _sorted_codes(table.column("query_id"))
    d_code, d_names = _sorted_codes(table.column("doc_id"))
    w_code, w_names = _sorted_codes(table.column("assessor"))
    grade = table.column("grade").to_numpy().astype(np.int64)
    names = w_names.tolist()
    if assessors is not None:
        unknown = [a for a in assessors if a not in names]
        if unknown:
            raise AgreementError(
                f"no judgments by assessor(s) {', '.join(map(repr, unknown))}; "
                f"the judgments name {', '.join(map(repr, names)) or 'nobody'}"
            )
        if len(set(assessors)) != len(assessors):
            raise AgreementError("an assessor was named twice; name each assessor once")
        names = list(assessors)
    # Column of each row's assessor among `names`, -1 for assessors not asked for.
    position = {n: i for i, n in enumerate(w_names.tolist())}
    lookup = np.full(len(w_names), -1, dtype=np.int64)
    lookup[[position[n] for n in names]] = np.arange(len(names))
    who_idx = lookup[w_code]
    keep = who_idx >= 0
    # One code per (query_id, doc_id); sorted codes give rows in (query_id, doc_id) order.
    width = max(len(d_names), 1)
    pair_code = q_code[keep] * width + d_code[keep]
    codes, pair_idx = np.unique(pair_code, return_inverse=True)
    pair_idx = pair_idx.reshape(-1)
    who_idx, grade = who_idx[keep], grade[keep]

    cell = pair_idx * len(names) + who_idx
    cells, counts = np.unique(cell, return_counts=True)
    repeated = cells[counts > 1]
    if repeated.size and on_duplicate == "error":
        shown = [
            f"({q_names[codes[c // len(names)] // width]!r}, "
            f"{d_names[codes[c // len(names)] % width]!r}) by {names[c % len(names)]!r}"
            for c in repeated[:_MAX_SHOWN]
        ]
        more = f" (and {repeated.size - _MAX_SHOWN} more)" if repeated.size > _MAX_SHOWN else ""
        raise AgreementError(
            f"{repeated.size} (query_id, doc_id) pair(s) were judged more than once by the same "
            f"assessor: {'; '.join(shown)}{more} — keep one judgment per assessor "
            "(e.g. the latest) or pass on_duplicate='last'"
        )
    if repeated.size:  # on_duplicate="last": keep each cell's last row
        last = len(cell) - 1 - np.unique(cell[::-1], return_index=True)[1]
        pair_idx, who_idx, grade = pair_idx[last], who_idx[last], grade[last]
    return Answers(
        assessors=tuple(names),
        query_id=q_names[codes // width],
        doc_id=d_names[codes % width],
        pair=pair_idx,
        assessor=who_idx,
        grade=grade,
    )


def two_assessors(alignment: Alignment, assessors: Sequence[str] | None) -> tuple[str, str]:
    """The two assessors a pairwise statistic compares: as given, or the only two there are."""
    if assessors is None:
        if len(alignment.assessors) != 2:
            raise AgreementError(
                f"the judgments name {len(alignment.assessors)} assessors "
                f"({', '.join(alignment.assessors)}); pass assessors=(a, b) to choose two"
            )
        return alignment.assessors[0], alignment.assessors[1]
    if len(assessors) != 2:
        raise AgreementError(f"a pairwise statistic compares two assessors, got {len(assessors)}")
    return assessors[0], assessors[1]


def grade_scale(observed: np.ndarray, grades: Sequence[int] | None) -> np.ndarray:
    """The ordered grade scale: `grades` if given (checked to cover the data), else those used."""
    used = np.unique(observed[~np.isnan(observed)] if observed.dtype.kind == "f" else observed)
    if grades is None:
        return used.astype(np.int64)
    scale = np.asarray(sorted(set(int(g) for g in grades)), dtype=np.int64)
    outside = np.setdiff1d(used.astype(np.int64), scale)
    if outside.size:
        raise AgreementError(
            f"grade(s) {', '.join(map(str, outside.tolist()))} are used but not on the given scale "
            f"{scale.tolist()}; add them to grades= or fix the judgments"
        )
    return scale


def _to_arrow(data: Any) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, Sequence) and not isinstance(data, str):
        rows = list(data)
        bad = [i for i, r in enumerate(rows) if len(r) != 4]
        if bad:
            raise AgreementError(
                f"judgment row(s) {bad[:_MAX_SHOWN]} do not have 4 fields; each row must be "
                "(query_id, doc_id, assessor, grade)"
            )
        cols = list(zip(*rows, strict=True)) if rows else [[], [], [], []]
        keys = [[None if v is None else str(v) for v in c] for c in cols[:3]]
        grades = pa.array(list(cols[3])) if rows else pa.array([], pa.int64())
        return pa.table(
            [pa.array(k, pa.string()) for k in keys] + [grades], names=JUDGMENTS_SCHEMA.names
        )
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return pa.Table.from_pandas(data, preserve_index=False)
    raise AgreementError(
        f"cannot read judgments from a {type(data).__name__}; pass an Arrow table, a pandas "
        "DataFrame or a list of (query_id, doc_id, assessor, grade) tuples"
    )


def _sorted_codes(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's index among the column's distinct values sorted, and those values (object)."""
    encoded = column.combine_chunks().dictionary_encode()
    dictionary = encoded.dictionary
    order = np.asarray(pc.sort_indices(dictionary))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    codes = rank[np.asarray(encoded.indices, dtype=np.int64)]
    values = np.array(dictionary.take(pa.array(order)).to_pylist(), dtype=object)
    return codes, values


def keyed_values(data: Any, value: str) -> dict[tuple[str, str], float]:
    """A (query_id, doc_id) -> value mapping from a mapping, a table or DataFrame with columns
    query_id, doc_id and `value`, or (query_id, doc_id, value) triples. Keys must not repeat."""
    if isinstance(data, dict):
        return {(str(k[0]), str(k[1])): float(v) for k, v in data.items()}
    if isinstance(data, Sequence) and not isinstance(data, str):
        rows = list(data)
        cols = list(map(list, zip(*rows, strict=True))) if rows else [[], [], []]
        table = pa.table({"query_id": cols[0], "doc_id": cols[1], value: cols[2]})
    else:
        table = _to_arrow(data)
    missing = [n for n in ("query_id", "doc_id", value) if n not in table.column_names]
    if missing:
        raise AgreementError(
            f"table lacks column(s) {', '.join(missing)}; expected query_id, doc_id, {value}"
        )
    if table.column(value).null_count:
        raise AgreementError(f"some rows have no {value}; drop them or fill them in")
    out: dict[tuple[str, str], float] = {}
    qs = table.column("query_id").to_pylist()
    ds = table.column("doc_id").to_pylist()
    vs = table.column(value).to_pylist()
    for q, d, v in zip(qs, ds, vs, strict=True):
        key = (str(q), str(d))
        if key in out:
            raise AgreementError(f"{key} has more than one {value}; keep one per pair")
        out[key] = float(v)
    return out


def _restrict(alignment: Alignment, assessors: Sequence[str]) -> Alignment:
    idx = [alignment.index(a) for a in assessors]
    if len(set(idx)) != len(idx):
        raise AgreementError("an assessor was named twice; name each assessor once")
    grades = alignment.grades[:, idx]
    judged = ~np.isnan(grades).all(axis=1)
    return Alignment(
        assessors=tuple(assessors),
        query_id=alignment.query_id[judged],
        doc_id=alignment.doc_id[judged],
        grades=grades[judged],
    )
