"""Statistics over a (topics × runs) score matrix: intervals, paired tests, corrections, groups.

`scores` is float64[n_topics, n_runs], one column per run, the same topics in every column.
Pairs are the upper triangle (i < j) in column order, as `pair_indices` returns them. Every
random procedure takes a seed and gives the same answer for the same seed; all of them are
vectorised over runs or pairs (one matrix product per block of permutations).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from pooling.leaderboard.errors import LeaderboardError

TESTS = ("t", "randomization", "tukey")
CORRECTIONS = ("holm", "bh", "none")
DEFAULT_PERMUTATIONS = 10_000
_BLOCK = 2_000  # permutations drawn at a time (bounds memory for Tukey's n×m shuffles)
_RTOL = 1e-9  # permuted statistics this close to the observed one count as "as extreme"


def pair_indices(n_runs: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices (i, j), i < j, of every run pair in a fixed order."""
    return np.triu_indices(n_runs, k=1)


def _check(scores: np.ndarray, minimum: int = 2) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2:
        raise LeaderboardError("scores must be a (topics × runs) matrix")
    if scores.shape[0] < minimum:
        raise LeaderboardError(
            f"statistics need at least {minimum} topics, found {scores.shape[0]}; "
            "select more topics"
        )
    return scores


# -- confidence intervals --------------------------------------------------------------


def t_interval(scores: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Student-t interval of each run's mean score over topics: (low, high) per run."""
    from scipy import stats

    scores = _check(scores)
    n = scores.shape[0]
    mean = scores.mean(axis=0)
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * scores.std(axis=0, ddof=1) / np.sqrt(n)
    return mean - half, mean + half


def bootstrap_interval(
    scores: np.ndarray,
    confidence: float = 0.95,
    *,
    resamples: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of each run's mean (topics resampled, the same for all runs).

    A resample with replacement is a vector of counts per topic, so every resample's means
    are one row of `counts @ scores / n`.
    """
    scores = _check(scores)
    n = scores.shape[0]
    means = _bootstrap_counts(n, resamples, seed) @ scores / n
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail], axis=0)
    return low, high


@lru_cache(maxsize=8)
def _bootstrap_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """float64[resamples, n]: how often each topic is drawn in each resample (read-only)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n)) + n * np.arange(resamples)[:, None]
    counts = np.bincount(draws.ravel(), minlength=resamples * n).reshape(resamples, n)
    counts = counts.astype(np.float64)
    counts.flags.writeable = False
    return counts


# -- pairwise tests ----------------------------------------------------------------------


@dataclass(frozen=True)
class PairTests:
    """Per run pair (i < j): mean difference (i − j), the test's p-value, effect sizes.

    d_z: mean difference over the standard deviation of the per-topic differences (paired
    Cohen's d). es_e: mean difference over the residual standard deviation of the two-way
    ANOVA (topics × runs) without replication, Sakai's effect size for Tukey HSD.
    """

    i: np.ndarray
    j: np.ndarray
    diff: np.ndarray
    statistic: np.ndarray  # t for the t-test; the mean difference for the others
    p_value: np.ndarray
    d_z: np.ndarray
    es_e: np.ndarray


def paired_differences(scores: np.ndarray) -> np.ndarray:
    """float64[n_pairs, n_topics]: per-topic score of run i minus run j, for every pair."""
    i, j = pair_indices(scores.shape[1])
    return (scores[:, i] - scores[:, j]).T


