"""Fixtures for the evaluator's tests: golden trec_eval data, Robust03 data, Hypothesis profile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "eval",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "eval-ci",
    parent=settings.get_profile("eval"),
    derandomize=True,
    print_blob=True,
)
# Applied per test (see EVAL_PROFILE users), not loaded globally: other suites keep theirs.


@pytest.fixture(scope="session")
def golden_dir(shared_dir: Path) -> Path:
    return shared_dir / "golden" / "trec_eval"


@pytest.fixture(scope="session")
def robust_dir(shared_dir: Path) -> Path:
    return shared_dir / "data" / "trec2003-robust"


@pytest.fixture(scope="session")
def pooling_cli():
    """Run the real `pooling` CLI in a subprocess; returns the CompletedProcess (bytes)."""

    def run(*args: str, cwd: Path | None = None, stdin: bytes | None = None):
        return subprocess.run(
            [sys.executable, "-m", "pooling", *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            check=False,
        )

    return run
