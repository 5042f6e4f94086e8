"""Fixtures of the release tests: the demo store with a judged round, and its release."""

from __future__ import annotations

from pathlib import Path

import pytest
from release_data import build_demo_store, cli


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def demo_release(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store released with every default: all versions, all runs, document ids."""
    out = tmp_path_factory.mktemp("released") / "demo-release"
    cli("release", demo_store, out, "--title", "Demo: a test collection", "--license",
        "CC-BY-4.0")
    return out
