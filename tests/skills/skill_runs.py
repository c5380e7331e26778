"""Helpers of the skills tests: the ALFWorld split (or a skip), a run folder written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.skills import Cell, StepRecord, alfworld_missing
from memdir.store import atomic_write

SPLIT = Path(__file__).resolve().parents[2].parent / "shared/data/alfworld/valid_seen"


def alfworld_split() -> Path:
    """The valid_seen split folder; skips the test where alfworld or the games are absent."""
    reason = alfworld_missing()
    if reason is not None:
        pytest.skip(reason)
    if not SPLIT.is_dir():
        pytest.skip("../shared/data/alfworld/valid_seen is not present on this machine")
    return SPLIT


def write_cell(run: Path, cell: Cell, steps: list[StepRecord]) -> None:
    """Write ``cell``'s description and its full-chain step records under ``run``."""
    folder = run / cell.key
    atomic_write(folder / "cell.json", cell.model_dump_json().encode())
    for step in steps:
        atomic_write(folder / "full" / "steps" / f"{step.position:03d}.json",
                     step.model_dump_json().encode())
