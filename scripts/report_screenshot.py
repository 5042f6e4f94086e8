"""Participant reports of TREC 2003 Robust: timed, then one run's report screenshot in Chromium.

Builds a store of the 17 Robust03 runs and the official qrels (../shared/data/trec2003-robust),
writes every run's report (HTML, then PDF) with `pooling.leaderboard.report_files`, prints
how long each part took, and opens one run's report from file:// in headless Chromium
(Playwright, /usr/bin/chromium), with the network blocked: the page must load nothing but
itself. The screenshot of the whole page is saved to the path given.

Usage: .venv/bin/python scripts/report_screenshot.py OUT.png [--run fub03IeOLKe3]
       [--topics 601-650] [--no-pdf] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from pooling.leaderboard.report_files import write_participant_reports
from pooling.store import Store

ROBUST = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec2003-robust"
CHROMIUM = "/usr/bin/chromium"


def build_store(path: Path) -> Store:
    """The 17 runs and the official qrels in a new store."""
    store = Store.create(path)
    store.import_runs(sorted((ROBUST / "runs").glob("input.*.gz")))
    store.import_qrels(ROBUST / "qrels" / "robust03_qrels.txt.gz", name="official")
    return store


def screenshot(page_path: Path, out: Path) -> dict[str, int]:
    """Open the report from file:// and save a full-page screenshot; count what it drew and
    every request other than the page itself (there must be none)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        url = page_path.resolve().as_uri()
        others: list[str] = []
        page.on("request", lambda r: None if r.url == url else others.append(r.url))
        page.goto(url)
        bars = page.locator("svg rect.bar").count()
        topics = page.locator("#per-topic-values tr[data-topic]").count()
        page.screenshot(path=str(out), full_page=True)
        browser.close()
    return {"bars": bars, "topics": topics, "other requests": len(others)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="PNG file for the screenshot")
    parser.add_argument("--run", default="fub03IeOLKe3", help="run whose report is shot")
    parser.add_argument("--topics", default=None, help="topics to report on (default: all)")
    parser.add_argument("--no-pdf", action="store_true", help="HTML only")
    parser.add_argument("--keep", type=Path, default=None, help="write the reports here")
    args = parser.parse_args()
    if not ROBUST.is_dir():
        print(f"{ROBUST} is missing: the Robust03 data is in the shared folder", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp) / "reports"
        clock = time.perf_counter()
        with build_store(Path(tmp) / "robust.duckdb") as store:
            built = time.perf_counter() - clock
            written = write_participant_reports(store, folder, pdf=not args.no_pdf,
                                                topics=args.topics)
        if args.run not in written.pages:
            print(f"no run {args.run!r}; runs: {', '.join(written.pages)}", file=sys.stderr)
            return 1
        seen = screenshot(written.pages[args.run], args.out)
        reports = written.reports
        n_topics = len(reports.reports[0].topics[reports.primary])
        print(f"Robust03: {len(written.pages)} runs, {n_topics} topics, qrels "
              f"{reports.qrels_version}")
        print(f"{'step':<34}{'seconds':>9}")
        rows = [("store (import runs and qrels)", built),
                ("scores, intervals and tests", written.seconds["gather"]),
                (f"HTML ({len(written.pages)} pages and the index)", written.seconds["html"])]
        if "pdf" in written.seconds:
            rows.append((f"PDF ({len(written.pdfs)} files)", written.seconds["pdf"]))
        for name, seconds in rows:
            print(f"{name:<34}{seconds:>9.2f}")
        print(f"screenshot of {args.run}: {args.out} ({seen['bars']} bars, {seen['topics']} "
              f"topic rows, {seen['other requests']} other requests)")
    return 0 if seen["bars"] == n_topics and seen["other requests"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
