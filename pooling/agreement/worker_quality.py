"""Each crowd worker's quality: their answers on known-answer (gold) pairs, and with the others.

Input is one row per worker and pair, their current answer (Arrow): assessor_id, query_id,
doc_id, kind ("judge" for a grade; any other kind, e.g. "unjudgeable", is an answer without
a grade), grade, seconds. Gold is (query_id, doc_id, relevance). Every figure is computed
for all workers at once over NumPy columns, so a round of hundreds of workers and 100k
answers is reported in a few tens of milliseconds.

Figures and their intervals (95%):
- accuracy (exact grade) and binary accuracy (relevant = grade >= threshold) on the gold
  pairs the worker graded, with Wilson score intervals (good at small n and near 0 or 1);
- Cohen's kappa against gold; its interval is the Wilson interval of the observed agreement
  po mapped through kappa = (po - pe) / (1 - pe), chance agreement pe held fixed. Closed
  form, so it is the same on every call and costs nothing for hundreds of workers (a
  bootstrap would cost a thousand kappas per worker, and with three gold answers resamples
  little more than the data); unlike the Wald interval of Cohen (1960) it does not shrink
  to a point at perfect agreement. It ignores the uncertainty of pe, so it is a little
  narrow;
- agreement with the others: on each pair the worker graded that others graded too, 1 when
  their grade is the others' most frequent grade, 1/m when m grades tie for most frequent
  (a tie broken at random), averaged over those pairs.
Figures on gold are None until a worker has graded `min_gold` gold pairs (3 by default).
Answers without a grade count in `answers` and `unjudgeable`, never in a figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.agreement.errors import AgreementError
from pooling.agreement.kappa import kappa_from_confusion

Z95 = 1.959963984540054  # the two-sided 95% normal quantile
MIN_GOLD = 3  # gold answers before any figure on gold is shown
MEASURES = ("accuracy", "binary", "kappa")
ANSWER_COLUMNS = ("assessor_id", "query_id", "doc_id", "kind", "grade", "seconds")


@dataclass(frozen=True)
class WorkerQuality:
    """One worker's figures in a round; a figure on gold is None below `min_gold` gold answers."""

    assessor_id: str
    answers: int  # pairs answered (a grade or another answer)
    unjudgeable: int  # answers without a grade ("can't judge")
    gold_answered: int  # gold pairs given a grade
    gold_unjudgeable: int  # gold pairs answered without a grade
    accuracy: float | None
    accuracy_low: float | None
    accuracy_high: float | None
    binary: float | None
    binary_low: float | None
    binary_high: float | None
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    median_seconds: float | None
    shared: int  # graded pairs that other workers graded too
    agreement: float | None  # share agreeing with the others' majority on those pairs

    def figure(self, measure: str) -> tuple[float | None, float | None, float | None]:
        """(value, low, high) of "accuracy", "binary" or "kappa"."""
        if measure not in MEASURES:
            raise AgreementError(f"unknown measure {measure!r}; use one of {', '.join(MEASURES)}")
        return (getattr(self, measure), getattr(self, f"{measure}_low"),
                getattr(self, f"{measure}_high"))


FIELDS = tuple(f.name for f in fields(WorkerQuality))


