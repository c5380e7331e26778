"""What a build reports: which store it made, how big, what it cost, and how it got there.

Version 2 adds the model-driven builds: one :class:`UnitRecord` per chunk
(curated), per pass (reorganized) or for the one episode (foldered), with their
totals, the moves and folders of a foldering, and the build's cache key. A
version-1 record (zero-cost builds only) still validates: every new field has a
default. Records written before the variants were one catalog spell the chunk
store ``chunk-retrieval``; they load as ``chunk``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memdir.agents import EpisodeRecord, Usage
from memdir.builders._catalog import VariantName

__all__ = ["BUILD_RECORD_VERSION", "BuildError", "BuildRecord", "Move", "UnitRecord"]

BUILD_RECORD_VERSION = 2


class BuildError(RuntimeError):
    """A build could not finish; the message says why and what to do.

    The build folder keeps its last committed snapshot, so a rerun resumes there.
    """


class Move(BaseModel):
    """One file the foldering pass moved: where it was in the dump and where it is now."""

    model_config = ConfigDict(frozen=True)

    old: str
    new: str


class UnitRecord(BaseModel):
    """One unit of a model-driven build: a chunk, a pass, or the foldering episode."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["chunk", "pass", "episode"]
    index: int = Field(ge=1)
    label: str
    usage: Usage = Field(default_factory=Usage)
    cost: float | None = None
    """Dollars by the price table; None if the model's price is unknown."""
    rounds: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    budget_exhausted: bool = False
    wall_seconds: float = 0.0
    changed: bool = True
    """Whether the unit changed the store (a pass that did not ends a reorganization)."""
    summary: str = ""
    """The agent's final reply."""
    episode: EpisodeRecord | None = None
    """Every model call of the unit (role, round, tool calls, stop reason, latency,
    usage), for compute bounds and audits; None in records written before it was kept."""

    @classmethod
    def from_episode(cls, kind: Literal["chunk", "pass", "episode"], index: int, label: str,
                     episode: EpisodeRecord, cost: float | None,
                     changed: bool = True) -> UnitRecord:
        """The unit record of one agent episode."""
        return cls(
            kind=kind, index=index, label=label, usage=episode.usage, cost=cost,
            rounds=episode.rounds, tool_calls=episode.tool_call_count,
            tool_errors=episode.tool_errors, budget_exhausted=episode.budget_exhausted,
            wall_seconds=episode.wall_s, changed=changed, summary=episode.final_text,
            episode=episode,
        )


class BuildRecord(BaseModel):
    """The record of one store build (versioned; reports read it, never re-run builds)."""

    model_config = ConfigDict(frozen=True)

    version: int = BUILD_RECORD_VERSION
    variant: VariantName
    conversation_id: str
    benchmark: str | None = None
    """The conversation's benchmark; None for a conversation that comes from no benchmark."""
    files: list[str] = Field(default_factory=list)
    """Store paths written, in order (a model-built store: its files at the end, sorted)."""
    bytes: int = 0
    """UTF-8 bytes of every file written."""
    model_calls: int = 0
    input_tokens: int = 0
    """Every input token, cached or not."""
    output_tokens: int = 0
    wall_seconds: float = 0.0
    chunk_tokens: int | None = None
    """The chunk budget used (chunk and curated)."""
    builder_model: str | None = None
    key: str | None = None
    """The build's cache key (a model-built store only)."""
    prompt_name: str | None = None
    prompt_hash: str | None = None
    toolset_digest: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost: float | None = 0.0
    """Dollars over every unit; None if any unit's price is unknown."""
    tool_calls: int = 0
    tool_errors: int = 0
    budget_exhausted: int = 0
    """Units whose round budget ran out."""
    units: list[UnitRecord] = Field(default_factory=list)
    max_passes: int | None = None
    stopped_early: bool = False
    """A reorganization ended with a pass that changed nothing."""
    moves: list[Move] = Field(default_factory=list)
    """Foldered: every file that moved, dump path to final path."""
    folders: list[str] = Field(default_factory=list)
    """Foldered: the folders of the final store."""
    reused: bool = False
    """The store came from the build cache without a model call."""

    @field_validator("variant", mode="before")
    @classmethod
    def _old_chunk_spelling(cls, value: object) -> object:
        return "chunk" if value == "chunk-retrieval" else value


def unit_totals(units: list[UnitRecord]) -> dict[str, object]:
    """The BuildRecord fields that sum over units."""
    usage = sum((u.usage for u in units), Usage())
    costs = [u.cost for u in units]
    return {
        "usage": usage,
        "cost": None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
        "model_calls": sum(u.rounds for u in units),
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "tool_calls": sum(u.tool_calls for u in units),
        "tool_errors": sum(u.tool_errors for u in units),
        "budget_exhausted": sum(1 for u in units if u.budget_exhausted),
        "wall_seconds": sum(u.wall_seconds for u in units),
    }
