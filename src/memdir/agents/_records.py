"""Run records: one per model call, one per episode (a role's whole loop).

Records are versioned pydantic models. Reports only read them; prices are
applied to them afterwards (see :mod:`memdir.agents._prices`), so a record never
holds a dollar figure of its own.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from memdir.agents._usage import Usage

__all__ = ["RESULT_CHARS", "SCHEMA_VERSION", "CallRecord", "EpisodeRecord", "ToolCallRecord"]

SCHEMA_VERSION: Final = 2
"""Version 2 added each tool call's result; version 1 records load with ``result`` None."""
RESULT_CHARS: Final = 200_000
"""Most characters of one tool result a record keeps: above the tools' own cap on what a
model is shown (``MEMDIR_TOOL_OUTPUT_CHARS``, 160,000 by default), so a record holds the
whole result the model saw; the limit only bounds a record where that cap was raised."""


class ToolCallRecord(BaseModel):
    """One tool call a model made and what came back: the text the model was shown.

    The result is stored once, error or not: for a failed call it is the error
    message the model read (see :attr:`error`).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] | str
    is_error: bool
    result: str | None = Field(
        default=None,
        description="The text the model was shown; None in records written before version 2.",
    )
    truncated: bool = Field(
        default=False,
        description=f"result keeps only the first {RESULT_CHARS} characters of a longer text.",
    )

    @classmethod
    def of(cls, id: str, name: str, arguments: dict[str, Any] | str, content: str,
           is_error: bool) -> ToolCallRecord:
        """The record of a call whose result the model saw as ``content``."""
        truncated = len(content) > RESULT_CHARS
        return cls(id=id, name=name, arguments=arguments, is_error=is_error,
                   result=content[:RESULT_CHARS] if truncated else content, truncated=truncated)

    @property
    def error(self) -> str | None:
        """The error message the model read, if the call failed and the record holds it."""
        return self.result if self.is_error else None


class CallRecord(BaseModel):
    """One model call of an episode."""

    schema_version: int = SCHEMA_VERSION
    role: str
    round: int = Field(ge=1, description="1-based; the forced final call counts as a round.")
    model: str
    prompt_hash: str
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    stop_reason: str
    latency_s: float = Field(ge=0, description="Wall time of the model call, retries included.")
    retries: int = Field(default=0, ge=0, description="Attempts that failed before this one.")
    usage: Usage = Field(default_factory=Usage)
    forced_final: bool = Field(
        default=False, description="The call asking for the final answer after the budget ran out."
    )
    kept_prefix: int | None = Field(
        default=None, ge=0,
        description="Set when the history was compacted before this call: its context no "
        "longer extends the previous call's, and only its first kept_prefix input tokens (the "
        "part the compaction left unchanged, the first call's whole input) were seen before.",
    )


class EpisodeRecord(BaseModel):
    """A role's run from system prompt to final answer."""

    schema_version: int = SCHEMA_VERSION
    role: str
    model: str
    prompt_name: str
    prompt_hash: str
    toolset: str | None = None
    toolset_digest: str | None = None
    max_rounds: int
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    temperature: float | None = None
    calls: list[CallRecord] = Field(default_factory=list)
    final_text: str = ""
    budget_exhausted: bool = Field(
        default=False, description="The round budget ran out and the final answer was forced."
    )
    zero_cost_baseline: bool = Field(
        default=False, description="Played by the offline grep-reader policy, not an LLM."
    )
    error: str | None = None
    wall_s: float = Field(default=0.0, ge=0, description="Wall time of the whole episode.")

    @property
    def usage(self) -> Usage:
        """Tokens over every call of the episode."""
        return sum((c.usage for c in self.calls), Usage())

    @property
    def rounds(self) -> int:
        """Model calls made (tool rounds plus the final one)."""
        return len(self.calls)

    @property
    def tool_call_count(self) -> int:
        """Tool calls over every round."""
        return sum(len(c.tool_calls) for c in self.calls)

    @property
    def tool_errors(self) -> int:
        """Tool calls that came back as errors."""
        return sum(1 for c in self.calls for t in c.tool_calls if t.is_error)

    @property
    def model_time_s(self) -> float:
        """Seconds spent waiting on the model."""
        return sum(c.latency_s for c in self.calls)
