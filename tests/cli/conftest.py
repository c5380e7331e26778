"""Fixtures for the command-line tests: a runner, and the sample store on tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.sample import build_sample_store


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def sample_dir(tmp_path: Path) -> Path:
    """A folder holding the sample store."""
    dest = tmp_path / "sample"
    build_sample_store(dest)
    return dest
