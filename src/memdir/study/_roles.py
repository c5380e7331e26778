"""How a cell's variant and harness pick the search agent's prompt and tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

from memdir.agents import RoleConfig, SearchVariant, search_family_role
from memdir.builders import CATALOG, variant_spec
from memdir.study._config import HARNESS_SPECS, Cell, StudyConfig
from memdir.tools._harness import harness_prompt

__all__ = ["ASK_VARIANT", "HARNESS_TOOLSET", "search_role"]

ASK_VARIANT: Final[Mapping[str, SearchVariant]] = {
    name: cast(SearchVariant, spec.search_family) for name, spec in CATALOG.items()
}
"""Study variant -> the search prompt family of :func:`memdir.agents.ask` (from the catalog)."""

HARNESS_TOOLSET: Final[Mapping[str, str]] = {
    name: spec.search_toolset for name, spec in HARNESS_SPECS.items()
}
"""Harness -> the tool set the search agent gets on a store it browses."""


def search_role(cell: Cell, config: StudyConfig) -> RoleConfig:
    """The search role a cell runs: prompt and tools from its variant and harness.

    Under a harness the prompt is the family's, worded for the harness's tools
    (``<prompt>@<harness>``; center keeps the plain prompt).
    """
    spec = variant_spec(cell.variant)
    changes: dict[str, object] = {"toolset": spec.search_toolset}
    if spec.harnessed:
        family = search_family_role(spec.search_family)
        changes = {"toolset": HARNESS_TOOLSET[cell.harness],
                   "prompt": harness_prompt(family.prompt, cell.harness)}
    settings = config.search
    if settings.max_rounds is not None:
        changes["max_rounds"] = settings.max_rounds
    if settings.effort is not None:
        changes["reasoning_effort"] = settings.effort
    if settings.max_tokens is not None:
        changes["max_tokens"] = settings.max_tokens
    return search_family_role(spec.search_family, **changes)
