"""Benchmark data for the bench tests: real files (skipped where absent) and our fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.bench import Dataset, load_locomo, load_personamem, load_realtalk

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not present on this machine")
    return path


@pytest.fixture(scope="session")
def locomo() -> Dataset:
    """The real LoCoMo file, loaded once."""
    return load_locomo(_need(DATA / "locomo" / "locomo10.json"))


@pytest.fixture(scope="session")
def realtalk() -> Dataset:
    """The real REALTALK folder, loaded once."""
    return load_realtalk(_need(DATA / "realtalk"))


@pytest.fixture(scope="session")
def personamem_csv() -> Path:
    """The real PersonaMem 32k questions (the contexts are not in shared/data)."""
    return _need(DATA / "personamem" / "questions_32k.csv")


@pytest.fixture(scope="session")
def fixture_dir() -> Path:
    """Our hand-written PersonaMem files in the official format."""
    return FIXTURES / "personamem"


@pytest.fixture(scope="session")
def persona_fixture(fixture_dir: Path) -> Dataset:
    """The fixture loaded as a PersonaMem tier."""
    return load_personamem(
        fixture_dir / "questions_fixture.csv", fixture_dir / "shared_contexts_fixture.jsonl"
    )
