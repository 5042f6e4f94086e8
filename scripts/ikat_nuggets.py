#!/usr/bin/env python
"""TREC iKAT 2024 through a nugget campaign: the 19 automatic runs scored against the human
nuggets by the shipped lexical judge, that ranking against GPT-4o's, and the human bank
against the GPT-4 bank.

Reads ../shared/data/ikat2024-nuggets (see its README): imports the automatic runs'
responses (plain text, split into sentences by pooling's stated rule) and the NIST
assessors' nuggets (vital: nuggets of passages graded 3 or 4, pooling's default rule), runs
an assignment round over every (response, nugget) with the `lexical` judge (word overlap:
support from 0.6, partial from 0.3), derives the assignments (judge-only) and scores the
runs. Then:

- ranks the runs by `all` (nugget recall, partial support counting half) and by GPT-4o's
  share of matched response nuggets (`automatic_response_nuggets.json`: per response,
  matched / (matched + not matched), averaged over the run's responses), and gives Kendall's
  tau (tau-b, scipy) between the two rankings;
- for each human nugget, whether the GPT-4 bank of the same topic-turn holds a close nugget
  (word overlap of the human nugget's words in the GPT-4 one at or above 0.5 / 0.6 / 0.8),
  and the share of human nuggets that have one.

    .venv/bin/python scripts/ikat_nuggets.py [--data DIR] [--store FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from scipy.stats import kendalltau

from pooling.judges.backends.lexical import overlap
from pooling.judges.model_judges import add_judge, judge_round
from pooling.nuggets.assignments import derive_assignments, score_assignments
from pooling.nuggets.rounds import create_assignment_round
from pooling.store import Store
from pooling.store import nugget_banks as nb
from pooling.store.answers import import_answers
from pooling.terminal.progress import terminal_progress

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "ikat2024-nuggets"
CLOSE = (0.5, 0.6, 0.8)


def gpt4o_share(path: Path) -> dict[str, float]:
    """Each run's mean over its responses of GPT-4o's matched share of response nuggets."""
    data = json.loads(path.read_text())
    shares: dict[str, list[float]] = {}
    for runs in data.values():
        for run, entry in runs.items():
            matched = len(entry["nuggets"].get("matched", []))
            total = matched + len(entry["nuggets"].get("not-matched", []))
            shares.setdefault(run, []).append(matched / total if total else 0.0)
    return {run: statistics.fmean(v) for run, v in shares.items()}


def bank_closeness(human: Path, model: Path) -> tuple[int, dict[float, float]]:
    """(human nuggets, share with a close GPT-4 nugget of the same topic-turn, per threshold)."""
    people, gpt = json.loads(human.read_text()), json.loads(model.read_text())
    best = []
    for topic, nuggets in people.items():
        theirs = [n["text"] for n in gpt.get(topic, {}).values()]
        for n in nuggets.values():
            best.append(max((overlap(n["text"], t) for t in theirs), default=0.0))
    return len(best), {c: sum(b >= c for b in best) / len(best) for c in CLOSE}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--store", type=Path)
    args = parser.parse_args()
    path = args.store or Path(tempfile.mkdtemp(prefix="ikat-")) / "ikat.duckdb"
    start = time.perf_counter()
    with Store.create(path) as s:
        runs = import_answers(s, [args.data / "automatic_responses.json"], add_topics=True)
        bank = nb.import_nuggets(s, args.data / "gold_nuggets_human.json", "nist")
        rnd = create_assignment_round(s, "assign", bank.version)
        add_judge(s, "overlap", "lexical")
        with terminal_progress() as bar:
            report = judge_round(s, "overlap", "assign", progress=bar, batch=1024)
        derive_assignments(s, "judge-only", "nist-overlap", round_id="assign", judge="overlap")
        result = score_assignments(s, "nist-overlap")
    took = time.perf_counter() - start
    ours = {r.run_id: r.summary for r in result.runs}
    theirs = gpt4o_share(args.data / "automatic_response_nuggets.json")
    names = sorted(ours, key=lambda r: -ours[r]["all"])
    print(f"{len(runs.items)} automatic runs, {rnd.entries} responses over {len(rnd.per_topic)} "
          f"topic-turns with nuggets; {bank.n_nuggets} NIST nuggets ({bank.n_vital} vital); "
          f"{report.judged} (response, nugget) pairs judged by `lexical` in {took:.1f} s")
    print(f"{'rank':>4}  {'run':45s} {'all':>7} {'vital':>7} {'strict_all':>10}  {'GPT-4o share':>12} {'rank':>4}")
    by_theirs = {r: i + 1 for i, r in enumerate(sorted(theirs, key=lambda r: -theirs[r]))}
    for i, run in enumerate(names, 1):
        v = ours[run]
        print(f"{i:4d}  {run:45s} {v['all']:7.4f} {v['vital']:7.4f} {v['strict_all']:10.4f}  "
              f"{theirs[run]:12.4f} {by_theirs[run]:4d}")
    common = [r for r in names if r in theirs]
    tau, p = kendalltau([ours[r]["all"] for r in common], [theirs[r] for r in common])
    tau_v, _ = kendalltau([ours[r]["vital"] for r in common], [theirs[r] for r in common])
    print(f"Kendall tau (all vs GPT-4o share) = {tau:.3f} (p = {p:.4f}); vital vs GPT-4o share "
          f"= {tau_v:.3f}; {len(common)} runs")
    n, shares = bank_closeness(args.data / "gold_nuggets_human.json",
                               args.data / "gold_nuggets_llm.json")
    cells = ", ".join(f">= {c}: {share:.1%}" for c, share in shares.items())
    print(f"human nuggets with a close GPT-4 nugget of the same topic-turn (of {n}): {cells}")


if __name__ == "__main__":
    main()
