"""How a cell's variant and harness pick the search agent's prompt and tools."""

from __future__ import annotations

from memdir.agents import RoleConfig, SearchVariant, role_config
from memdir.study._config import Cell, StudyConfig

__all__ = ["ASK_VARIANT", "HARNESS_TOOLSET", "search_role"]

ASK_VARIANT: dict[str, SearchVariant] = {
    "closed-book": "closed-book", "chunk": "chunk", "verbatim": "flat",
    "foldered": "foldered", "reorganized-preserve": "hierarchical",
    "reorganized-condense": "hierarchical", "curated": "hierarchical",
}
"""Study variant -> the search prompt family member of :func:`memdir.agents.ask`."""

HARNESS_TOOLSET = {"center": "read", "center+bm25": "bm25", "shell": "shell"}
"""Harness -> the tool set the search agent gets on a store it browses."""


def search_role(cell: Cell, config: StudyConfig) -> RoleConfig:
    """The search role a cell runs: prompt and tools from its variant and harness."""
    variant = ASK_VARIANT[cell.variant]
    toolset = {"closed-book": None, "chunk": "chunk"}.get(variant, HARNESS_TOOLSET[cell.harness])
    changes: dict[str, object] = {"prompt": f"search-{variant}", "toolset": toolset}
    if variant == "closed-book":
        changes["max_rounds"] = 1
    elif config.search.max_rounds is not None:
        changes["max_rounds"] = config.search.max_rounds
    if config.search.effort is not None:
        changes["reasoning_effort"] = config.search.effort
    if config.search.max_tokens is not None:
        changes["max_tokens"] = config.search.max_tokens
    return role_config("search", **changes)
