"""The report of a 40-run, 8-measure campaign reads at 1,280 px: no hidden columns, legible
heatmap labels, and a significance scale that turns at alpha."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pooling.leaderboard import correlation_table, leaderboard
from pooling.leaderboard.report import html_report, significance_heatmap, write_html_report

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
WIDTH = 1280
FORTY_RUN_MEASURES = ["map", "P_10", "P_100", "ndcg_cut_10", "ndcg_cut_100", "recip_rank",
                      "Rprec", "bpref"]


@pytest.fixture(scope="module")
def board(forty_run_store):
    return leaderboard(forty_run_store, measures=FORTY_RUN_MEASURES, test="randomization",
                       correction="holm")


@pytest.fixture(scope="module")
def layout(board, tmp_path_factory) -> dict:
    """Sizes measured in headless Chromium with a 1,280 px wide window."""
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium (scripts/test installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    correlations = correlation_table({m: board.means(m) for m in board.measures})
    html = html_report(board, correlations=correlations, title="forty runs")
    path = write_html_report(html, tmp_path_factory.mktemp("layout") / "report.html")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.goto(path.as_uri())
            return page.evaluate("""() => {
                const table = document.querySelector('#leaderboard');
                const svg = document.querySelector('#fig-significance svg');
                return {
                    rows: table.tBodies[0].rows.length,
                    columns: table.tHead.rows[0].cells.length,
                    tableWidth: table.scrollWidth,
                    boxWidth: table.parentElement.clientWidth,
                    boxScroll: table.parentElement.scrollWidth,
                    pageScroll: document.documentElement.scrollWidth,
                    svgShown: svg.getBoundingClientRect().width,
                    svgNatural: svg.width.baseVal.value,
                    note: document.querySelector('#significance-note').textContent,
                    caption: document.querySelector('p.caption').textContent,
                };
            }""")
        finally:
            browser.close()


def test_the_forty_run_table_fits_1280_px_without_scrolling(layout):
    assert layout["rows"] == 40
    assert layout["columns"] == 3 + 1 + len(FORTY_RUN_MEASURES) + 4  # 1: the team column
    assert layout["tableWidth"] <= layout["boxWidth"]
    assert layout["boxScroll"] <= layout["boxWidth"]
    assert layout["pageScroll"] <= WIDTH


def test_heatmap_run_labels_are_at_least_9_px_on_screen(board, layout):
    fig = significance_heatmap(board)
    ax = fig.axes[0]
    labels = ax.get_yticklabels() + ax.get_xticklabels()
    assert len(labels) == 80
    points = min(label.get_fontsize() for label in labels)
    # An SVG from matplotlib is sized in points (72 per inch), a CSS pixel is 1/96 inch; the
    # page may show the SVG smaller (or larger) than that.
    pixels = points * 96 / 72 * layout["svgShown"] / layout["svgNatural"]
    assert pixels >= 9.0
    # The figure grows with the run count rather than squeezing 40 labels into a fixed box.
    width, height = fig.get_size_inches()
    assert height * 72 >= 40 * points * 1.2


def test_heatmap_colours_diverge_at_alpha(board):
    fig = significance_heatmap(board)
    image = fig.axes[0].get_images()[0]
    norm, cmap = image.norm, image.get_cmap()
    assert norm(board.alpha) == pytest.approx(0.5, abs=1e-12)
    assert norm(0.078) > 0.5 > norm(0.04)
    assert norm(1.0) == pytest.approx(1.0) and norm(board.plan.floor) == pytest.approx(0.0)
    below, above = cmap(norm(0.01)), cmap(norm(0.078))
    assert below[2] > below[0] and above[0] > above[2]  # blue below alpha, red above
    centre = np.array(cmap(0.5)[:3])
    assert centre.min() > 0.9  # alpha itself is neutral (near white)


def test_the_report_states_the_permutation_count_and_floor(layout):
    for text in (layout["caption"], layout["note"]):
        assert "312,000 permutations" in text
        assert "smallest attainable holm-corrected p 0.0025" in text
