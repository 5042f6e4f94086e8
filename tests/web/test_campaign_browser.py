"""A live campaign end to end: two assessors judge in real browsers while the organiser, at
the CLI, imports a late run, derives qrels and prints a leaderboard through the server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

import pytest
from conftest import REPO_ROOT

from pooling.store import Store

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"


def pooling(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, timeout=180, cwd=REPO_ROOT, env={**os.environ, "COLUMNS": "200"})


def test_assessors_judge_in_browsers_while_the_organiser_works_at_the_cli(campaign, server, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.fail(f"the browser tests need {CHROMIUM}: apt-get install chromium")
    late = tmp_path / "late.run"
    late.write_text("".join(f"{q} Q0 {d} {r + 1} {10 - r} late\n"
                            for q, docs in (("1", ["d3", "d1", "d5"]), ("2", ["e2", "e1"]))
                            for r, d in enumerate(docs)))
    organiser: dict[str, subprocess.CompletedProcess] = {}
    started = threading.Event()

    def at_the_cli() -> None:
        started.wait(60)
        organiser["import"] = pooling("import", "runs", campaign.path, late)
        organiser["derive"] = pooling("qrels", "derive", campaign.path, "--round", "r1", "--rule",
                                      "latest", "--name", "midway")
        organiser["leaderboard"] = pooling("leaderboard", campaign.path, "--qrels", "midway", "-m", "P_5")

    cli = threading.Thread(target=at_the_cli)
    cli.start()
    judged: dict[str, list[str]] = {"ann": [], "bob": []}
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        pages = {}
        for who in judged:
            context = browser.new_context()
            page = context.new_page()
            page.goto(server.url + "login?token=" + campaign.tokens[who])
            page.get_by_role("link", name="Start").click()
            pages[who] = page
        for step in range(4):  # the two take turns: the CLI's work runs between their clicks
            if step == 1:
                started.set()
            for who, page in pages.items():
                doc = page.locator("#judge").get_attribute("data-doc-id")
                judged[who].append(doc)
                page.wait_for_timeout(150)
                with page.expect_navigation():
                    page.keyboard.press("1" if step % 2 == 0 else "0")
        browser.close()
    cli.join(180)
    for name, done in organiser.items():
        assert done.returncode == 0, f"{name}: {done.stderr}"
    assert "imported run late" in organiser["import"].stdout
    assert "midway" in organiser["derive"].stdout
    assert "late" in organiser["leaderboard"].stdout
    server.stop()
    with Store(campaign.path, read_only=True) as s:
        rows = s.con.execute("SELECT assessor_id, doc_id, grade FROM judgments ORDER BY seq").fetchall()
        for who, docs in judged.items():
            assert [(d, g) for a, d, g in rows if a == who] == list(zip(docs, (1, 0, 1, 0), strict=True))
        assert s.con.execute("SELECT n_rows FROM runs WHERE run_id = 'late'").fetchone() == (5,)
        version = s.con.execute("SELECT method, n_rows FROM qrels_versions WHERE name = 'midway'").fetchone()
        assert version is not None and version[1] >= 1  # what was judged when it was derived
