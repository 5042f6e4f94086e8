"""A replay of triage against the truth: how many of each automatic judge's errors people
catch when they review the judges' pairs in triage order (the `uncertain` strategy's: most
disagreement first with two judges, least sure first with one) rather than in random order.

The pairs are those every judge graded (the strategy's candidates) that the truth grades; with
`unjudged`, also those the truth lacks, counted as that grade (0 for qrels that list mostly
relevant pairs). A judge errs on a pair when its grade is on the other side of the relevance
threshold from the truth's (errors="binary"), or differs from it at all (errors="grade"), and
an error is caught when people review the pair. After reviewing a share of the pairs:

- triage: the errors among the pairs first in triage order. Pairs triage cannot tell apart
  (equal disagreement and sureness) are taken in random order: where a reviewed share cuts
  through such a tie, each of its pairs counts as caught with the same chance (an expected
  value, so no seed or id order sways it);
- random: what reviewing that many pairs in random order catches on average, exactly (each
  pair is reviewed with the same chance);
- best: what the best order could catch (every reviewed pair an error).

by="pairs" reviews one order across topics; by="topic" the same share of each topic's queue,
as a triage round with a per-topic budget does.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from pooling.errors import PoolingError

BY = ("pairs", "topic")
ERRORS = ("binary", "grade")
SHARES = tuple(k / 10 for k in range(1, 11))
COLUMNS = ("judge", "reviewed", "pairs_reviewed", "errors", "caught", "caught_share",
           "random_share", "best_share", "ratio")


class TriageReplayError(PoolingError):
    """A triage replay cannot run as asked."""


@dataclass(frozen=True)
class TriageReplay:
    """Per judge (and, with two judges, `either`: a pair either judge gets wrong) and share of
    pairs reviewed: the errors caught in triage order against random order and the best.

    table: judge, reviewed (share of the pairs), pairs_reviewed, errors (the judge's, over
    all pairs), caught (expected; see the module docstring), caught_share, random_share,
    best_share (shares of the errors; nan without errors), ratio (caught_share /
    random_share). n_pairs: pairs replayed; n_without_truth: pairs the judges graded that
    the truth lacks (left out, or counted as `unjudged`); n_one_judge: pairs only one of two
    judges graded (not candidates).
    """

    judges: tuple[str, ...]
    threshold: int
    errors: str
    by: str
    unjudged: int | None
    n_pairs: int
    n_topics: int
    n_without_truth: int
    n_one_judge: int
    table: pa.Table

    def header(self) -> str:
        """One line saying what was replayed."""
        judged = "both judges graded" if len(self.judges) == 2 else "the judge graded"
        missing = ("" if not self.n_without_truth else
                   f"; {self.n_without_truth:,} without a truth grade "
                   + ("left out" if self.unjudged is None else f"counted as grade {self.unjudged}"))
        kind = (f"relevant or not at grade >= {self.threshold}" if self.errors == "binary"
                else "any grade but the truth's")
        order = "one order over all pairs" if self.by == "pairs" else "each topic's own queue"
        return (f"triage of {', '.join(self.judges)}: {self.n_pairs:,} pairs {judged} in "
                f"{self.n_topics:,} topics{missing}; an error: {kind}; reviewed in {order}; "
                "random: its exact expectation")

    def to_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.table.column_names)
        for row in self.table.to_pylist():
            writer.writerow(["" if isinstance(v, float) and math.isnan(v) else v
                             for v in row.values()])
        return buf.getvalue()

    def render(self) -> str:
        """The table as text: shares as percentages, the ratio to random as ×N."""
        def pct(v: float) -> str:
            return "n/a" if math.isnan(v) else f"{v:.1%}"

        head = ["judge", "reviewed", "pairs", "errors", "caught (triage)", "caught (random)",
                "best possible", "triage / random"]
        rows = [[r["judge"], f"{r['reviewed']:.0%}", f"{r['pairs_reviewed']:,}",
                 f"{r['errors']:,}", pct(r["caught_share"]), pct(r["random_share"]),
                 pct(r["best_share"]), "n/a" if math.isnan(r["ratio"]) else f"{r['ratio']:.2f}x"]
                for r in self.table.to_pylist()]
        widths = [max(len(str(c)) for c in col) for col in zip(head, *rows, strict=True)]
        lines = [self.header(), ""]
        for k, cells in enumerate([head, *rows]):
            lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths, strict=True))))
            if k == 0:
                lines.append("  ".join("-" * w for w in widths))
        return "\n".join(lines) + "\n"


def triage_replay(
    judges: Mapping[str, Any],
    truth: Any,
    *,
    max_grade: int | Sequence[int] | Mapping[str, int | None] | None = None,
    threshold: int = 1,
    unjudged: int | None = None,
    errors: str = "binary",
    by: str = "pairs",
    shares: Sequence[float] = SHARES,
) -> TriageReplay:
    """Replay triage of one or two judges' label sets against `truth` (see the module
    docstring).

    judges: name -> Arrow table or DataFrame of query_id, doc_id, grade (or relevance) and
    optionally probability (the judge's P(relevant)); truth: the same without probability
    (a qrels table). max_grade: each judge's scale 0..N, one N for all, one per judge in
    order, or name -> N (None: not declared; one judge whose every label has a probability
    needs none). Grades off a judge's scale are an error naming the judge and the pairs.
    """
    from pooling.agreement.labels import label_table
    from pooling.strategies import get_strategy
    from pooling.strategies.uncertain import JudgeGrade, triage_key

    names = list(judges)
    if len(names) not in (1, 2) or any("," in n or not n.strip() for n in names):
        raise TriageReplayError(f"triage replays one judge or two, each named without commas; "
                                f"got {', '.join(map(repr, names)) or 'none'}")
    if errors not in ERRORS:
        raise TriageReplayError(f"errors must be {' or '.join(ERRORS)}, not {errors!r}")
    if by not in BY:
        raise TriageReplayError(f"by must be {' or '.join(BY)}, not {by!r}")
    bad = [s for s in shares if not 0 < s <= 1]
    if bad or not shares:
        raise TriageReplayError(f"shares reviewed must lie in (0, 1], got {list(shares) or 'none'}")
    highs = max_grades(names, max_grade)
    given: dict[str, dict[str, dict[str, JudgeGrade]]] = {}
    for name in names:
        table = label_table(judges[name], f"of judge {name}")
        probability = _probabilities(judges[name], name)
        by_topic: dict[str, dict[str, JudgeGrade]] = {}
        for q, d, g in zip(table["query_id"].to_pylist(), table["doc_id"].to_pylist(),
                           table["grade"].to_pylist(), strict=True):
            by_topic.setdefault(q, {})[d] = JudgeGrade(g, probability.get((q, d)), 0, highs[name])
        given[name] = by_topic
    # The strategy puts the grades on their scales and refuses what is off them.
    checked = get_strategy("uncertain", judges=",".join(names)).given(
        judge_grades=given).inputs["judge_grades"]
    reference = label_table(truth, "of the truth")
    true_grade = dict(zip(zip(reference["query_id"].to_pylist(), reference["doc_id"].to_pylist(),
                              strict=True), reference["grade"].to_pylist(), strict=True))
    keys, topics, grades, truth_grades = [], [], [], []
    n_without_truth = n_one_judge = 0
    for q in sorted(set().union(*(checked[n] for n in names))):
        docs = [set(checked[n].get(q, {})) for n in names]
        both = set.intersection(*docs)
        n_one_judge += len(set.union(*docs)) - len(both)
        for d in sorted(both):
            t = true_grade.get((q, d), unjudged)
            if (q, d) not in true_grade:
                n_without_truth += 1
            if t is None:
                continue
            mine = [checked[n][q][d] for n in names]
            keys.append(triage_key(mine))
            topics.append(q)
            grades.append([m.grade for m in mine])
            truth_grades.append(t)
    if not keys:
        raise TriageReplayError(
            "no pair is graded by every judge and by the truth"
            + (f" ({n_without_truth:,} pairs lack a truth grade: with qrels that list mostly "
               "relevant pairs, count them as not relevant with --unjudged 0)"
               if n_without_truth else ""))
    judged = np.array(grades, dtype=np.int64)
    t = np.array(truth_grades, dtype=np.int64)
    if errors == "binary":
        wrong = (judged >= threshold) != (t >= threshold)[:, None]
    else:
        wrong = judged != t[:, None]
    columns = {n: wrong[:, k] for k, n in enumerate(names)}
    if len(names) == 2:
        columns["either"] = wrong.any(axis=1)
    rows = _replay(keys, topics, columns, shares, by)
    return TriageReplay(tuple(names), threshold, errors, by, unjudged, len(keys),
                        len(set(topics)), n_without_truth, n_one_judge,
                        pa.table({c: [r[c] for r in rows] for c in COLUMNS}))


def _replay(keys: list[tuple[float, float]], topics: list[str], wrong: Mapping[str, np.ndarray],
            shares: Sequence[float], by: str) -> list[dict[str, Any]]:
    """The rows of `TriageReplay.table`: per judge and share reviewed."""
    if by == "pairs":
        groups = [list(range(len(keys)))]
    else:
        per_topic: dict[str, list[int]] = {}
        for i, q in enumerate(topics):
            per_topic.setdefault(q, []).append(i)
        groups = list(per_topic.values())
    ordered = [sorted(members, key=lambda i: keys[i]) for members in groups]
    rows = []
    for name, errs in wrong.items():
        total = int(errs.sum())
        for share in shares:
            reviewed = caught = expected = best = 0.0
            for members in ordered:
                n = len(members)
                k = int(math.floor(share * n + 0.5))
                caught += _caught_in_order([keys[i] for i in members], errs[members], k)
                e = float(errs[members].sum())
                expected += e * k / n
                best += min(k, e)
                reviewed += k
            rows.append({
                "judge": name, "reviewed": float(share), "pairs_reviewed": int(reviewed),
                "errors": total, "caught": caught,
                "caught_share": caught / total if total else math.nan,
                "random_share": expected / total if total else math.nan,
                "best_share": best / total if total else math.nan,
                "ratio": caught / expected if expected else math.nan,
            })
    return rows


def _caught_in_order(keys: list[tuple[float, float]], errs: np.ndarray, k: int) -> float:
    """Errors among the first k of pairs sorted by key, a tie cut by k counting each of its
    errors with the share of the tie that is taken."""
    caught, start, n = 0.0, 0, len(keys)
    while start < min(k, n):
        end = start
        while end < n and keys[end] == keys[start]:
            end += 1
        taken = min(k, end) - start
        caught += float(errs[start:end].sum()) * taken / (end - start)
        start = end
    return caught


def max_grades(names: list[str], max_grade: Any) -> dict[str, int | None]:
    """Each judge's declared top grade from `max_grade` (one N, one per judge, or name -> N)."""
    if max_grade is None:
        return dict.fromkeys(names)
    if isinstance(max_grade, Mapping):
        unknown = sorted(set(max_grade) - set(names))
        if unknown:
            raise TriageReplayError(f"max_grade names judge(s) {', '.join(unknown)}, who are not "
                                    f"replayed ({', '.join(names)})")
        values = [max_grade.get(n) for n in names]
    elif isinstance(max_grade, int):
        values = [max_grade] * len(names)
    else:
        values = list(max_grade)
        if len(values) != len(names):
            raise TriageReplayError(f"max_grade gives {len(values)} scale(s) for "
                                    f"{len(names)} judge(s); give one, or one per judge")
    if any(v is not None and (isinstance(v, bool) or int(v) < 1) for v in values):
        raise TriageReplayError(f"max_grade must be a whole number from 1 up, got {max_grade!r}")
    return {n: None if v is None else int(v) for n, v in zip(names, values, strict=True)}


def _probabilities(data: Any, name: str) -> dict[tuple[str, str], float]:
    """A label set's non-null probabilities by (query_id, doc_id), when it has the column."""
    table = data if isinstance(data, pa.Table) else pa.Table.from_pandas(data, preserve_index=False)
    if "probability" not in table.column_names:
        return {}
    out = {(str(q), str(d)): float(p) for q, d, p in zip(
        table["query_id"].to_pylist(), table["doc_id"].to_pylist(),
        table["probability"].to_pylist(), strict=True) if p is not None}
    bad = sorted(k for k, p in out.items() if not 0 <= p <= 1)
    if bad:
        shown = ", ".join(f"({q}, {d}) {out[(q, d)]:g}" for q, d in bad[:10])
        raise TriageReplayError(f"judge {name} gave {len(bad)} probabilit(ies) outside [0, 1]: "
                                f"{shown}; a probability of relevance lies in [0, 1]")
    return out
