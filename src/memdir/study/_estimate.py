"""A dry run's cost estimate, from the reference figures the paper reports.

Basis, stated in every estimate:

- search cost per query with gpt-5.4-mini: LoCoMo 2.1-2.5 cents for every store;
  PersonaMem 32k 1.4-4.0 cents, 128k 1.6-3.9 (the range spans the reorganized
  stores and the dump); REALTALK has no reference figure and takes LoCoMo's range,
  its dump being about the same size (105 KB against 102 KB);
- other searchers scale from the PersonaMem 128k ladder: gpt-5.4-nano under 1 cent
  where mini costs 2-4 (x0 to x0.5), gpt-5.4 10-19 cents (x5);
- without the data, a cell counts the paper's questions per conversation (PersonaMem
  32k: 32 questions over three contexts, so 11 a cell);
- the offline policy and the mock model cost nothing;
- closed-book, the judge and model-built stores have no reference figure and are
  left out of the total (said so in the output), never guessed.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from memdir.agents import is_offline
from memdir.bench import DatasetError
from memdir.builders import variant_spec
from memdir.study._config import Cell, StudyConfig
from memdir.study._stores import cell_input

__all__ = ["BASIS", "CellEstimate", "estimate_cells", "reference_range"]

_MINI_CENTS: dict[str, tuple[float, float]] = {
    "locomo": (2.1, 2.5), "realtalk": (2.1, 2.5),
    "personamem-32k": (1.4, 4.0), "personamem-128k": (1.6, 3.9),
}
_SCALE: dict[str, tuple[float, float]] = {
    "gpt-5.4-mini": (1.0, 1.0), "gpt-5.4-nano": (0.0, 0.5), "gpt-5.4": (5.0, 5.0),
}
_REFERENCE_QUESTIONS = {"locomo": (158, 1), "realtalk": (85, 1), "personamem-32k": (32, 3),
                        "personamem-128k": (42, 1)}
"""Questions the paper evaluated per test set, and over how many conversations."""
BASIS = (
    "search cents/query as the paper reports them (gpt-5.4-mini): LoCoMo 2.1-2.5, PersonaMem 32k "
    "1.4-4.0, 128k 1.6-3.9; REALTALK takes LoCoMo's range; nano x0-0.5, gpt-5.4 x5 (searcher "
    "ladder); closed-book, judge and model-built stores not estimated"
)


class CellEstimate(BaseModel):
    """A cell's question count and the estimated search cost of answering them."""

    cell: Cell
    questions: int
    questions_from: str
    """``data`` (counted from the files) or ``reference`` (the paper's count)."""
    low_cents: float | None
    high_cents: float | None
    note: str = ""


def reference_range(cell: Cell) -> tuple[float, float] | None:
    """Cents per query for the cell's searcher on its benchmark, or None if there is no basis."""
    if is_offline(cell.search_model):
        return (0.0, 0.0)
    if not variant_spec(cell.variant).needs_store:
        return None  # the reference figures are for searching a store
    base = _MINI_CENTS.get(cell.dataset_key)
    scale = _SCALE.get(cell.search_model.rsplit("/", 1)[-1])
    if base is None or scale is None:
        return None
    return (base[0] * scale[0], base[1] * scale[1])


def _count(cell: Cell, data_dir: Path | None) -> tuple[int, str]:
    if data_dir is not None:
        try:
            return len(cell_input(cell, data_dir).questions), "data"
        except (DatasetError, KeyError, FileNotFoundError):
            pass  # fall back to the paper's count, reported as such
    total, conversations = _REFERENCE_QUESTIONS.get(cell.dataset_key, (0, 1))
    count = round(total / conversations)
    return (min(count, cell.limit) if cell.limit else count), "reference"


def estimate_cells(config: StudyConfig, data_dir: Path | None) -> list[CellEstimate]:
    """Estimate every cell of ``config`` without calling any model."""
    estimates = []
    for cell in config.cells():
        questions, source = _count(cell, data_dir)
        per = reference_range(cell)
        notes = []
        if per is None:
            notes.append("no reference figure for this searcher/variant")
        if variant_spec(cell.variant).model_built:
            notes.append(f"plus an unestimated build by {cell.builder_model}")
        estimates.append(CellEstimate(
            cell=cell, questions=questions, questions_from=source,
            low_cents=None if per is None else per[0] * questions,
            high_cents=None if per is None else per[1] * questions, note="; ".join(notes)))
    return estimates
