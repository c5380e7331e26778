"""The conversational variants of the study, each declared once.

Every entry says how its store comes about (rendered at no cost, or written by a
model in a builder role, with which system prompt per locator form, which user
turn, and which source text the build key hashes) and how it is searched (the
prompt family of :func:`memdir.agents.ask` and its tool set, or the cell's
harness). The study's config, roles, stores, estimate and manifest, the
dispatcher, the build key and ``memdir ask`` all read this table, so a new
variant is one entry here plus its builder.

This module is data only: it imports nothing from :mod:`memdir.builders`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Final, Literal

from pydantic import AfterValidator

from memdir.conversation import LocatorKind

__all__ = [
    "CATALOG",
    "HARNESS",
    "MODEL_BUILT",
    "OLD_VARIANT_NAMES",
    "VARIANTS",
    "SourceRule",
    "TurnTemplate",
    "VariantName",
    "VariantSpec",
    "not_model_built",
    "unknown_variant_message",
    "variant_hint",
    "variant_spec",
]

SourceRule = Literal["dump", "chunks", "none"]
"""What a build key hashes of the conversation: the verbatim dump's files, the chunks
the builder is shown, or nothing (the builder is not shown the conversation)."""

HARNESS: Final = "harness"
"""A search tool set chosen by the cell's harness rather than by the variant."""


@dataclass(frozen=True)
class TurnTemplate:
    """A builder's user turn: the prompt's name and the fields it is filled with."""

    prompt: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class VariantSpec:
    """One memory variant: how its store is made and how it is searched."""

    name: str
    search_family: str
    """The prompt family of :func:`memdir.agents.ask` that searches this store."""
    search_toolset: str | None
    """The search agent's tool set, :data:`HARNESS` (the cell's harness decides), or
    None (no tools)."""
    needs_store: bool
    role: str | None = None
    """The builder role (:func:`memdir.agents.role_config`); None: no model builds it."""
    prompts: Mapping[LocatorKind, str] = field(default_factory=dict)
    """The builder's system prompt for each locator form (``[S5T3]``, ``[B4M7]``)."""
    turn: TurnTemplate | None = None
    source: SourceRule = "none"

    @property
    def model_built(self) -> bool:
        """A model writes this variant's store."""
        return self.role is not None

    @property
    def harnessed(self) -> bool:
        """The search tool set comes from the cell's harness (so harnesses make cells)."""
        return self.search_toolset == HARNESS

    def prompt_for(self, locator: LocatorKind) -> str:
        """The builder's system prompt for a conversation with ``locator`` locators.

        Raises:
            ValueError: No model builds this variant.
        """
        if not self.model_built:
            raise ValueError(not_model_built(self.name))
        return self.prompts[locator]


_REORGANIZE_TURN = TurnTemplate("turn-reorganize", ("number", "total"))

_CATALOG: tuple[VariantSpec, ...] = (
    VariantSpec("closed-book", search_family="closed-book", search_toolset=None,
                needs_store=False),
    VariantSpec("chunk", search_family="chunk", search_toolset="chunk", needs_store=True),
    VariantSpec("verbatim", search_family="flat", search_toolset=HARNESS, needs_store=True),
    VariantSpec("foldered", search_family="foldered", search_toolset=HARNESS,
                needs_store=True, role="foldering",
                prompts={"session": "foldering", "block": "foldering"},
                turn=TurnTemplate("turn-foldering", ("count",)), source="dump"),
    VariantSpec("reorganized-preserve", search_family="hierarchical", search_toolset=HARNESS,
                needs_store=True, role="reorganizer",
                prompts={"session": "reorganize-preserve",
                         "block": "reorganize-preserve-blocks"},
                turn=_REORGANIZE_TURN, source="dump"),
    VariantSpec("reorganized-condense", search_family="hierarchical", search_toolset=HARNESS,
                needs_store=True, role="reorganizer",
                prompts={"session": "reorganize-condense",
                         "block": "reorganize-condense-blocks"},
                turn=_REORGANIZE_TURN, source="dump"),
    VariantSpec("curated", search_family="hierarchical", search_toolset=HARNESS,
                needs_store=True, role="management",
                prompts={"session": "management-conversation", "block": "management-blocks"},
                turn=TurnTemplate("turn-chunk", ("label", "chunk")), source="chunks"),
)

CATALOG: Final[Mapping[str, VariantSpec]] = {spec.name: spec for spec in _CATALOG}
VARIANTS: Final[tuple[str, ...]] = tuple(CATALOG)
"""Every variant's name, in the study's order."""
MODEL_BUILT: Final[tuple[str, ...]] = tuple(s.name for s in _CATALOG if s.model_built)
"""The variants whose store a model writes."""

OLD_VARIANT_NAMES: Final[Mapping[str, str]] = {
    "hierarchical": "curated", "flat": "verbatim", "chunk-retrieval": "chunk",
    "reorganized": "reorganized-preserve",
}
"""Names used before the variants were one list, and the variant each became."""


def variant_hint(name: str) -> str:
    """What to write instead of ``name``: its new name if it is an old one, else the list."""
    if name in OLD_VARIANT_NAMES:
        return f"{name!r} is an old name; the variant is now {OLD_VARIANT_NAMES[name]!r}"
    return f"choose one of {', '.join(VARIANTS)}"


def unknown_variant_message(name: str) -> str:
    """A one-line error for a name that is no variant, naming the one meant if it is old."""
    return f"unknown variant {name!r}: {variant_hint(name)}"


def not_model_built(name: str) -> str:
    """The one-line error for asking a model to build a variant no model builds."""
    return f"{name!r} is not a model-built variant; choose one of {', '.join(MODEL_BUILT)}"


def variant_spec(name: str) -> VariantSpec:
    """The catalog entry of variant ``name``.

    Raises:
        ValueError: ``name`` is no variant (an old name's message names the new one).
    """
    try:
        return CATALOG[name]
    except KeyError:
        raise ValueError(unknown_variant_message(name)) from None


def _known(name: str) -> str:
    variant_spec(name)
    return name


VariantName = Annotated[str, AfterValidator(_known)]
"""A variant's name, checked against the catalog where a pydantic model reads it."""