def wilson_interval(successes: np.ndarray, n: np.ndarray, z: float = Z95
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a proportion, elementwise (nan where n is 0)."""
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denominator = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denominator
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def kappa_interval(counts: np.ndarray, z: float = Z95) -> tuple[float, float, float]:
    """(kappa, low, high) from one confusion matrix: Cohen's kappa, and the Wilson interval of
    the observed agreement po mapped through kappa = (po - pe) / (1 - pe) with the chance
    agreement pe held fixed; nan when kappa is undefined."""
    kappa = kappa_from_confusion(counts)
    (_, low, high) = (v[0] for v in kappa_intervals(np.asarray(counts)[None], z))
    return kappa, float(low), float(high)


def kappa_intervals(confusions: np.ndarray, z: float = Z95
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`kappa_interval` of a stack of confusion matrices (W × K × K) at once: (kappa, low,
    high) arrays, nan where kappa is undefined (no pairs, or all in one grade on both sides)."""
    c = np.asarray(confusions, dtype=np.float64)
    n = c.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        agreeing = np.trace(c, axis1=1, axis2=2)
        po = agreeing / n
        pe = np.einsum("wi,wi->w", c.sum(axis=2), c.sum(axis=1)) / (n * n)
        defined = (n > 0) & (pe < 1)
        kappa = np.where(defined, (po - pe) / (1 - pe), np.nan)
        low, high = wilson_interval(agreeing, n, z)
        low = np.where(defined, np.maximum(-1.0, (low - pe) / (1 - pe)), np.nan)
        high = np.where(defined, np.minimum(1.0, (high - pe) / (1 - pe)), np.nan)
    return kappa, low, high


def _codes(*columns: pa.ChunkedArray | pa.Array) -> list[np.ndarray]:
    """Integer codes of string columns, one shared dictionary (so equal values match)."""
    arrays = [(c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c).cast(pa.string())
              for c in columns]
    encoded = pa.concat_arrays(arrays).dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    out, start = [], 0
    for c in columns:
        out.append(codes[start:start + len(c)])
        start += len(c)
    return out


def _scale(grades: Sequence[int] | None, *seen: np.ndarray) -> np.ndarray:
    """The sorted grades of the scale and of every grade seen (small integers: counted, not
    sorted)."""
    values = np.concatenate([np.asarray(grades or [], dtype=np.int64), *seen])
    if len(values) == 0:
        return values
    low = values.min()
    return np.flatnonzero(np.bincount(values - low)) + low


def _pair_codes(answers: pa.Table, gold: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """One integer per (query_id, doc_id), shared by the answers and the gold."""
    q_a, q_g = _codes(answers["query_id"], gold["query_id"])
    d_a, d_g = _codes(answers["doc_id"], gold["doc_id"])
    width = int(max(d_a.max(initial=0), d_g.max(initial=0))) + 1
    return q_a.astype(np.int64) * width + d_a, q_g.astype(np.int64) * width + d_g


def _gold_of(pair: np.ndarray, gold_pair: np.ndarray, gold_grade: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """(whether each answer's pair is gold, its gold grade or 0)."""
    if len(gold_pair) == 0:
        return np.zeros(len(pair), dtype=bool), np.zeros(len(pair), dtype=np.int64)
    order = np.argsort(gold_pair, kind="stable")
    sorted_pairs, sorted_grades = gold_pair[order], gold_grade[order]
    at = np.minimum(np.searchsorted(sorted_pairs, pair), len(sorted_pairs) - 1)
    on_gold = sorted_pairs[at] == pair
    return on_gold, np.where(on_gold, sorted_grades[at], 0)


def worker_quality(
    answers: pa.Table,
    gold: pa.Table,
    *,
    threshold: int = 1,
    min_gold: int = MIN_GOLD,
    grades: Sequence[int] | None = None,
) -> list[WorkerQuality]:
    """Each worker's figures (see the module), ordered by assessor_id.

    answers: assessor_id, query_id, doc_id, kind, grade, seconds — one row per worker and
    pair. gold: query_id, doc_id, relevance. threshold: the lowest relevant grade for binary
    accuracy. grades: the round's scale for kappa (inferred from the grades seen when None).
    """
    missing = [c for c in ANSWER_COLUMNS if c not in answers.column_names]
    if missing:
        raise AgreementError(f"the answers table lacks column(s) {', '.join(missing)}")
    pair, gold_pair = _pair_codes(answers, gold)
    on_gold, truth = _gold_of(pair, gold_pair,
                              gold["relevance"].to_numpy(zero_copy_only=False).astype(np.int64))
    coded = pa.table({
        "assessor_id": answers["assessor_id"], "pair": pa.array(pair, pa.int64()),
        "gold": pa.array(truth, pa.int64(), mask=~on_gold), "kind": answers["kind"],
        "grade": answers["grade"], "seconds": answers["seconds"]})
    return coded_quality(coded, threshold=threshold, min_gold=min_gold, grades=grades)


def coded_quality(
    coded: pa.Table,
    *,
    threshold: int = 1,
    min_gold: int = MIN_GOLD,
    grades: Sequence[int] | None = None,
) -> list[WorkerQuality]:
    """`worker_quality` from answers whose pairs are numbers and carry their gold grade:
    assessor_id, pair (int64, one per (query_id, doc_id)), gold (the pair's gold grade, null
    when it is not a gold pair), kind, grade, seconds."""
    if min_gold < 1:
        raise AgreementError(f"min_gold must be at least 1, got {min_gold}")
    if coded.num_rows == 0:
        return []
    worker_names = coded["assessor_id"].combine_chunks().dictionary_encode()
    names = worker_names.dictionary.to_pylist()
    worker = worker_names.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    n_workers = len(names)
    pair = coded["pair"].to_numpy(zero_copy_only=False).astype(np.int64)
    on_gold = pc.is_valid(coded["gold"]).to_numpy(zero_copy_only=False)
    truth = pc.fill_null(coded["gold"], 0).to_numpy(zero_copy_only=False).astype(np.int64)
    graded = np.asarray(_equals(coded["kind"], "judge"), dtype=bool)
    grade = coded["grade"].to_numpy(zero_copy_only=False)
    graded &= ~np.isnan(grade.astype(np.float64))
    grade = np.where(graded, np.nan_to_num(grade.astype(np.float64)), 0).astype(np.int64)

    total = np.bincount(worker, minlength=n_workers)
    ungraded = np.bincount(worker[~graded], minlength=n_workers)

    # -- on gold -----------------------------------------------------------------------------
    scored = on_gold & graded
    n_gold = np.bincount(worker[scored], minlength=n_workers)
    gold_ungraded = np.bincount(worker[on_gold & ~graded], minlength=n_workers)
    exact = np.bincount(worker[scored], weights=(grade[scored] == truth[scored]),
                        minlength=n_workers)
    binary = np.bincount(worker[scored], weights=((grade[scored] >= threshold)
                                                  == (truth[scored] >= threshold)),
                         minlength=n_workers)
    acc_low, acc_high = wilson_interval(exact, n_gold)
    bin_low, bin_high = wilson_interval(binary, n_gold)
    scale = _scale(grades, grade[graded], truth[scored])
    k = len(scale)
    confusion = np.zeros((n_workers, k, k), dtype=np.int64)
    np.add.at(confusion, (worker[scored], np.searchsorted(scale, truth[scored]),
                          np.searchsorted(scale, grade[scored])), 1)

    # -- with the others ---------------------------------------------------------------------
    g_pair = pair[graded]
    g_grade = np.searchsorted(scale, grade[graded])
    pair_ids, pair_index = np.unique(g_pair, return_inverse=True)
    votes = np.zeros((len(pair_ids), k), dtype=np.int64)
    np.add.at(votes, (pair_index, g_grade), 1)
    others = votes[pair_index]
    others[np.arange(len(g_grade)), g_grade] -= 1
    n_others = others.sum(axis=1)
    top = others.max(axis=1, initial=0)
    modes = (others == top[:, None]) & (top[:, None] > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        agree = modes[np.arange(len(g_grade)), g_grade] / modes.sum(axis=1)
    shared_rows = n_others > 0
    g_worker = worker[graded]
    shared = np.bincount(g_worker[shared_rows], minlength=n_workers)
    agreeing = np.bincount(g_worker[shared_rows], weights=agree[shared_rows],
                           minlength=n_workers)

    # -- time ---------------------------------------------------------------------------------
    seconds = coded["seconds"].to_numpy(zero_copy_only=False).astype(np.float64)
    timed = ~np.isnan(seconds)
    medians = np.full(n_workers, np.nan)
    if timed.any():
        w_t, s_t = worker[timed], seconds[timed]
        by = np.lexsort((s_t, w_t))
        w_t, s_t = w_t[by], s_t[by]
        starts = np.searchsorted(w_t, np.arange(n_workers))
        ends = np.searchsorted(w_t, np.arange(n_workers), side="right")
        for w in np.flatnonzero(ends > starts):
            medians[w] = float(np.median(s_t[starts[w]:ends[w]]))

    with np.errstate(divide="ignore", invalid="ignore"):
        shown = n_gold >= min_gold
        figures = [np.where(shown, column, np.nan) for column in (
            exact / n_gold, acc_low, acc_high, binary / n_gold, bin_low, bin_high,
            *kappa_intervals(confusion))]
        agreement = np.where(shared > 0, agreeing / shared, np.nan)
    columns = [_floats_or_none(c) for c in (*figures, medians, agreement)]
    figure_rows = list(zip(*columns[:9], strict=True))
    out = [WorkerQuality(names[w], int(total[w]), int(ungraded[w]), int(n_gold[w]),
                         int(gold_ungraded[w]), *figure_rows[w], columns[9][w], int(shared[w]),
                         columns[10][w])
           for w in range(n_workers)]
    return sorted(out, key=lambda q: q.assessor_id)


def _floats_or_none(values: np.ndarray) -> list[float | None]:
    """Python floats, None where nan (a figure not defined or not shown yet)."""
    return [None if v != v else v for v in values.tolist()]


def _equals(column: pa.ChunkedArray, value: str) -> np.ndarray:
    """column == value as a NumPy bool array (null is False)."""
    return pc.fill_null(pc.equal(column, value), False).to_numpy(zero_copy_only=False)


def quality_table(qualities: Sequence[WorkerQuality]) -> pa.Table:
    """The figures as an Arrow table, one row per worker, columns as `WorkerQuality`'s fields."""
    rows = [asdict(q) for q in qualities]
    return pa.table({f: [r[f] for r in rows] for f in FIELDS}, schema=pa.schema(
        [(f, pa.string() if f == "assessor_id" else
          pa.int64() if f in ("answers", "unjudgeable", "gold_answered", "gold_unjudgeable",
                              "shared") else pa.float64()) for f in FIELDS]))


def below_bar(qualities: Sequence[WorkerQuality], measure: str, bar: float
              ) -> list[WorkerQuality]:
    """The workers whose `measure` is confidently below `bar`: the upper bound of its 95%
    interval is below it. A worker with too few gold answers to show a figure is never below.
    """
    found = []
    for q in qualities:
        _, _, high = q.figure(measure)
        if high is not None and high < bar:
            found.append(q)
    return found


def gold_pairs(gold: Mapping[tuple[str, str], int]) -> pa.Table:
    """A gold table (query_id, doc_id, relevance) from a {(query_id, doc_id): grade} mapping."""
    return pa.table({"query_id": pa.array([q for q, _ in gold], pa.string()),
                     "doc_id": pa.array([d for _, d in gold], pa.string()),
                     "relevance": pa.array(list(gold.values()), pa.int64())})