def paired_t_test(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided paired t-test for every pair: (t, p), as scipy.stats.ttest_rel computes them."""
    from scipy import stats

    scores = _check(scores)
    d = paired_differences(scores)
    n = d.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = d.mean(axis=1) / np.sqrt(d.var(axis=1, ddof=1) / n)
    return t, 2 * stats.t.sf(np.abs(t), n - 1)


def randomization_test(
    scores: np.ndarray, *, permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0
) -> np.ndarray:
    """Two-sided paired randomization test (Fisher; Smucker et al. 2007) for every pair.

    Each permutation swaps the two runs' scores on a random subset of topics, i.e. flips the
    sign of those topics' differences; one sign matrix serves all pairs, so a block of
    permutations is a single matrix product. p = (1 + #{|permuted| ≥ |observed|}) / (B + 1).
    """
    scores = _check(scores)
    d = paired_differences(scores)
    n = d.shape[1]
    observed = np.abs(d.mean(axis=1))
    threshold = observed * (1 - _RTOL) - 1e-15
    rng = np.random.default_rng(seed)
    extreme = np.zeros(len(d), dtype=np.int64)
    for size in _blocks(permutations):
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8).astype(np.float64) * 2 - 1
        permuted = np.abs(signs @ d.T) / n  # [size, n_pairs]
        extreme += np.count_nonzero(permuted >= threshold, axis=0)
    return (extreme + 1) / (permutations + 1)


def tukey_hsd_test(
    scores: np.ndarray, *, permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0
) -> np.ndarray:
    """Randomised Tukey HSD (Carterette 2012; Sakai 2014) for every pair.

    Each permutation shuffles the runs' scores within every topic independently and records
    the range (best minus worst mean) over all runs. A pair's p-value is the share of ranges
    at least as large as its observed mean difference, so the whole family's error is
    controlled at once: p = (1 + #{range ≥ |observed|}) / (B + 1).
    """
    scores = _check(scores)
    n, m = scores.shape
    i, j = pair_indices(m)
    means = scores.mean(axis=0)
    observed = np.abs(means[i] - means[j])
    rng = np.random.default_rng(seed)
    ranges = []
    for size in _blocks(permutations):
        block = np.broadcast_to(scores, (size, n, m)).copy()
        rng.permuted(block, axis=2, out=block)
        block_means = block.mean(axis=1)
        ranges.append(block_means.max(axis=1) - block_means.min(axis=1))
    ordered = np.sort(np.concatenate(ranges))
    threshold = observed * (1 - _RTOL) - 1e-15
    extreme = len(ordered) - np.searchsorted(ordered, threshold, side="left")
    return (extreme + 1) / (permutations + 1)


def pair_tests(
    scores: np.ndarray,
    test: str = "t",
    *,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
) -> PairTests:
    """Run one of TESTS on every pair, with mean differences and effect sizes."""
    if test not in TESTS:
        raise LeaderboardError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")
    if permutations < 1:
        raise LeaderboardError(f"permutations must be at least 1 (got {permutations})")
    scores = _check(scores)
    i, j = pair_indices(scores.shape[1])
    d = paired_differences(scores)
    diff = d.mean(axis=1)
    if test == "t":
        statistic, p = paired_t_test(scores)
    elif test == "randomization":
        statistic, p = diff, randomization_test(scores, permutations=permutations, seed=seed)
    else:
        statistic, p = diff, tukey_hsd_test(scores, permutations=permutations, seed=seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        d_z = diff / d.std(axis=1, ddof=1)
        es_e = diff / np.sqrt(residual_variance(scores))
    return PairTests(i, j, diff, statistic, p, d_z, es_e)


def residual_variance(scores: np.ndarray) -> float:
    """V_E of the two-way ANOVA without replication (topic and run effects removed)."""
    n, m = scores.shape
    resid = scores - scores.mean(axis=0) - scores.mean(axis=1, keepdims=True) + scores.mean()
    return float(np.sum(resid * resid) / ((n - 1) * (m - 1))) if n > 1 and m > 1 else float("nan")


def _blocks(total: int):
    done = 0
    while done < total:
        size = min(_BLOCK, total - done)
        yield size
        done += size


# -- multiple-comparison corrections ------------------------------------------------------


def adjust_p_values(p: np.ndarray, method: str = "holm") -> np.ndarray:
    """Holm–Bonferroni (FWER) or Benjamini–Hochberg (FDR) adjusted p-values; NaNs stay NaN."""
    if method not in CORRECTIONS:
        raise LeaderboardError(
            f"unknown correction {method!r}; choose one of {', '.join(CORRECTIONS)}"
        )
    p = np.asarray(p, dtype=np.float64)
    out = np.full_like(p, np.nan)
    finite = np.flatnonzero(~np.isnan(p))
    if method == "none" or len(finite) == 0:
        out[finite] = p[finite]
        return out
    order = finite[np.argsort(p[finite], kind="stable")]
    ps = p[order]
    m = len(ps)
    if method == "holm":
        adjusted = np.maximum.accumulate(ps * np.arange(m, 0, -1))
    else:
        adjusted = np.minimum.accumulate((ps * m / np.arange(1, m + 1))[::-1])[::-1]
    out[order] = np.minimum(adjusted, 1.0)
    return out


# -- ranks and groups ---------------------------------------------------------------------


def significance_matrix(n_runs: int, i: np.ndarray, j: np.ndarray, significant: np.ndarray):
    """bool[n_runs, n_runs], symmetric: the pair differs significantly."""
    out = np.zeros((n_runs, n_runs), dtype=bool)
    out[i, j] = significant
    out[j, i] = significant
    return out


def tied_ranks(means: np.ndarray, significant: np.ndarray) -> np.ndarray:
    """Rank = 1 + the number of runs significantly better; indistinguishable runs share ranks."""
    better = (means[None, :] > means[:, None]) & significant
    return 1 + better.sum(axis=1)


def letter_groups(means: np.ndarray, significant: np.ndarray) -> list[str]:
    """Compact letter display: runs that share a letter are not significantly different.

    Runs are ordered by mean (best first); each letter marks a maximal stretch of that order
    in which no pair differs significantly (the classic underlining of Tukey tables).
    """
    m = len(means)
    order = np.argsort(-means, kind="stable")
    sig = significant[np.ix_(order, order)]
    stretches: list[tuple[int, int]] = []
    for start in range(m):
        end = start
        while end + 1 < m and not sig[start : end + 2, end + 1].any():
            end += 1
        if not any(s <= start and end <= e for s, e in stretches):
            stretches.append((start, end))
    letters = [""] * m
    for k, (s, e) in enumerate(stretches):
        label = _letter(k)
        for pos in range(s, e + 1):
            letters[order[pos]] += label
    return letters


def _letter(k: int) -> str:
    alphabet = string.ascii_lowercase
    return alphabet[k] if k < 26 else alphabet[k // 26 - 1] + alphabet[k % 26]
