"""Conversations for the builder tests: real files (skipped where absent) and our fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.bench import Dataset, load_locomo, load_personamem, load_realtalk

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
FIXTURE = Path(__file__).resolve().parents[1] / "bench" / "fixtures" / "personamem"


@pytest.fixture(scope="session")
def locomo() -> Dataset:
    path = DATA / "locomo" / "locomo10.json"
    if not path.exists():
        pytest.skip(f"{path} is not present on this machine")
    return load_locomo(path)


@pytest.fixture(scope="session")
def realtalk() -> Dataset:
    path = DATA / "realtalk"
    if not path.exists():
        pytest.skip(f"{path} is not present on this machine")
    return load_realtalk(path)


@pytest.fixture(scope="session")
def persona_fixture() -> Dataset:
    return load_personamem(
        FIXTURE / "questions_fixture.csv", FIXTURE / "shared_contexts_fixture.jsonl"
    )
