"""What a build reports: which store it made, how big, and what it cost."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BUILD_RECORD_VERSION", "BuildRecord", "Variant"]

BUILD_RECORD_VERSION = 1

Variant = Literal["closed-book", "chunk-retrieval", "verbatim"]
"""The zero-cost variants of the conversational study."""


class BuildRecord(BaseModel):
    """The record of one store build (versioned; reports read it, never re-run builds)."""

    model_config = ConfigDict(frozen=True)

    version: int = BUILD_RECORD_VERSION
    variant: Variant
    conversation_id: str
    benchmark: str | None = None
    """The conversation's benchmark; None for a conversation that comes from no benchmark."""
    files: list[str] = Field(default_factory=list)
    """Store paths written, in order."""
    bytes: int = 0
    """UTF-8 bytes of every file written."""
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    wall_seconds: float = 0.0
    chunk_tokens: int | None = None
    """The chunk budget used (chunk retrieval only)."""
