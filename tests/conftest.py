"""Fixtures shared by every test package."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.store import Store

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """An empty store in a fresh temporary folder."""
    return Store(tmp_path / "memories", create=True)


@pytest.fixture
def shared_data() -> Path:
    """The read-only benchmark files in ../shared/data; skips the test where absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    return SHARED_DATA
