"""Fixtures shared by every test package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.store import Store

SHARED_DATA = (Path(__file__).resolve().parents[1].parent / "shared" / "data").resolve()
"""Resolved, as memdir resolves the data folders it is given (../shared may be a link)."""


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


@pytest.fixture
def no_data_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No ``MEMDIR_DATA_DIR``, and settings re-read, so a test names its data folder itself."""
    from memdir.config import get_settings

    monkeypatch.delenv("MEMDIR_DATA_DIR", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
