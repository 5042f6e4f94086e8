"""Fixtures shared by the whole test suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"


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
