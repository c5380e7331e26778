"""Fixtures shared by every test package."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
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


@pytest.fixture
def plant_deep() -> Iterator[Callable[..., str]]:
    """Make a file many folders down, as bash would (no store checks on depth).

    Called as ``plant_deep(root, levels, file_name, data, folder="d")``; returns the
    file's agent-facing path. The folders are removed afterwards through handles, since
    pytest's own clean-up of old temporary folders recurses and fails on them.
    """
    made: list[tuple[Path, str]] = []

    def plant(root: Path, levels: int, name: str, data: bytes, folder: str = "d") -> str:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for _ in range(levels):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, dir_fd=fd)
                child = os.open(folder, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = child
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600, dir_fd=fd)
            os.write(out, data)
            os.close(out)
        finally:
            os.close(fd)
        made.append((root, folder))
        return "/memories/" + f"{folder}/" * levels + name

    yield plant
    from memdir.store._paths import open_root, remove_at

    for root, folder in made:
        with contextlib.suppress(OSError):
            fd = open_root(root)
            try:
                remove_at(fd, folder)
            finally:
                os.close(fd)
