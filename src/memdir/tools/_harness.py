"""The harnesses: which tools each role gets, and which prompt text describes them.

A harness is the tool set through which memory is written and read. The study
holds the store variant and the models fixed and swaps the harness, so every
role that touches a store goes through it: the search agent (and the skill
setting's retriever) reads with the harness's search set, and every store
builder (the management agent, the reorganizer, the foldering pass, the skill
curator) writes with the harness's builder set.

``center``
    The default tools: builders write with the ``write`` set (the memory
    command set plus grep), foldering moves files with ``folder`` (view, grep,
    a rename that only moves), searchers read with ``read`` (view, grep, toc,
    section_read).
``center+bm25``
    The same sets with ranked whole-file ``search`` added on both sides:
    ``bm25-write``, ``bm25-folder`` and ``bm25``.
``shell``
    One ``bash`` tool over the same store instead of every other tool:
    writable (``shell``) for builders, foldering included (the build still
    checks that foldering only moved files), read-only (``shell-read``, the
    store mounted read-only) for searchers.

Each harness also names the prompt blocks that describe its tools. The prompts
include the center wording by block name; under another harness
:func:`memdir.agents.load_prompt` puts the harness's block in its place (a
prompt named ``<prompt>@<harness>``), so the contract text around the tool
sentences stays the same across harnesses.

This module is data only: it imports no tool set, so reading the catalog never
loads bm25s, numpy or a sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

__all__ = [
    "BUILDER_ROLES",
    "DEFAULT_HARNESS",
    "HARNESSES",
    "HARNESS_SPECS",
    "SEARCH_ROLES",
    "TOOL_BLOCKS",
    "HarnessSpec",
    "harness_prompt",
    "harness_spec",
    "split_prompt_name",
]

DEFAULT_HARNESS: Final = "center"
"""The harness of every build and search that names none (and of older records)."""

BUILDER_ROLES: Final[tuple[str, ...]] = ("management", "reorganizer", "foldering", "curator")
"""The roles that write a store (:func:`memdir.agents.role_config` names)."""
SEARCH_ROLES: Final[tuple[str, ...]] = ("search", "retriever")
"""The roles that read a store."""

TOOL_BLOCKS: Final[tuple[str, ...]] = (
    "tools-search-tree", "tools-search-flat", "tools-search-foldered", "cite-lines",
    "store-listing", "survey-chunk", "survey-dump", "reorganize-edit", "writing-edit",
    "foldering-tools", "foldering-method", "tools-retrieve", "survey-library",
)
"""The prompt blocks that name tools; every other block is tool-neutral.

Each is written for ``center`` under its own name; a harness maps the ones whose
wording it changes to its own block."""

_SEARCH_BLOCKS: Final = ("tools-search-tree", "tools-search-flat", "tools-search-foldered")
_BM25_BLOCKS: Final = (*_SEARCH_BLOCKS, "survey-chunk", "survey-dump", "foldering-tools",
                       "foldering-method", "tools-retrieve", "survey-library")


@dataclass(frozen=True)
class HarnessSpec:
    """One harness: the tool set of each role that touches a store, and its prompt blocks."""

    name: str
    search_toolset: str
    """The tool set of the search agent and the retriever (:data:`SEARCH_ROLES`)."""
    build_toolsets: Mapping[str, str]
    """Each builder role (:data:`BUILDER_ROLES`) -> the tool set it writes with."""
    blocks: Mapping[str, str] = field(default_factory=dict)
    """Tool block (:data:`TOOL_BLOCKS`) -> the block this harness sends in its place;
    blocks not named keep the center wording."""

    def toolset_for(self, role: str) -> str:
        """The tool set ``role`` gets under this harness.

        Raises:
            ValueError: ``role`` neither builds nor searches a store.
        """
        if role in SEARCH_ROLES:
            return self.search_toolset
        try:
            return self.build_toolsets[role]
        except KeyError:
            raise ValueError(
                f"role {role!r} does not touch a store under a harness; choose one of "
                f"{', '.join((*SEARCH_ROLES, *BUILDER_ROLES))}") from None

    @property
    def toolsets(self) -> frozenset[str]:
        """Every tool set this harness hands out."""
        return frozenset({self.search_toolset, *self.build_toolsets.values()})


def _builders(write: str, folder: str) -> Mapping[str, str]:
    return MappingProxyType({"management": write, "reorganizer": write, "foldering": folder,
                             "curator": write})


def _renamed(blocks: tuple[str, ...], suffix: str) -> Mapping[str, str]:
    return MappingProxyType({block: f"{block}-{suffix}" for block in blocks})


HARNESS_SPECS: Final[Mapping[str, HarnessSpec]] = MappingProxyType({
    spec.name: spec for spec in (
        HarnessSpec("center", search_toolset="read",
                    build_toolsets=_builders(write="write", folder="folder")),
        HarnessSpec("center+bm25", search_toolset="bm25",
                    build_toolsets=_builders(write="bm25-write", folder="bm25-folder"),
                    blocks=_renamed(_BM25_BLOCKS, "bm25")),
        HarnessSpec("shell", search_toolset="shell-read",
                    build_toolsets=_builders(write="shell", folder="shell"),
                    blocks=_renamed(TOOL_BLOCKS, "shell")),
    )
})
"""Every harness by name, in the study's order."""
HARNESSES: Final[tuple[str, ...]] = tuple(HARNESS_SPECS)


def harness_spec(name: str) -> HarnessSpec:
    """The catalog entry of harness ``name``.

    Raises:
        ValueError: ``name`` is no harness.
    """
    try:
        return HARNESS_SPECS[name]
    except KeyError:
        raise ValueError(
            f"unknown harness {name!r}; choose one of {', '.join(HARNESSES)}") from None


def harness_prompt(prompt: str, harness: str) -> str:
    """The name of ``prompt`` as sent under ``harness`` (``<prompt>@<harness>``).

    Under ``center`` the prompt keeps its plain name: its text is the one written.

    Raises:
        ValueError: ``harness`` is no harness.
    """
    harness_spec(harness)
    base, _ = split_prompt_name(prompt)
    return base if harness == DEFAULT_HARNESS else f"{base}@{harness}"


def split_prompt_name(name: str) -> tuple[str, str]:
    """A prompt name's plain prompt and harness (``center`` where it names none).

    Raises:
        ValueError: The name names an unknown harness.
    """
    base, sep, harness = name.partition("@")
    if not sep:
        return base, DEFAULT_HARNESS
    harness_spec(harness)
    return base, harness
