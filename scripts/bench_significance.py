"""Benchmark: the leaderboard's permutation tests at the counts the rule chooses.

40 generated runs x 50 topics (means 0.06 to 0.32, a shared topic effect): the paired
randomization test with Holm's correction draws 20 x 780 / 0.05 = 312,000 permutations per
pair; Tukey HSD draws 10,000 for the family. Printed side by side: our test with early
stopping, the same test drawing every permutation, and the peer, scipy.stats.permutation_test
(paired samples, vectorised) on a 24-pair sample at the same count, scaled to 780 pairs.
Usage: .venv/bin/python scripts/bench_significance.py
"""

from __future__ import annotations

import time

import numpy as np
from rich.table import Table
from scipy import stats as sp

from pooling.leaderboard import stats
from pooling.terminal.console import Console


def scores(n_topics: int = 50, n_runs: int = 40, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    means = np.linspace(0.32, 0.06, n_runs)
    topic = 0.12 * rng.standard_normal((n_topics, 1))
    return np.clip(means + topic + 0.08 * rng.standard_normal((n_topics, n_runs)), 0, 1)


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    x = scores()
    pairs = x.shape[1] * (x.shape[1] - 1) // 2
    plan = stats.permutation_plan("randomization", pairs, alpha=0.05, correction="holm")
    early_s, early = timed(lambda: stats.randomization_test(
        x, permutations=plan.count, seed=0, alpha=0.05, correction="holm"))
    full_s, _ = timed(lambda: stats.randomization_test(x, permutations=plan.count, seed=0))
    tukey_s, _ = timed(lambda: stats.pair_tests(x, "tukey", alpha=0.05, correction="none"))

    sample = 24
    i, j = stats.pair_indices(x.shape[1])

    def scipy_pairs() -> None:
        for a, b in zip(i[:sample], j[:sample], strict=True):
            sp.permutation_test((x[:, a], x[:, b]), lambda u, v, axis: np.mean(u - v, axis=axis),
                                permutation_type="samples", vectorized=True,
                                n_resamples=plan.count, random_state=0)

    scipy_s, _ = timed(scipy_pairs)
    scipy_all = scipy_s * pairs / sample

    table = Table(title=f"40 runs x 50 topics, {pairs} pairs, {plan.count:,} permutations per pair "
                  f"(smallest Holm-corrected p {plan.floor:.4f})")
    for column in ("test", "seconds", "vs scipy"):
        table.add_column(column, justify="right" if column != "test" else "left")
    table.add_row("randomization, early stopping", f"{early_s:.2f}", f"{scipy_all / early_s:.0f}x faster")
    table.add_row("randomization, every permutation", f"{full_s:.2f}", f"{scipy_all / full_s:.0f}x faster")
    table.add_row(f"scipy permutation_test ({sample} pairs timed, scaled)", f"{scipy_all:.1f}", "1x")
    table.add_row("Tukey HSD, 10,000 permutations", f"{tukey_s:.2f}", "")
    Console().print(table)
    drawn = float(np.sum(early.draws)) / (plan.count * pairs)
    Console().print(f"early stopping drew {drawn:.0%} of the permutations")


if __name__ == "__main__":
    main()
