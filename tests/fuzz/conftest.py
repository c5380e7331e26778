"""The stores and event loops the fuzzing suite runs on (its profiles: :mod:`fuzzrun`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from memdir.sample import build_sample_store
from memdir.store import Store


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    """One event loop for a module's calls, as a server or an agent loop keeps one."""
    with asyncio.Runner() as loop:
        yield loop


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The sample store, fresh for each module (its write calls may fill it with junk)."""
    root = tmp_path_factory.mktemp("fuzz") / "store"
    return build_sample_store(root)
