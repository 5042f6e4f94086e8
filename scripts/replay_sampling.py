"""Replay sampled judging on Robust03: how well do xinfAP and statAP estimate MAP?

Topics 601-650 (their depth-125 pool over these 17 runs is judged in full, so the depth-100
pool is too). Per topic, the depth-100 pool of the 17 runs is split into two strata: stratum 1,
the documents some run ranks in its top 5, judged whole; stratum 2, the rest, drawn by simple
random sampling so that the judged total is the rate's share of the pool (a topic whose top-5
stratum alone exceeds the budget is judged at its top 5 only). Judging the top in full is what
NIST did; the top carries most of AP's weight, and a census there removes its variance. Each
sample becomes sampled qrels; each run's MAP is then estimated by xinfAP (sample_eval.pl's) and
statAP and compared with its MAP on the full qrels (trec_eval's map): bias, RMSE and Kendall's
tau between the estimated and the true ranking of the 17 runs.

    python scripts/replay_sampling.py [--samples 50] [--rates 0.1,0.2,0.3] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from pooling.agreement.rankings import kendall_tau
from pooling.evaluation import evaluate
from pooling.evaluation.sampled import load_sampled_qrels, rank_run, score_run
from pooling.evaluation.trec_input import read_qrels, read_run
from pooling.measures.statap import statap_topic

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "trec2003-robust"
TOPICS = [str(t) for t in range(601, 651)]
DEPTH, TOP = 100, 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--rates", default="0.1,0.2,0.3")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    qrels = read_qrels(DATA / "qrels" / "robust03_qrels.txt.gz")
    grades = {(q, d): g for q, d, g in zip(*(qrels[c].to_pylist() for c in
                                                ("query_id", "doc_id", "relevance")), strict=True)}
    runs = [read_run(p) for p in sorted((DATA / "runs").glob("input.*.gz"))]
    keep = pa.array(TOPICS)
    runs = [type(r)(r.table.filter(pa.compute.is_in(r.table["query_id"], keep)), r.run_id, r.source)
            for r in runs]
    names = [r.run_id for r in runs]
    full = evaluate(qrels.filter(pa.compute.is_in(qrels["query_id"], keep)), runs, ["map"])
    truth = {run.run_id: float(run.summary["map"]) for run in full.runs}
    ranked = [rank_run(r) for r in runs]
    pools = _pools(ranked)
    # MAP with only the pool's judgments: what a census of the pool would give. The gap to the
    # full qrels is the pool's own incompleteness, which no estimator from the pool can see.
    in_pool = pa.table({"query_id": [q for q, (p, _) in pools.items() for _ in p],
                        "doc_id": [d for _, (p, _) in pools.items() for d in p],
                        "relevance": [max(grades.get((q, d), 0), 0)
                                      for q, (p, _) in pools.items() for d in p]})
    census = {run.run_id: float(run.summary["map"])
              for run in evaluate(in_pool, runs, ["map"]).runs}
    rng = np.random.default_rng(args.seed)
    rows = []
    started = time.monotonic()
    for rate in rates:
        found = {"xinfAP": [], "statAP": []}
        judged_share = []
        for s in range(args.samples):
            table, share = _sample(pools, grades, rate, rng)
            judged_share.append(share)
            sampled = load_sampled_qrels(table)
            for name, estimates in _estimates(sampled, ranked).items():
                found[name].append([estimates[n] for n in names])
            print(f"\rrate {rate:.0%}: sample {s + 1}/{args.samples} "
                  f"({time.monotonic() - started:.0f} s)", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        true = np.array([truth[n] for n in names])
        pool_true = np.array([census[n] for n in names])
        for name, values in found.items():
            est = np.array(values)
            taus = [kendall_tau(dict(zip(names, row, strict=True)), truth) for row in est]
            rows.append((name, rate, float(np.mean(judged_share)), float(np.mean(est - true)),
                         float(np.sqrt(np.mean((est - true) ** 2))), float(np.mean(taus)),
                         float(np.min(taus)), float(np.mean(est - pool_true)),
                         float(np.sqrt(np.mean((est - pool_true) ** 2)))))
    print(f"census of the depth-{DEPTH} pool against the full qrels: bias "
          f"{np.mean([census[n] - truth[n] for n in names]):+.4f}, tau "
          f"{kendall_tau(census, truth):.3f}")
    print("| estimator | cost | judged | bias | RMSE | tau mean | tau min | bias vs pool census "
          "| RMSE vs pool census |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rate, share, bias, rmse, tau_mean, tau_min, pbias, prmse in rows:
        print(f"| {name} | {rate:.0%} | {share:.1%} | {bias:+.4f} | {rmse:.4f} | {tau_mean:.3f} "
              f"| {tau_min:.3f} | {pbias:+.4f} | {prmse:.4f} |")


def _pools(ranked) -> dict[str, tuple[list[str], set[str]]]:
    """Per topic: the depth-100 pool's documents and those some run has in its top 5."""
    out = {}
    for q in TOPICS:
        pool: dict[str, None] = {}
        top: set[str] = set()
        for run in ranked:
            docs = run.ranked.get(q)
            if docs is None:
                continue
            head = docs.slice(0, DEPTH).to_pylist()
            pool.update(dict.fromkeys(head))
            top.update(head[:TOP])
        out[q] = (list(pool), top)
    return out


def _sample(pools, grades, rate: float, rng: np.random.Generator) -> tuple[pa.Table, float]:
    """One stratified sample as a sampled qrels table, and the share of the pool judged."""
    rows: dict[str, list] = {"query_id": [], "doc_id": [], "stratum": [], "relevance": []}
    judged_total = pooled_total = 0
    for q, (pool, top) in pools.items():
        budget = int(round(rate * len(pool)))
        rest = [d for d in pool if d not in top]
        take = max(0, min(len(rest), budget - len(top)))
        drawn = set(rng.choice(len(rest), take, replace=False).tolist()) if take else set()
        for d in top:
            rows["query_id"].append(q), rows["doc_id"].append(d), rows["stratum"].append("1")
            rows["relevance"].append(max(grades.get((q, d), 0), 0))
        for i, d in enumerate(rest):
            rows["query_id"].append(q), rows["doc_id"].append(d), rows["stratum"].append("2")
            rows["relevance"].append(max(grades.get((q, d), 0), 0) if i in drawn else -1)
        judged_total += len(top) + take
        pooled_total += len(pool)
    return pa.table(rows), judged_total / pooled_total


def _estimates(sampled, ranked) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {"xinfAP": {}, "statAP": {}}
    for run in ranked:
        scored = score_run(sampled, run)
        out["xinfAP"][run.run_id] = float(np.mean([scored.values[q].inf_ap[0]
                                                   for q in scored.query_ids]))
        out["statAP"][run.run_id] = float(np.mean([
            statap_topic(sampled.topics[q], scored.positions[q]).estimate
            for q in scored.query_ids]))
    return out


if __name__ == "__main__":
    main()
