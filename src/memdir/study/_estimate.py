"""A dry run's cost estimate, from the search-cost figures the paper reports.

The figures are data (``data/paper_costs.yaml``): cents per query for the paper's
main searcher on each test set, a multiplier range per other search model, and the
paper's question counts for when the data is not there to count. The offline
policy and the mock model cost nothing. Closed-book, the judge, model-built stores
and search models the file does not list have no figure and are left out of the
total (each cell says so), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict

from memdir.agents import is_offline
from memdir.builders import variant_spec
from memdir.study._config import Cell, StudyConfig

__all__ = ["CellEstimate", "PaperCosts", "basis", "estimate_cells", "paper_costs",
           "reference_range"]

Range = tuple[float, float]


class ReferenceQuestions(BaseModel):
    """The questions the paper evaluates on one test set, over how many conversations."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    questions: int
    conversations: int = 1


class PaperCosts(BaseModel):
    """The paper's search-cost figures, as shipped in ``data/paper_costs.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    searcher: str
    search_cents: dict[str, Range]
    """Cents per query of :attr:`searcher`, by test set (``personamem-32k``)."""
    searcher_scale: dict[str, Range]
    """Another search model's cost as a multiple of :attr:`searcher`'s, by model name."""
    questions: dict[str, ReferenceQuestions]

    def scale(self, model: str) -> Range | None:
        """The multiplier of ``model``: by its full name, else by its last path part."""
        if model in self.searcher_scale:
            return self.searcher_scale[model]
        short = model.rsplit("/", 1)[-1]
        return next((r for name, r in self.searcher_scale.items()
                     if name.rsplit("/", 1)[-1] == short), None)


@cache
def paper_costs() -> PaperCosts:
    """The shipped figures (read once)."""
    text = resources.files("memdir.study").joinpath("data/paper_costs.yaml").read_text("utf-8")
    return PaperCosts.model_validate(yaml.safe_load(text))


def basis() -> str:
    """One line stating what the estimate rests on, from the shipped figures."""
    costs = paper_costs()
    sets = ", ".join(f"{name} {_span(r)}" for name, r in costs.search_cents.items())
    scales = ", ".join(f"{name.rsplit('/', 1)[-1]} x{_span(r)}"
                       for name, r in costs.searcher_scale.items() if name != costs.searcher)
    return (f"search cents/query as the paper reports them ({costs.searcher}): {sets}; "
            f"other searchers {scales}; closed-book, judge and model-built stores not estimated")


def _span(values: Range) -> str:
    low, high = values
    return f"{low:g}" if low == high else f"{low:g}-{high:g}"


class CellEstimate(BaseModel):
    """A cell's question count and the estimated search cost of answering them."""

    cell: Cell
    questions: int
    questions_from: str
    """``data`` (counted from the files) or ``reference`` (the paper's count)."""
    low_cents: float | None
    high_cents: float | None
    note: str = ""


def reference_range(cell: Cell) -> Range | None:
    """Cents per query for the cell's searcher on its benchmark, or None if there is no basis."""
    if is_offline(cell.search_model):
        return (0.0, 0.0)
    if not variant_spec(cell.variant).needs_store:
        return None  # the reference figures are for searching a store
    costs = paper_costs()
    base = costs.search_cents.get(cell.dataset_key)
    scale = costs.scale(cell.search_model)
    if base is None or scale is None:
        return None
    return (base[0] * scale[0], base[1] * scale[1])


def _why_none(cell: Cell) -> str:
    if not variant_spec(cell.variant).needs_store:
        return f"{cell.variant} reads no store: no reference figure"
    if paper_costs().scale(cell.search_model) is None:
        return f"no reference figure for search model {cell.search_model}"
    return f"no reference figure for {cell.dataset_key}"


def _reference_count(cell: Cell) -> int:
    ref = paper_costs().questions.get(cell.dataset_key)
    count = 0 if ref is None else round(ref.questions / ref.conversations)
    return min(count, cell.limit) if cell.limit else count


def estimate_cells(config: StudyConfig,
                   questions: Mapping[str, int] | None = None) -> list[CellEstimate]:
    """Estimate every cell of ``config`` without calling any model.

    Args:
        config: The study.
        questions: Questions per cell key, counted from the data
            (:func:`memdir.study.check_data`); None: the paper's counts.
    """
    estimates = []
    for cell in config.cells():
        if questions is not None and cell.key in questions:
            count, source = questions[cell.key], "data"
        else:
            count, source = _reference_count(cell), "reference"
        per = reference_range(cell)
        notes = [] if per is not None else [_why_none(cell)]
        if variant_spec(cell.variant).model_built:
            notes.append(f"plus an unestimated build by {cell.builder_model}")
        estimates.append(CellEstimate(
            cell=cell, questions=count, questions_from=source,
            low_cents=None if per is None else per[0] * count,
            high_cents=None if per is None else per[1] * count, note="; ".join(notes)))
    return estimates
