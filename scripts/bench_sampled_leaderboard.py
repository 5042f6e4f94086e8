"""Benchmark: the sampled leaderboard (infAP, infNDCG, statAP with intervals) before and after
scoring each run once per topic over its judged documents only, on the same data in one run.

Data: the real bioCADDIE 2016 sampled qrels (15 topics, 142,805 pooled pairs, 22,805 judged)
and --runs simulated runs of 1,000 documents per topic drawn from the pool, better runs
favouring relevant documents; 200 bootstrap resamples, seed 0, as `pooling leaderboard` draws
on a sampled version. "before" is the previous implementation, kept below verbatim: every
bootstrap replicate accumulated over all 1,000 ranks, once for infAP and again for infNDCG,
each topic's counts summed stratum by stratum and grade by grade, and the ideal DCG added
rank by rank in Python (reading the qrels and runs is the same code in both). Every estimate, variance and interval of the
two must be equal to the last bit; the script fails otherwise.
Usage: .venv/bin/python scripts/bench_sampled_leaderboard.py [--runs 40] [--resamples 200]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np
from rich.table import Table

from pooling.evaluation import sampled as evaluation_sampled
from pooling.evaluation import sampled_intervals
from pooling.leaderboard.sampled import sampled_leaderboard
from pooling.measures import inferred
from pooling.measures.inferred import (
    _DISCOUNT,
    MAX_RESULTS,
    SMOOTH_JUDGED,
    SMOOTH_RELEVANT,
    TopicValues,
)
from pooling.store import Store
from pooling.store.sampled_qrels import import_sampled_qrels_file
from pooling.terminal.console import Console

QRELS = Path("/work/shared/data/biocaddie-2016-sampled/qrels.sampled.txt")


def make_store(folder: Path, n_runs: int, seed: int = 1) -> Path:
    """The sampled qrels and n_runs runs, run k favouring relevant documents more as k grows."""
    by_topic: dict[str, list[tuple[str, int]]] = {}
    for line in QRELS.read_text().splitlines():
        q, _, d, _, r = line.split()
        by_topic.setdefault(q, []).append((d, int(r)))
    rng = np.random.default_rng(seed)
    files = []
    for k in range(n_runs):
        skill = 0.2 + 0.6 * k / max(1, n_runs - 1)
        lines = []
        for q, docs in by_topic.items():
            ids = np.array([d for d, _ in docs])
            rel = np.array([r for _, r in docs])
            score = rng.random(len(ids)) + skill * (rel > 0) + 0.2 * skill * (rel == 0)
            for i, t in enumerate(np.argsort(-score)[:MAX_RESULTS]):
                lines.append(f"{q} Q0 {ids[t]} {i + 1} {MAX_RESULTS - i} run{k:02d}")
        path = folder / f"run{k:02d}.txt"
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    store = folder / "bench.duckdb"
    with Store.create(store) as s:
        import_sampled_qrels_file(s, QRELS, name="bio")
        s.import_runs(files)
    return store


# -- the previous implementation, verbatim ------------------------------------------------------


def _ideal_dcg_before(values, counts):
    total = 0.0
    start = 0
    for g in range(len(values) - 1, -1, -1):
        n = int(counts[g] + 0.5)
        r = start + 1
        while r <= start + n:
            total += values[g] / _DISCOUNT[r] if r < len(_DISCOUNT) else values[g] / (
                math.log(r + 1) / math.log(2))
            if r >= MAX_RESULTS:
                break
            r += 1
        start += n
    return total


def _topic_totals_before(topic, weights):
    """The run-independent part of a topic: judged and relevant counts per stratum, the
    estimated number relevant, the estimated ideal DCG; one row per replicate."""
    n_strata = len(topic.strata)
    judged_w = weights * topic.judged
    relevant_w = weights * (topic.value > 0)
    judged = np.stack([judged_w[:, topic.stratum == h].sum(axis=1) for h in range(n_strata)], 1)
    relevant = np.stack([relevant_w[:, topic.stratum == h].sum(axis=1) for h in range(n_strata)], 1)
    replicates = len(weights)
    num_rel = np.zeros(replicates)
    scale = np.zeros((replicates, n_strata))
    for h in range(n_strata):  # strata in text order, as the script sums them
        ok = judged[:, h] != 0
        scale[ok, h] = topic.pooled[h] / judged[ok, h]
        estimate = np.zeros(replicates)
        estimate[ok] = relevant[ok, h] * topic.pooled[h] / judged[ok, h]
        num_rel = num_rel + estimate
    per_grade = np.zeros((replicates, len(topic.grades)))
    for h in range(n_strata):
        in_h = topic.stratum == h
        for g in range(len(topic.grades)):
            count = weights[:, in_h & (topic.grade == g)].sum(axis=1)
            ok = judged[:, h] != 0
            add = np.zeros(replicates)
            add[ok] = count[ok] * topic.pooled[h] / judged[ok, h]
            per_grade[:, g] = per_grade[:, g] + add
    values = [inferred.perl_number(g) for g in topic.grades]
    ideal = np.array([_ideal_dcg_before(values, per_grade[b]) for b in range(replicates)])
    return inferred.TopicTotals(judged, relevant, num_rel, ideal)


def _infer_topic_before(topic, totals, positions, weights, **_):
    n = len(positions)
    replicates = len(weights)
    if n == 0:
        zero = np.zeros(replicates)
        return TopicValues(zero, zero.copy(), np.zeros((replicates, 0)), 0)
    pooled = positions >= 0
    safe = np.where(pooled, positions, 0)
    stratum = np.where(pooled, topic.stratum[safe], -1)
    value = np.where(pooled, topic.value[safe], -1.0)
    judged = pooled & (value >= 0)
    relevant = value > 0
    mult = np.where(pooled, weights[:, safe], 0.0)  # replicates x n
    rank = np.arange(1, n + 1, dtype=float)
    pool_in = np.cumsum(pooled).astype(float)
    pool_above = pool_in - pooled
    shape = (replicates, n)
    above = np.zeros(shape)
    rel_by_rank = np.zeros(shape)
    sum_prec = []
    gain = []
    n_strata = len(topic.strata)
    docs_in = []
    judged_in = []
    for h in range(n_strata):
        in_h = stratum == h
        d_in = np.cumsum(in_h).astype(float)
        d_above = d_in - in_h
        j_step = mult * (in_h & judged)
        j_in = np.cumsum(j_step, axis=1)
        r_step = mult * (in_h & relevant)
        r_in = np.cumsum(r_step, axis=1)
        share = np.divide(d_above, pool_above, out=np.zeros(n), where=pool_above != 0)
        above = above + share * (r_in - r_step + SMOOTH_RELEVANT) / (j_in - j_step + SMOOTH_JUDGED)
        rel_by_rank = rel_by_rank + d_in * (r_in + SMOOTH_RELEVANT) / (j_in + SMOOTH_JUDGED)
        docs_in.append(d_in[-1])
        judged_in.append(j_in[:, -1])
        sum_prec.append(r_step)
        gain.append(r_step * (np.maximum(value, 0.0) / _DISCOUNT[1:n + 1]))
    precision = 1.0 / rank + (pool_above / rank) * above
    inf_ap = np.zeros(replicates)
    for h in range(n_strata):
        # Accumulated left to right (not pairwise), as the script adds them.
        sap = np.add.accumulate(sum_prec[h] * precision, axis=1)[:, -1]
        judged_h = totals.judged[:, h]
        relevant_h = totals.relevant[:, h]
        ok = (judged_h != 0) & (totals.num_rel != 0)
        estimate = np.divide(relevant_h * topic.pooled[h], judged_h, out=np.zeros(replicates),
                             where=ok)
        share = np.divide(estimate, totals.num_rel, out=np.zeros(replicates), where=ok)
        mean_prec = np.divide(sap, relevant_h, out=np.zeros(replicates), where=relevant_h != 0)
        inf_ap = inf_ap + np.where(ok, share * mean_prec, 0.0)
    dcg = np.zeros(replicates)
    depth = pool_in[-1]
    for h in range(n_strata):
        if depth == 0:
            break
        share = docs_in[h] / depth
        g = np.add.accumulate(gain[h], axis=1)[:, -1]
        dcg = dcg + np.divide(share * g, judged_in[h], out=np.zeros(replicates),
                              where=judged_in[h] != 0)
    ndcg = np.divide(depth * dcg, totals.ideal_dcg, out=np.zeros(replicates),
                     where=totals.ideal_dcg != 0)
    return TopicValues(inf_ap, ndcg, rel_by_rank, n)


def _topic_estimates_before(qrels, runs, measures=sampled_intervals.ESTIMATORS, *,
                            n_bootstrap=200, seed=0, progress=None):
    wanted = [sampled_intervals._canonical(m) for m in measures]
    rng = np.random.default_rng(seed)
    replicates = {}
    if any(m != "statAP" for m in wanted):
        for q, topic in qrels.topics.items():
            w = sampled_intervals.bootstrap_weights(topic, n_bootstrap, rng)
            replicates[q] = (w, _topic_totals_before(topic, w))
    rows = []
    for run in runs:
        scored = sampled_intervals.score_run(qrels, sampled_intervals.rank_run(run))
        for q in scored.query_ids:
            topic = qrels.topics[q]
            for m in wanted:
                if m == "statAP":
                    s = sampled_intervals.statap_topic(topic, scored.positions[q])
                    rows.append((scored.run_id, q, m, s.estimate, s.variance))
                    continue
                point = scored.values[q]
                w, totals = replicates[q]
                boot = _infer_topic_before(topic, totals, scored.positions[q], w)
                values = boot.inf_ap if m == "infAP" else boot.inf_ndcg
                estimate = float((point.inf_ap if m == "infAP" else point.inf_ndcg)[0])
                variance = float(np.var(values, ddof=1)) if len(values) > 1 else 0.0
                rows.append((scored.run_id, q, m, estimate, variance))
    return sampled_intervals.pa.table(list(zip(*rows, strict=True)),
                                      schema=sampled_intervals.TOPIC_SCHEMA)


# -- the benchmark ----------------------------------------------------------------------------


def timed_board(store: Path, resamples: int, before: bool):
    """Seconds and the board, with the previous implementation patched in when before."""
    patches = [mock.patch.object(inferred, "topic_totals", _topic_totals_before),
               mock.patch.object(sampled_intervals, "topic_totals", _topic_totals_before),
               mock.patch.object(evaluation_sampled, "topic_totals", _topic_totals_before),
               mock.patch.object(evaluation_sampled, "infer_topic", _infer_topic_before),
               mock.patch.object(inferred, "infer_topic", _infer_topic_before),
               mock.patch.object(sampled_intervals, "infer_topic", _infer_topic_before),
               mock.patch.object(sampled_intervals, "topic_estimates",
                                 _topic_estimates_before)] if before else []
    for p in patches:
        p.start()
    try:
        with Store(store, read_only=True) as s:
            start = time.perf_counter()
            board = sampled_leaderboard(s, qrels="bio", resamples=resamples, seed=0)
            return time.perf_counter() - start, board
    finally:
        for p in patches:
            p.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = make_store(Path(tmp), args.runs)
        before_s, before = timed_board(store, args.resamples, before=True)
        after_s, after = timed_board(store, args.resamples, before=False)
    a, b = before.table.to_pydict(), after.table.to_pydict()
    differ = [c for c in a if a[c] != b[c]]
    table = Table(title=f"sampled leaderboard: bioCADDIE 2016 sampled qrels, {args.runs} runs x "
                  f"15 topics x 1,000 documents, {args.resamples} resamples, seed 0")
    for column in ("implementation", "seconds", "speed-up"):
        table.add_column(column, justify="left" if column == "implementation" else "right")
    table.add_row("before: every rank, once per estimator", f"{before_s:.1f}", "1.0x")
    table.add_row("after: judged documents only, once per run and topic", f"{after_s:.1f}",
                  f"{before_s / after_s:.1f}x")
    Console().print(table)
    if differ:
        raise SystemExit(f"the boards differ in {', '.join(differ)}")
    Console().print(f"every value of the {len(a['run_id'])} runs' estimates, variances and "
                    "intervals is equal to the last bit")


if __name__ == "__main__":
    main()
