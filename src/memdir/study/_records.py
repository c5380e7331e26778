"""What a study run writes: one record per question, a status per cell, a manifest per run.

Records are versioned pydantic models (:class:`memdir.runs.RunRecord`) written as
JSON; every report reads them and nothing else, so a report never re-runs a model.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from memdir.agents import EpisodeRecord, Usage
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
    usage: Usage = Field(default_factory=Usage)
    cost: float | None = None
    rounds: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    budget_exhausted: bool = False
    zero_cost_baseline: bool = False
    wall_s: float = 0.0
    reads: list[ReadSpan] = Field(default_factory=list)
    evidence_seen: list[str] = Field(default_factory=list)
    """Evidence locators that appeared in any tool result the agent saw."""
    evidence_cited: list[str] = Field(default_factory=list)
    """Evidence locators inside the lines or files the answer cited."""
    grades: Grades = Field(default_factory=Grades)
    episode: EpisodeRecord


class StoreInfo(RunRecord):
    """A built store: where it is, how it was built, and its profile."""

    key: str
    variant: str
    path: str | None
    build: dict[str, Any] | None = None
    """The builder's BuildRecord as JSON (None where the build failed)."""
    build_usage: Usage | None = None
    """Tokens the build spent (model-built stores; None for the zero-cost ones)."""
    build_cost: float | None = None
    """Dollars the build spent by the price table (None: zero-cost store or unknown price)."""
    profile: dict[str, Any] = Field(default_factory=dict)
    """Files, bytes and shape figures from memdir.metrics.measure_store."""
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
