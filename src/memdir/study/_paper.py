"""The paper's side of a config: which of its tables the config reproduces, and how many cells.

A shipped config says what it reproduces in a ``paper:`` section
(``{cells: 28, table: "Table 1"}``). The paper counts one cell per test set: the
three PersonaMem 32k conversations are one column of its tables, pooled. memdir
runs one cell per conversation, so the dry run prints both counts, and the
comparison uses memdir's cells pooled the way the paper pools them
(:func:`table_cells`). Where the two cannot agree, ``note`` says why.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PaperCount", "table_cells"]


class PaperCount(BaseModel):
    """What a config reproduces of the paper, and the paper's cell count for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cells: int = Field(ge=1)
    """The paper's cells: one per test set (a tier's conversations pooled) x setting."""
    table: str = Field(min_length=1)
    """Where the paper reports them, e.g. ``Table 1`` or ``Section D.1``."""
    note: str | None = None
    """Why memdir's count differs from the paper's, where it does."""


class _CellLike(Protocol):
    @property
    def dataset_key(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def builder_model(self) -> str | None: ...
    @property
    def search_model(self) -> str: ...
    @property
    def harness(self) -> str: ...


def table_cells(cells: Iterable[_CellLike]) -> int:
    """How many cells the paper's tables would show: the cells of one test set pooled.

    Two cells that differ only in the conversation of one benchmark tier (the three
    PersonaMem 32k contexts) are one entry of the paper's tables.
    """
    return len({(c.dataset_key, c.variant, c.builder_model, c.search_model, c.harness)
                for c in cells})
