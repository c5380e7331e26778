"""What a build reports: which store it made, how big, what it cost, and how it got there.

Version 2 adds the model-driven builds: one :class:`UnitRecord` per chunk
(curated), per pass (reorganized) or for the one episode (foldered), with their
totals, the moves and folders of a foldering, and the build's cache key. A
version-1 record (zero-cost builds only) still validates: every new field has a
default. Records written before the variants were one catalog spell the chunk
store ``chunk-retrieval``; they load as ``chunk``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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


class UnitFigures(BaseModel):
    """What a unit record written before its episode was kept copied from that episode."""

    model_config = ConfigDict(frozen=True)

    usage: Usage = Field(default_factory=Usage)
    rounds: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    budget_exhausted: bool = False
    wall_seconds: float = 0.0
    summary: str = ""


_COPIED = tuple(UnitFigures.model_fields)


class UnitRecord(BaseModel):
    """One unit of a model-driven build: a chunk, a pass, or the foldering episode.

    Rounds, tool calls, usage, wall time and the final reply derive from the
    unit's episode. A record that predates the kept episode carries them in
    ``copied``; one that kept both reads the episode and drops the copies.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["chunk", "pass", "episode"]
    index: int = Field(ge=1)
    label: str
    cost: float | None = None
    """Dollars by the price table; None if the model's price is unknown."""
    changed: bool = True
    """Whether the unit changed the store (a pass that did not ends a reorganization)."""
    episode: EpisodeRecord | None = None
    """Every model call of the unit (role, round, tool calls, stop reason, latency,
    usage), for compute bounds and audits; None in records written before it was kept."""
    copied: UnitFigures | None = None
    """The figures of a record written without its episode (None once the episode is kept)."""

    @model_validator(mode="before")
    @classmethod
    def _older_copies(cls, data: Any) -> Any:
        """Fold the copied figures of an older record into ``copied`` (or drop them)."""
        if isinstance(data, dict) and any(k in data for k in _COPIED):
            data = dict(data)
            figures = {k: data.pop(k) for k in _COPIED if k in data}
            if data.get("episode") is None:
                data["copied"] = figures
        return data

    def _figures(self) -> UnitFigures:
        if self.episode is None:
            return self.copied or UnitFigures()
        e = self.episode
        return UnitFigures(usage=e.usage, rounds=e.rounds, tool_calls=e.tool_call_count,
                           tool_errors=e.tool_errors, budget_exhausted=e.budget_exhausted,
                           wall_seconds=e.wall_s, summary=e.final_text)

    @property
    def usage(self) -> Usage:
        """Tokens over every model call of the unit."""
        return self._figures().usage

    @property
    def rounds(self) -> int:
        """Model calls the unit made."""
        return self._figures().rounds

    @property
    def tool_calls(self) -> int:
        """Tool calls over every round."""
        return self._figures().tool_calls

    @property
    def tool_errors(self) -> int:
        """Tool calls that came back as errors."""
        return self._figures().tool_errors

    @property
    def budget_exhausted(self) -> bool:
        """Whether the round budget ran out."""
        return self._figures().budget_exhausted

    @property
    def wall_seconds(self) -> float:
        """Wall time of the unit's episode."""
        return self._figures().wall_seconds

    @property
    def summary(self) -> str:
        """The agent's final reply."""
        return self._figures().summary

    @classmethod
    def from_episode(cls, kind: Literal["chunk", "pass", "episode"], index: int, label: str,
                     episode: EpisodeRecord, cost: float | None,
                     changed: bool = True) -> UnitRecord:
        """The unit record of one agent episode."""
        return cls(kind=kind, index=index, label=label, cost=cost, changed=changed,
                   episode=episode)


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
    harness: str = "center"
    """The harness the store was written through; records from before harnesses, and
    stores no model writes, read ``center``."""
    toolset: str | None = None
    """The builder's tool set (a model-built store; None in older records)."""
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
