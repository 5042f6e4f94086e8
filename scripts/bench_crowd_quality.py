"""How long the organiser waits for each worker's quality on a real crowd: the TREC 2010
Relevance Feedback track's labels (766 workers, 98,453 labels, NIST gold on 3,277 pairs).

Builds a store once (kept at --store for the next run): the crowd's pairs as one run, a
round queueing every pair, NIST's gold grades 0-2 as the qrels version `nist-gold`, every
worker a person assessor, every label a judgment of the round (label -2, a broken link, an
`unjudgeable` answer), through the public import and judgment API. Then prints the median of
--repeat timings of:

- the Workers page (GET /organiser/rounds/crowd/workers?gold=nist-gold&sort=accuracy,
  in-process, HTML rendered; target < 200 ms): the first view after a change (the report
  computed, as after every new answer of a live round), and a view again with nothing new
  (sorted again or reloaded: the report kept);
- the report `pooling crowd quality` computes (`round_quality` and its CSV), and the whole
  command as a process of its own (start-up included).

Usage: .venv/bin/python scripts/bench_crowd_quality.py [--data DIR] [--store PATH] [--repeat 15]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared/data/trec2010-rf-crowd"
ROUND, GOLD = "crowd", "nist-gold"


def build_store(data: Path, path: Path) -> None:
    """The crowd round in a new store at `path` (see the module)."""
    from pooling.judging.assessors import add_assessor
    from pooling.judging.history import Judgment
    from pooling.judging.judgments import append_judgments
    from pooling.judging.rounds import create_round
    from pooling.store import Store

    with open(data / "trec-rf10-data.txt", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    pairs: dict[tuple[str, str], int] = {}
    for r in rows:
        pairs.setdefault((r["topicID"], r["docID"]), int(r["gold"]))
    per_topic: dict[str, int] = {}
    work = Path(tempfile.mkdtemp())
    with open(work / "crowd.run", "w") as run:
        for (q, d) in pairs:
            per_topic[q] = per_topic.get(q, 0) + 1
            run.write(f"{q} Q0 {d} {per_topic[q]} {-per_topic[q]} crowd\n")
    with open(work / "gold.qrels", "w") as qrels:
        qrels.writelines(f"{q} 0 {d} {g}\n" for (q, d), g in pairs.items() if g >= 0)
    with Store.create(path) as s:
        s.import_runs([work / "crowd.run"])
        s.import_qrels(work / "gold.qrels", name=GOLD)
        create_round(s, ROUND, "depth", depth=max(per_topic.values()),
                     strategy_params={"depth": max(per_topic.values())})
        ids = {}
        for w in dict.fromkeys(r["workerID"] for r in rows):
            ids[w] = add_assessor(s, w).assessor_id
        add_assessor(s, "organiser", role="organiser")
        append_judgments(s, [
            Judgment(ROUND, ids[r["workerID"]], r["topicID"], r["docID"],
                     None if r["label"] == "-2" else int(r["label"]),
                     kind="unjudgeable" if r["label"] == "-2" else "judge")
            for r in rows])


def median_ms(fn, repeat: int) -> float:
    fn()  # warm: templates compiled, the store's pages read once
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir())
                        / "bench_crowd_quality.duckdb")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    from starlette.testclient import TestClient

    from pooling.crowds.quality import round_quality
    from pooling.judging.assessors import issue_token
    from pooling.store import Store
    from pooling.web.app import create_app
    from pooling.web.organiser_views import WorkerReports

    if not args.store.exists():
        start = time.perf_counter()
        build_store(args.data, args.store)
        print(f"built {args.store} in {time.perf_counter() - start:.1f} s")
    with Store(args.store) as s:
        token = issue_token(s, "organiser").token
        report = round_quality(s, ROUND, gold=GOLD)
        answers = sum(q.answers for q in report.workers)
        print(f"{len(report.workers)} workers, {answers:,} answers, "
              f"{sum(q.unjudgeable for q in report.workers):,} unjudgeable, "
              f"{sum(q.gold_answered >= report.min_gold for q in report.workers)} with figures "
              "on gold")
        library = median_ms(lambda: round_quality(s, ROUND, gold=GOLD).to_csv(), args.repeat)
    with Store(args.store) as s:
        app = create_app(s)
        browser = TestClient(app, follow_redirects=False)
        assert browser.get("/login", params={"token": token}).status_code == 303
        url = f"/organiser/rounds/{ROUND}/workers?gold={GOLD}&sort=accuracy"

        def page() -> None:
            answer = browser.get(url)
            assert answer.status_code == 200 and answer.text.count('name="workers"') == len(
                report.workers)

        pages = app.pages
        while not hasattr(pages, "routes"):  # the Starlette app inside the headers' layers
            pages = pages.app

        def changed_page() -> None:
            pages.state.worker_reports = WorkerReports()  # none kept, as after a new answer
            page()

        changed_ms = median_ms(changed_page, args.repeat)
        page_ms = median_ms(page, args.repeat)
        app.close()
    command = [sys.executable, "-m", "pooling", "crowd", "quality", str(args.store), "--round",
               ROUND, "--gold", GOLD, "--format", "csv"]
    process_ms = median_ms(lambda: subprocess.run(command, check=True, capture_output=True),
                           max(3, args.repeat // 5))
    print(f"\nmedian of {args.repeat} (ms)")
    print(f"{'Workers page, first view after a change':<44} {changed_ms:>8.1f}")
    print(f"{'Workers page, again with nothing new':<44} {page_ms:>8.1f}")
    print(f"{'crowd quality report (library, CSV)':<44} {library:>8.1f}")
    print(f"{'pooling crowd quality --format csv (process)':<44} {process_ms:>8.1f}")


if __name__ == "__main__":
    main()
