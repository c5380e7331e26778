"""What a study run writes: one record per question, a status per cell, a manifest per run.

Records are versioned pydantic models (:class:`memdir.runs.RunRecord`) written as
JSON; every report reads them and nothing else, so a report never re-runs a model.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from memdir.agents import EpisodeRecord, PriceTable, Usage
from memdir.builders import BuildRecord
from memdir.runs import RunRecord
from memdir.study._config import Cell

__all__ = [
    "STUDY_RECORD_VERSION",
    "CellStatus",
    "Grades",
    "QuestionRecord",
    "ReadSpan",
    "StoreInfo",
]

STUDY_RECORD_VERSION = 1


class ReadSpan(BaseModel):
    """A file, and the lines of it, that a search agent's tool call showed it."""

    tool: str
    path: str
    start: int | None = None
    end: int | None = None
    query: str | None = None
    """What the call looked for: grep's pattern, a search's query, the section's headings
    (None for a view, and in records written before it was kept)."""


class Grades(BaseModel):
    """Every grade a question got; None where the grader did not run."""

    f1: float | None = None
    option_correct: bool | None = None
    judge_correct: int | None = None
    judge_reason: str | None = None
    attribution: dict[str, float] | None = None
    judge_cost: float | None = None
    judge_usage: Usage | None = None
    judge_error: str | None = None


class QuestionRecord(RunRecord):
    """One question answered in one cell."""

    version: int = STUDY_RECORD_VERSION
    cell: str
    question_id: str
    order: int | None
    category: int
    category_name: str
    question: str
    gold: str | None
    defective_gold: bool = False
    evidence: list[str] = Field(default_factory=list)
    answer: str
    citations: list[dict[str, Any]] = Field(default_factory=list)
    wall_s: float = 0.0
    reads: list[ReadSpan] = Field(default_factory=list)
    evidence_seen: list[str] = Field(default_factory=list)
    """Evidence locators that appeared in any tool result the agent saw."""
    evidence_cited: list[str] = Field(default_factory=list)
    """Evidence locators inside the lines or files the answer cited."""
    grades: Grades = Field(default_factory=Grades)
    episode: EpisodeRecord
    """The search agent's episode; rounds, tool calls, usage and cost derive from it.

    Records written before that also copied those figures as fields; they load
    unchanged (the copies are ignored: each equals what its episode gives).
    """

    @property
    def usage(self) -> Usage:
        """Tokens the search agent spent on the question."""
        return self.episode.usage

    @property
    def rounds(self) -> int:
        """Model calls the search agent made."""
        return self.episode.rounds

    @property
    def tool_calls(self) -> int:
        """Tool calls over every round."""
        return self.episode.tool_call_count

    @property
    def tool_errors(self) -> int:
        """Tool calls that came back as errors."""
        return self.episode.tool_errors

    @property
    def budget_exhausted(self) -> bool:
        """Whether the round budget ran out and the final answer was forced."""
        return self.episode.budget_exhausted

    @property
    def zero_cost_baseline(self) -> bool:
        """Whether memdir's offline policy answered (no LLM, no cost)."""
        return self.episode.zero_cost_baseline

    def cost(self, prices: PriceTable) -> float | None:
        """Dollars the search agent spent by ``prices``; None where a rate is unknown."""
        return prices.cost(self.episode.model, self.episode.usage)


class StoreInfo(RunRecord):
    """A built store: where it is, how it was built, and its profile."""

    key: str
    variant: str
    path: str | None
    build: BuildRecord | None = None
    """The builder's record (None where the build failed)."""
    build_usage: Usage | None = None
    """Tokens the build spent (model-built stores; None for the zero-cost ones)."""
    build_cost: float | None = None
    """Dollars the build spent by the price table (None: zero-cost store or unknown price)."""
    profile: dict[str, Any] = Field(default_factory=dict)
    """Panel A (shape) and Panel B (taxonomy) figures from memdir.metrics.measure_store.

    Runs written before Panel B was kept hold the shape figures only; the report
    measures such a store's folder, where it still exists, for its Panel B."""
    error: str | None = None


class CellStatus(RunRecord):
    """Whether a cell completed; a cell that did not is never reported."""

    version: int = STUDY_RECORD_VERSION
    cell: Cell
    status: Literal["complete", "failed", "pending"]
    questions: int = 0
    answered: int = 0
    reason: str | None = None
    store: str | None = None
    toolset_digest: str | None = None
    prompt_hash: str | None = None
