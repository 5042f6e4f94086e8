"""A participant report opened from file:// in a real headless Chromium: it draws its bars
and asks for nothing beyond itself (no font, style, script or image), so it reads offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from pooling.leaderboard.report_files import write_participant_reports
from pooling.store import Store

pytestmark = pytest.mark.slow

DEMO = Path(__file__).resolve().parents[2] / "collections" / "demo"


def test_a_report_opened_from_a_file_renders_its_bars_and_fetches_nothing(tmp_path, browser):
    with Store.create(tmp_path / "demo.duckdb") as s:
        s.import_runs(sorted((DEMO / "runs").glob("*.run")))
        s.import_qrels(DEMO / "truth.qrels", name="truth")
        written = write_participant_reports(s, tmp_path / "reports", pdf=False)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    failed: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))

    index_url = written.index.resolve().as_uri()
    page.goto(index_url)
    link = page.locator("#runs a", has_text="HTML").first
    link.click()
    page.wait_for_load_state("load")
    run_id = written.reports.reports[0].run_id
    assert page.locator("h1").inner_text() == f"Run {run_id}"
    chart = page.locator("figure.topic-chart svg")
    assert chart.is_visible()
    box = chart.bounding_box()
    assert box["width"] > 600 and box["height"] > 100
    bars = page.locator("svg rect.bar")
    assert bars.count() == 50
    heights = [bars.nth(k).bounding_box()["height"] for k in range(bars.count())]
    assert sum(h > 0 for h in heights) >= 40  # a topic the run scores 0 on has no bar
    assert all(b.is_visible() for b in (bars.nth(k) for k in range(bars.count()) if heights[k] > 0))
    assert page.locator("#per-topic-values tr[data-topic]").count() == 50
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert requests == [index_url, written.pages[run_id].resolve().as_uri()]
    assert not failed and not problems
