"""One entry point that builds every variant's store by name, zero-cost ones included."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from inspect_ai.model import Model

from memdir.agents import PriceTable, RoleConfig
from memdir.builders._catalog import variant_spec
from memdir.builders._curated import build_curated
from memdir.builders._episodes import BuiltStore
from memdir.builders._foldered import build_foldered
from memdir.builders._key import builder_role
from memdir.builders._record import BuildRecord
from memdir.builders._reorganized import DEFAULT_MAX_PASSES, build_reorganized
from memdir.builders._zero_cost import build_chunk_store, build_closed_book, build_verbatim
from memdir.conversation import DEFAULT_CHUNK_TOKENS, Conversation
from memdir.store import Store
from memdir.tools._harness import DEFAULT_HARNESS

__all__ = ["BUILDERS", "BuildJob", "BuiltVariant", "build_variant"]


@dataclass(frozen=True)
class BuildJob:
    """What one build is given: the conversation, where to build, and the settings."""

    conversation: Conversation
    store_dir: Path
    """Where a zero-cost store is written (a new store; the folder must hold no files)."""
    cache: Path
    """The folder of model-built stores, one build folder per configuration key."""
    model: Model | str | None
    role: RoleConfig | None
    chunk_tokens: int
    max_passes: int
    prices: PriceTable | None
    harness: str = DEFAULT_HARNESS
    """The harness a model-built store is written through (zero-cost stores ignore it)."""


@dataclass(frozen=True)
class BuiltVariant:
    """A built store (None for closed-book) and its record."""

    store: Store | None
    record: BuildRecord
    built: BuiltStore | None = None
    """The build folder and history of a model-built store."""


def _model_built(built: BuiltStore) -> BuiltVariant:
    return BuiltVariant(built.store, built.record, built)


def _new_store(job: BuildJob) -> Store:
    return Store(job.store_dir, create=True)


async def _closed_book(job: BuildJob) -> BuiltVariant:
    return BuiltVariant(None, build_closed_book(job.conversation))


async def _chunk(job: BuildJob) -> BuiltVariant:
    store = _new_store(job)
    return BuiltVariant(store, build_chunk_store(job.conversation, store, job.chunk_tokens))


async def _verbatim(job: BuildJob) -> BuiltVariant:
    store = _new_store(job)
    return BuiltVariant(store, build_verbatim(job.conversation, store))


def _model(job: BuildJob) -> Model | str:
    if job.model is None:
        raise ValueError("this variant's store is written by a model; give a builder model")
    return job.model


async def _foldered(job: BuildJob) -> BuiltVariant:
    return _model_built(await build_foldered(job.conversation, job.cache, _model(job),
                                             role=job.role, harness=job.harness,
                                             prices=job.prices))


async def _reorganized(job: BuildJob, condense: bool) -> BuiltVariant:
    return _model_built(await build_reorganized(
        job.conversation, job.cache, _model(job), condense=condense, role=job.role,
        harness=job.harness, max_passes=job.max_passes, prices=job.prices))


async def _preserve(job: BuildJob) -> BuiltVariant:
    return await _reorganized(job, condense=False)


async def _condense(job: BuildJob) -> BuiltVariant:
    return await _reorganized(job, condense=True)


async def _curated(job: BuildJob) -> BuiltVariant:
    return _model_built(await build_curated(job.conversation, job.cache, _model(job),
                                            role=job.role, harness=job.harness,
                                            chunk_tokens=job.chunk_tokens, prices=job.prices))


BUILDERS: Final[Mapping[str, Callable[[BuildJob], Awaitable[BuiltVariant]]]] = {
    "closed-book": _closed_book, "chunk": _chunk, "verbatim": _verbatim,
    "foldered": _foldered, "reorganized-preserve": _preserve,
    "reorganized-condense": _condense, "curated": _curated,
}
"""The builder of each variant of :data:`memdir.builders.VARIANTS` (a test keeps them equal)."""


async def build_variant(
    variant: str, conversation: Conversation, *, store_dir: str | Path, cache: str | Path,
    model: Model | str | None = None, max_rounds: int | None = None,
    max_tokens: int | None = None, effort: str | None = None,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS, max_passes: int = DEFAULT_MAX_PASSES,
    prices: PriceTable | None = None, harness: str = DEFAULT_HARNESS,
) -> BuiltVariant:
    """Build (or, for a model-built variant, reuse or resume) a variant's store.

    Args:
        variant: One of :data:`memdir.builders.VARIANTS`.
        conversation: What the store holds.
        store_dir: Where a zero-cost store (chunk, verbatim) is written; it must hold
            no files yet. Unused by closed-book and the model-built variants.
        cache: The folder holding the model-built variants' build folders.
        model: The builder model (model-built variants only).
        max_rounds: Tool rounds per episode (the builder role's default if None).
        max_tokens: Output cap per call (the role's default if None).
        effort: Reasoning effort (the role's default if None).
        chunk_tokens: The chunk budget (chunk and curated).
        max_passes: Most reorganization passes (reorganized only).
        prices: Price table for the cost (the shipped one if None).
        harness: The harness a model-built store is written through: its builder
            tool set and the tool wording of the builder's prompt. Zero-cost stores
            are the same under every harness.

    Raises:
        BuildError: A model-driven build failed; the message says why and how to resume.
        ValueError: Unknown variant, or a model-built one without a model.
    """
    role = None
    if variant_spec(variant).model_built:
        role = builder_role(variant, conversation, harness=harness, max_rounds=max_rounds,
                            max_tokens=max_tokens, effort=effort)
    job = BuildJob(conversation, Path(store_dir), Path(cache), model, role, chunk_tokens,
                   max_passes, prices, harness)
    return await BUILDERS[variant](job)

