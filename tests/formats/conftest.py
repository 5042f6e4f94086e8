"""Fixtures for the format readers' tests."""

from __future__ import annotations

import gzip
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

MakeFile = Callable[..., Path]


@pytest.fixture
def make_file(tmp_path: Path) -> MakeFile:
    """Write a small inline input (dedented text, or bytes) to tmp_path, gzipped on request."""

    def make(name: str, content: str | bytes, gz: bool = False) -> Path:
        data = content if isinstance(content, bytes) else textwrap.dedent(content).encode()
        path = tmp_path / name
        path.write_bytes(gzip.compress(data) if gz else data)
        return path

    return make
