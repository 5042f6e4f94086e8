"""Fixtures shared by the whole test suite."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"
CHROMIUM = "/usr/bin/chromium"  # Debian's; Playwright drives it, nothing is downloaded


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared data folder beside the repository (`<repo root>/../shared`).

    Missing, it skips the test on a developer's machine but fails it under CI (env var `CI`
    set), where the data must be present.
    """
    if not SHARED_DIR.is_dir():
        message = f"shared data folder {SHARED_DIR} is missing"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return SHARED_DIR


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (Debian's, through Playwright) for the tests of a module; each test
    opens its own context or page. Missing, the test fails and says how to install it."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.fail(f"the browser tests need {CHROMIUM}: apt-get install chromium")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                              args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield b
        b.close()
