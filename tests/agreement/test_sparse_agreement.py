"""The sparse agreement report equals the dense, all-pairs one it replaced (dense_reference)
on random data with ties and missing answers, at crowd shapes (each pair judged by K of
many workers), and on the real TREC 2010 crowd; and it never goes over all pairs of a crowd."""

from __future__ import annotations

import csv
import os
from collections import defaultdict

import numpy as np
import pytest
from agreement_data import rating_matrix, same, to_rows
from dense_reference import dense_report

from pooling.agreement import agreement_report, fleiss_kappa, krippendorff_alpha
from pooling.agreement.report import PAIRWISE_MAX_ASSESSORS


def crowd_rows(seed: int, workers: int, pairs: int, k: int, grades: int = 3,
               agree: float = 0.6) -> list[tuple[str, str, str, int]]:
    """Each pair judged by k distinct workers drawn at random (a crowd round's shape)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, grades, pairs)
    rows = []
    for i in range(pairs):
        for w in rng.choice(workers, size=k, replace=False):
            g = truth[i] if rng.random() < agree else rng.integers(0, grades)
            rows.append((f"q{i % 7}", f"d{i:05d}", f"w{w:04d}", int(g)))
    return rows


def assert_same_figures(report, reference, *, pairwise: bool) -> None:
    assert report.assessors == reference["assessors"]
    assert (report.n_shared, report.n_single, report.n_complete) == (
        reference["n_shared"], reference["n_single"], reference["n_complete"])
    for name in ("fleiss_kappa", "alpha_nominal", "alpha_ordinal", "overlap"):
        assert same(getattr(report, name), reference[name], tol=1e-12), name
    mine = {a.assessor: (a.n, a.answers, a.agreement) for a in report.per_assessor}
    assert mine.keys() == reference["per_assessor"].keys()
    for name, (n, answers, agreement) in reference["per_assessor"].items():
        assert mine[name][:2] == (n, answers)
        assert same(mine[name][2], agreement, tol=1e-12)
    if pairwise:
        got = {(p.assessor_a, p.assessor_b): (p.n, p.kappa, p.kappa_linear, p.kappa_quadratic,
                                              p.overlap) for p in report.pairs}
        assert got.keys() == reference["pairs"].keys()
        for key, values in reference["pairs"].items():
            assert got[key][0] == values[0]
            assert all(same(x, y, tol=1e-12) for x, y in zip(got[key][1:], values[1:],
                                                              strict=True))
    else:
        assert report.pairs == ()


@pytest.mark.parametrize("seed", range(12))
def test_few_assessors_with_missing_answers_give_the_dense_figures(seed):
    rng = np.random.default_rng(100 + seed)
    n_raters = int(rng.integers(2, PAIRWISE_MAX_ASSESSORS + 1))
    m = rating_matrix(seed, int(rng.integers(5, 80)), int(rng.integers(2, 5)),
                      float(rng.random()), None, n_raters=n_raters, missing=0.4)
    rows = to_rows(m, seed=seed)
    if len({r[2] for r in rows}) < 2:
        pytest.skip("the draw left one assessor")
    grades = [0, 1, 2, 3, 4, 6]  # 5 unused, 6 beyond: both move weighted kappa's distances
    try:
        reference = dense_report(rows, grades=grades, threshold=1)
    except Exception as exc:  # noqa: BLE001 - the draw may leave nothing shared
        pytest.skip(f"no shared pair in the draw: {exc}")
    if reference["n_shared"] == 0:
        pytest.skip("no shared pair in the draw")
    report = agreement_report(rows, grades=grades, threshold=1)
    assert report.pairwise
    assert_same_figures(report, reference, pairwise=True)


@pytest.mark.parametrize(("seed", "workers", "k"), [(1, 40, 3), (2, 150, 3), (3, 60, 5),
                                                    (4, 300, 2)])
def test_a_crowd_gives_the_dense_figures_without_a_pairwise_table(seed, workers, k):
    rows = crowd_rows(seed, workers, 400, k)
    rows += [("q0", "single", "w0000", 2)]  # a pair judged once: not compared
    report = agreement_report(rows, grades=[0, 1, 2])
    assert len(report.assessors) > PAIRWISE_MAX_ASSESSORS and not report.pairwise
    assert report.n_single == 1
    assert_same_figures(report, dense_report(rows, grades=[0, 1, 2], pairwise=False),
                        pairwise=False)


def test_ties_everywhere_leave_kappa_undefined_but_agreement_whole():
    rows = [("q", f"d{i}", f"w{(i + j) % 20}", 1) for i in range(30) for j in range(3)]
    report = agreement_report(rows)
    assert np.isnan(report.fleiss_kappa) and np.isnan(report.alpha_nominal)
    assert all(a.agreement == 1.0 and np.isnan(a.kappa) for a in report.per_assessor)
    assert_same_figures(report, dense_report(rows, pairwise=False), pairwise=False)


def test_each_assessors_agreement_takes_fleiss_kappa_apart():
    """Weighted by their answers' pairs, the assessors' agreement is Fleiss' P̄ (equal K)."""
    rows = crowd_rows(7, 80, 300, 3)
    report = agreement_report(rows)
    p_e = _chance(rows)
    p_bar = sum(a.agreement * a.n for a in report.per_assessor) / sum(
        a.n for a in report.per_assessor)
    assert report.fleiss_kappa == pytest.approx((p_bar - p_e) / (1 - p_e), abs=1e-12)
    for a in report.per_assessor:
        assert a.kappa == pytest.approx((a.agreement - p_e) / (1 - p_e), abs=1e-12)


def test_fleiss_and_alpha_functions_agree_with_the_report_on_a_crowd():
    rows = crowd_rows(8, 500, 600, 3)
    report = agreement_report(rows)
    assert same(fleiss_kappa(rows, unequal="mean"), report.fleiss_kappa, tol=1e-12)
    assert same(krippendorff_alpha(rows, level="ordinal"), report.alpha_ordinal, tol=1e-12)


def _chance(rows) -> float:
    counts = np.bincount([g for *_, g in rows])
    return float(np.sum((counts / counts.sum()) ** 2))


@pytest.mark.shared
def test_the_trec_2010_crowd_gives_the_dense_figures(shared_dir):
    """98,453 labels by 766 workers (a worker's later label of a pair is theirs); the dense
    reference without its all-pairs table, which alone would take minutes; the pairwise view
    on the six busiest workers."""
    path = shared_dir / "data" / "trec2010-rf-crowd" / "trec-rf10-data.txt"
    if not path.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing")
        pytest.skip(f"{path} is missing")
    latest: dict[tuple[str, str, str], int] = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            latest[(row["topicID"], row["docID"], row["workerID"])] = int(row["label"])
    rows = [(q, d, w, g) for (q, d, w), g in latest.items()]
    assert len({w for *_, w, _ in rows}) == 766
    report = agreement_report(rows)
    assert not report.pairwise and len(report.per_assessor) > 600
    assert_same_figures(report, dense_report(rows, pairwise=False), pairwise=False)
    # A handful of the busiest workers keeps the pairwise view, equal to the dense one.
    busiest = sorted(_answers_by(rows).items(), key=lambda kv: -kv[1])[:6]
    few = [r for r in rows if r[2] in {w for w, _ in busiest}]
    assert_same_figures(agreement_report(few), dense_report(few), pairwise=True)


def _answers_by(rows) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for *_, w, _ in rows:
        out[w] += 1
    return out
