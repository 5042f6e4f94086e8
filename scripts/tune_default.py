#!/usr/bin/env python
"""Every pooling strategy replayed on several collections; parameters chosen leave-one-
collection-out; and the check behind `pooling pool`'s default strategy.

Protocol, fixed before any replay:
1. Collections (candidates = each run's top D, the qrels as the oracle assessor):
   - robust03: TREC 2003 Robust, topics 601-650, 17 runs, D = 100;
   - robust03-d10: the same with D = 10 (shallow candidates, as labs that pool depth 10);
   - cranfield: 225 queries, 10 runs of real retrieval models (scripts/make_cranfield_runs.py), D = 100;
   - demo: the bundled demo collection, 20 runs, D = 100.
2. Budgets 10, 20, 50, 100 judgments per topic; the figure is the found share (the share of
   the candidate pool's relevant documents found, mean over topics).
3. A strategy's parameters come from its GRID below. For each collection, the setting chosen
   on the *other* collections is reported on this one (leave one collection out). The choice
   minimises the worst shortfall, over those collections and the four budgets, against the
   best replay of any setting of any strategy there (ties: the higher mean found share): a
   default has to hold up everywhere, not win on average.
4. The best shipped strategy at a budget on a collection is the best of all strategies so
   reported. The default must be within 1 point (0.01) of it at every budget on every
   collection. Its shipped parameters are those chosen on all collections together.

Takes about two minutes on two cores.

    .venv/bin/python scripts/tune_default.py [--shared ../shared] [--workdir out/tune] [--markdown]
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from statistics import fmean

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pooling.strategies import DEFAULT_STRATEGY  # noqa: E402
from pooling.strategies.replays import (  # noqa: E402
    ReplayData,
    found_share,
    load_inputs,
    parse_strategy,
    parse_topics,
    prepare,
    replay,
)

BUDGETS = (10, 20, 50, 100)
GRID: dict[str, dict[str, tuple]] = {  # strategy -> parameter -> values (first: the default)
    "depth": {},
    "random": {},
    "sample": {},
    "take": {"fusion": ("rrf", "rbp", "borda", "combsum", "combmnz")},
    "mtf": {"penalty": (1.0, 0.5, 2.0)},
    "hedge": {"beta": (0.1, 0.05, 0.2, 0.5)},
    "maxmean": {"variant": ("mm", "mm-ns")},
    "ucb": {"c": (1.0, 0.5, 2.0)},
    "thompson": {},
    "mmfuse": {"prior_mean": (0.2, 0.1, 0.3), "strength": (4.0, 1.0, 8.0, 16.0),
               "power": (24.0, 8.0, 16.0, 48.0), "flatten": (0.6, 0.1, 0.2, 0.3, 0.45, 1.0)},
    "mixfuse": {"mix": (0.7, 0.3, 0.5), "k": (10.0, 60.0), "prior_mean": (0.2, 0.1),
                "strength": (4.0, 16.0), "power": (8.0, 24.0), "flatten": (1.0, 0.6)},
}

_DATA: dict[str, ReplayData] = {}  # filled before the worker processes fork


def settings(name: str) -> list[str]:
    grid = GRID[name]
    if not grid:
        return [name]
    keys = list(grid)
    return [name + ":" + ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                  for k, v in zip(keys, values, strict=True))
            for values in itertools.product(*(grid[k] for k in keys))]


def load(shared: Path, workdir: Path) -> dict[str, ReplayData]:
    robust = shared / "data" / "trec2003-robust"
    qrels, runs = load_inputs(str(robust / "qrels" / "robust03_qrels.txt.gz"),
                              [str(p) for p in sorted((robust / "runs").glob("input.*.gz"))])
    topics = parse_topics("601-650")
    cran = workdir / "cranfield-runs"
    if not (cran / "DONE").exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_cranfield_runs.py"), str(cran),
                        "--cranfield", str(shared / "data" / "cranfield")], check=True,
                       stdout=subprocess.DEVNULL)
    c_qrels, c_runs = load_inputs(str(cran / "cranfield.qrels"), [str(p) for p in sorted((cran / "runs").glob("*.run"))])
    demo = ROOT / "collections" / "demo"
    d_qrels, d_runs = load_inputs(str(demo / "truth.qrels"), [str(p) for p in sorted((demo / "runs").glob("*.run"))])
    return {
        "robust03": prepare(qrels, runs, 100, topics),
        "robust03-d10": prepare(qrels, runs, 10, topics),
        "cranfield": prepare(c_qrels, c_runs, 100),
        "demo": prepare(d_qrels, d_runs, 100),
    }


def run_one(task: tuple[str, str]) -> tuple[str, str, tuple[float, ...]]:
    collection, spec = task
    data = _DATA[collection]
    rep = replay(data, parse_strategy(spec), max(BUDGETS))
    return collection, spec, tuple(found_share(data, rep, b) for b in BUDGETS)


def choose(results: dict[tuple[str, str], tuple[float, ...]], name: str, on: list[str]) -> str:
    """The setting of `name` with the smallest worst shortfall on `on` (see the protocol)."""
    best = {c: [max(v[i] for (cc, _), v in results.items() if cc == c) for i in range(len(BUDGETS))]
            for c in on}

    def key(spec: str) -> tuple[float, float, int]:
        shortfall = max(b - x for c in on for b, x in zip(best[c], results[(c, spec)], strict=True))
        return (-round(shortfall, 9), fmean(fmean(results[(c, spec)]) for c in on),
                -settings(name).index(spec))

    return max(settings(name), key=key)


def main() -> None:
    global _DATA
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--workdir", type=Path, default=ROOT / "out" / "tune")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--markdown", action="store_true", help="print the README tables")
    args = ap.parse_args()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    _DATA = load(args.shared, args.workdir)
    collections = list(_DATA)
    tasks = [(c, s) for c in collections for name in GRID for s in settings(name)]
    results: dict[tuple[str, str], tuple[float, ...]] = {}
    with Progress("replaying", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console) as bar, ProcessPoolExecutor(args.workers) as pool:
        task = bar.add_task("replays", total=len(tasks))
        for collection, spec, shares in pool.map(run_one, tasks, chunksize=2):
            results[(collection, spec)] = shares
            bar.advance(task)

    # Leave one collection out: each strategy's setting chosen on the others.
    table: dict[str, dict[str, tuple[str, tuple[float, ...]]]] = {}
    for held in collections:
        others = [c for c in collections if c != held]
        table[held] = {}
        for name in GRID:
            spec = choose(results, name, others)
            table[held][name] = (spec, results[(held, spec)])
    default_name = DEFAULT_STRATEGY.split(":")[0]
    shipped_default = choose(results, default_name, collections)
    worst_gap = 0.0
    for held in collections:
        best = [max(v[1][i] for v in table[held].values()) for i in range(len(BUDGETS))]
        print(f"\n#### {held} (parameters chosen on {', '.join(c for c in collections if c != held)})\n")
        print("| strategy | setting | " + " | ".join(f"@{b}" for b in BUDGETS) + " |")
        print("|---|---|" + "---|" * len(BUDGETS))
        for name, (spec, shares) in sorted(table[held].items(), key=lambda kv: -fmean(kv[1][1])):
            cells = [f"**{s:.3f}**" if abs(s - b) < 1e-12 else f"{s:.3f}" for s, b in zip(shares, best, strict=True)]
            mark = " (default)" if name == default_name else ""
            print(f"| {name}{mark} | `{spec}` | " + " | ".join(cells) + " |")
        gaps = [b - s for s, b in zip(table[held][default_name][1], best, strict=True)]
        worst_gap = max(worst_gap, *gaps)
        print(f"\n{default_name} behind the best: " + ", ".join(f"@{b} {g:.3f}" for b, g in zip(BUDGETS, gaps, strict=True)))
    print(f"\nshipped default: {shipped_default} (chosen on all of {', '.join(collections)})")
    print(f"worst gap of the default to the best shipped strategy: {worst_gap:.3f} "
          f"({'within' if worst_gap <= 0.01 else 'NOT within'} 1 point)")
    for name in GRID:
        picks = {held: table[held][name][0] for held in collections}
        if len(set(picks.values())) > 1:
            console.print(f"{name}: the choice depends on the held-out collection: {picks}", highlight=False)


if __name__ == "__main__":
    main()
