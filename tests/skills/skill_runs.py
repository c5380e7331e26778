"""Writing a skills run folder by hand, for report tests."""

from __future__ import annotations

from pathlib import Path

from memdir.skills import Cell, StepRecord
from memdir.store import atomic_write


def write_cell(run: Path, cell: Cell, steps: list[StepRecord]) -> None:
    """Write ``cell``'s description and its full-chain step records under ``run``."""
    folder = run / cell.key
    atomic_write(folder / "cell.json", cell.model_dump_json().encode())
    for step in steps:
        atomic_write(folder / "full" / "steps" / f"{step.position:03d}.json",
                     step.model_dump_json().encode())
