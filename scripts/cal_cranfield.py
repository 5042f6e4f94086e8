#!/usr/bin/env python
"""The learned judge and the `cal` strategy on Cranfield, where every document has its text.

Protocol, fixed before any run:
1. Collection: Cranfield's 225 queries and 1,400 abstracts; the 10 runs of real retrieval
   models made by scripts/make_cranfield_runs.py; qrels from cranqrel with grade g in 1..4
   as relevance 5 - g and -1 as 0 (that script's mapping); candidates = each run's top 100.
   Relevant means relevance >= 1 (trec_eval's default level: every Cranfield grade 1..4);
   a candidate without a judgment counts as not relevant (the judgments are close to
   exhaustive).
2. (a) The learned judge (pooling.judges.backends.learned: per-topic TF-IDF + logistic
   regression) by 5-fold stratified cross-validation within each topic over its candidates
   (title and abstract as the text): Cohen's kappa of its grades (P >= 0.5) and ROC-AUC of
   its probabilities, pooled over topics and as a mean of per-topic values. A topic with
   fewer than 5 relevant candidates cannot be split 5 ways and is left out (counted).
3. (b) Replays with the qrels as the oracle (pooling.strategies.replays) of cal (and cal with an RRF
   cold start, cold=take), depth, hedge, maxmean, mmfuse and the default mixfuse, each with
   its shipped parameters, at 10, 20 and 40 judgments per topic: the found share (share of the candidates' relevant documents found,
   mean over topics) and Kendall's tau-b of the 10 runs' MAP ranking under the judgments so
   far against the ranking under the whole candidate pool's qrels.

Takes a few minutes on two cores; prints Markdown tables.

    .venv/bin/python scripts/cal_cranfield.py [--shared ../shared] [--workdir out/cal-cranfield]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402

from pooling.judges.backends.learned import cross_validated  # noqa: E402
from pooling.strategies.replays import (  # noqa: E402
    ReplayData,
    load_inputs,
    parse_strategy,
    prepare,
    read_texts,
    replay,
    score,
)

DEPTH = 100
FOLDS = 5
BUDGETS = (10, 20, 40)
STRATEGIES = ("cal", "cal:cold=take", "depth", "hedge", "maxmean", "mmfuse", "mixfuse")


def load(shared: Path, workdir: Path) -> ReplayData:
    """The Cranfield replay: runs made once into workdir, candidates at DEPTH, texts."""
    cranfield = shared / "data" / "cranfield"
    runs_dir = workdir / "cranfield-runs"
    if not (runs_dir / "DONE").exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_cranfield_runs.py"),
                        str(runs_dir), "--cranfield", str(cranfield)], check=True,
                       stdout=subprocess.DEVNULL)
    qrels, runs = load_inputs(str(runs_dir / "cranfield.qrels"),
                              [str(p) for p in sorted((runs_dir / "runs").glob("*.run"))])
    texts = read_texts(str(cranfield / "cran.all.1400"))
    return prepare(qrels, runs, DEPTH, texts=texts)


def training_table(data: ReplayData) -> pa.Table:
    """Every topic's candidates with their qrels grade (0 when unjudged) and text, as the
    learned judge trains on them."""
    grades = {(q, d): g for q, d, g in zip(data.qrels["query_id"].to_pylist(),
                                           data.qrels["doc_id"].to_pylist(),
                                           data.qrels["relevance"].to_pylist(), strict=True)}
    texts = data.texts or {}
    rows = [{"query_id": q, "doc_id": d, "grade": grades.get((q, d), 0), "doc_title": None,
             "doc_text": texts.get(d)}
            for q in data.query_ids for d in sorted(data.topics[q].candidates())]
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("query_id", pa.string()), ("doc_id", pa.string()), ("grade", pa.int64()),
        ("doc_title", pa.string()), ("doc_text", pa.string())]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--workdir", type=Path, default=ROOT / "out" / "cal-cranfield")
    args = ap.parse_args()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    console = Console(stderr=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    data = load(args.shared, args.workdir)
    training = training_table(data)
    rows = []
    seconds = {}
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as bar:
        task = bar.add_task("cross-validating the learned judge", total=1)
        cv = cross_validated(training, FOLDS, relevant_from=1)
        bar.advance(task)
        task = bar.add_task("replaying", total=len(STRATEGIES))
        for name in STRATEGIES:
            bar.update(task, description=f"replaying {name}")
            start = time.monotonic()
            rep = replay(data, parse_strategy(name), max(BUDGETS))
            seconds[name] = time.monotonic() - start
            rows += score(data, rep, BUDGETS)
            bar.advance(task)

    o = cv["overall"]
    n_topics = len(data.query_ids)
    print(f"#### Learned judge, {FOLDS}-fold cross-validation within each topic "
          f"(candidates at depth {DEPTH}, relevant = relevance >= 1)\n")
    print("| topics | pairs | relevant | kappa (pooled) | ROC-AUC (pooled) | kappa (topic mean) "
          "| ROC-AUC (topic mean) |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {o['topics']} of {n_topics} | {o['n']:,} | {o['relevant']:,} | {o['kappa']:.3f} | "
          f"{o['roc_auc']:.3f} | {o['mean_kappa']:.3f} | {o['mean_roc_auc']:.3f} |")
    print(f"\n{len(cv['skipped'])} topics left out: fewer than {FOLDS} relevant candidates.\n")
    print(f"#### Replays on Cranfield (225 queries, 10 runs, candidates at depth {DEPTH})\n")
    print("| strategy | " + " | ".join(f"found @{b}" for b in BUDGETS) + " | "
          + " | ".join(f"tau @{b}" for b in BUDGETS) + " | seconds |")
    print("|---|" + "---|" * (2 * len(BUDGETS) + 1))
    for name in STRATEGIES:
        mine = {r["budget"]: r for r in rows if r["strategy"] == name}
        found = " | ".join(f"{mine[b]['found_share']:.3f}" for b in BUDGETS)
        tau = " | ".join(f"{mine[b]['tau']:.3f}" for b in BUDGETS)
        print(f"| {name} | {found} | {tau} | {seconds[name]:.0f} |")


if __name__ == "__main__":
    main()
