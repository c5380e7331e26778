"""One entry point for every model-built variant, by name."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from inspect_ai.model import Model

from memdir.agents import PriceTable
from memdir.builders._curated import build_curated
from memdir.builders._episodes import BuiltStore
from memdir.builders._foldered import build_foldered
from memdir.builders._key import builder_role
from memdir.builders._reorganized import DEFAULT_MAX_PASSES, build_reorganized
from memdir.conversation import DEFAULT_CHUNK_TOKENS, Conversation

__all__ = ["MODEL_BUILT", "build_model_variant"]

MODEL_BUILT: Final = ("foldered", "reorganized-preserve", "reorganized-condense", "curated")
"""The variants whose store a model writes."""


async def build_model_variant(
    variant: str, conversation: Conversation, cache: str | Path, model: Model | str, *,
    max_rounds: int | None = None, max_tokens: int | None = None, effort: str | None = None,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS, max_passes: int = DEFAULT_MAX_PASSES,
    prices: PriceTable | None = None,
) -> BuiltStore:
    """Build (or reuse, or resume) a model-built variant's store.

    Args:
        variant: One of :data:`MODEL_BUILT`.
        conversation: What the store holds.
        cache: The folder holding build folders.
        model: The builder model.
        max_rounds: Tool rounds per episode (the role's default if None).
        max_tokens: Output cap per call (the role's default if None).
        effort: Reasoning effort (the role's default if None).
        chunk_tokens: The chunk budget (curated only).
        max_passes: Most reorganization passes (reorganized only).
        prices: Price table for the cost (the shipped one if None).

    Raises:
        BuildError: The build failed; the message says why and how to resume.
        ValueError: ``variant`` is not built by a model.
    """
    role = builder_role(variant, conversation, max_rounds=max_rounds, max_tokens=max_tokens,
                        effort=effort)
    if variant == "foldered":
        return await build_foldered(conversation, cache, model, role=role, prices=prices)
    if variant in ("reorganized-preserve", "reorganized-condense"):
        return await build_reorganized(conversation, cache, model,
                                       condense=variant == "reorganized-condense", role=role,
                                       max_passes=max_passes, prices=prices)
    return await build_curated(conversation, cache, model, role=role,
                               chunk_tokens=chunk_tokens, prices=prices)
