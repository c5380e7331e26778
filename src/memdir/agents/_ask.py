"""``ask``: the search agent answers one question from a store, with checked citations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict, Field

from memdir.agents._citations import Citation, resolve_citations
from memdir.agents._loop import run_agent
from memdir.agents._models import OFFLINE_MODEL
from memdir.agents._prices import PriceTable
from memdir.agents._prompts import load_prompt
from memdir.agents._records import EpisodeRecord
from memdir.agents._roles import RoleConfig, role_config
from memdir.agents._usage import Usage
from memdir.store import Store
from memdir.tools import make_toolset

__all__ = [
    "SEARCH_FAMILIES",
    "SEARCH_VARIANTS",
    "Answer",
    "SearchFamily",
    "SearchVariant",
    "ask",
    "search_family_role",
]

SearchVariant = Literal["hierarchical", "foldered", "flat", "chunk", "closed-book"]
"""A search prompt family: the form of store the search agent is told it reads."""


@dataclass(frozen=True)
class SearchFamily:
    """One search prompt family: its system prompt, default tool set and round cap."""

    prompt: str
    toolset: str | None
    max_rounds: int | None = None
    """A fixed round cap (None: the search role's budget)."""


SEARCH_FAMILIES: Final[Mapping[str, SearchFamily]] = {
    "hierarchical": SearchFamily("search-hierarchical", "read"),
    "foldered": SearchFamily("search-foldered", "read"),
    "flat": SearchFamily("search-flat", "read"),
    "chunk": SearchFamily("search-chunk", "chunk"),
    "closed-book": SearchFamily("search-closed-book", None, max_rounds=1),
}
SEARCH_VARIANTS: tuple[str, ...] = tuple(SEARCH_FAMILIES)
"""The families' names (the same as :data:`SearchVariant`'s; a test keeps them equal)."""


def _family(name: str) -> SearchFamily:
    try:
        return SEARCH_FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown search family {name!r}; choose one of "
                         f"{', '.join(SEARCH_FAMILIES)}") from None


def search_family_role(family: str, **changes: object) -> RoleConfig:
    """The search role of a prompt family, with ``changes`` applied over its defaults.

    A family's fixed round cap (closed-book answers in one call) wins over a
    ``max_rounds`` change.

    Raises:
        ValueError: ``family`` is not one of :data:`SEARCH_FAMILIES`.
    """
    entry = _family(family)
    settings: dict[str, object] = {"prompt": entry.prompt, "toolset": entry.toolset, **changes}
    if entry.max_rounds is not None:
        settings["max_rounds"] = entry.max_rounds
    return role_config("search", **settings)


class Answer(BaseModel):
    """An answer from the store: text, checked citations, tokens, cost and records."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    question: str
    text: str
    model: str
    citations: list[Citation] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    cost: float | None = None
    zero_cost_baseline: bool = False
    records: list[EpisodeRecord] = Field(default_factory=list)

    @property
    def citations_resolve(self) -> bool:
        """Every citation points at a real file, line range or section."""
        return all(c.resolved for c in self.citations)


async def ask(
    store: Store | None,
    question: str,
    model: Model | str | None = None,
    *,
    variant: SearchVariant = "hierarchical",
    role: RoleConfig | None = None,
    prices: PriceTable | None = None,
) -> Answer:
    """Answer ``question`` from ``store`` with the search agent.

    Args:
        store: The store to search (unused, and may be None, for ``closed-book``).
        question: The question; multiple-choice options may follow it inline.
        model: ``provider/model`` or an inspect_ai model; None runs the offline
            ``memdir/grep-reader`` policy, a zero-cost baseline with no LLM.
        variant: The search prompt family (:data:`SEARCH_FAMILIES`), which picks the
            prompt and tool set.
        role: Budget and settings; the search defaults for ``variant`` if None.
        prices: Price table for the cost (the shipped one if None).

    Raises:
        AgentError: A model call failed even after retries.
        ValueError: Unknown family, or no store for a family that needs one.
    """
    _family(variant)
    role = role or search_family_role(variant)
    if role.toolset is not None and store is None:
        raise ValueError(f"the {variant} search variant needs a store")
    tools = make_toolset(role.toolset, store) if role.toolset and store is not None else None
    system = load_prompt(role.prompt)
    user = load_prompt("turn-question", question=question).text
    run = await run_agent(model if model is not None else OFFLINE_MODEL, role, system, user, tools)
    record = run.record
    prices = prices or PriceTable.load()
    citations = resolve_citations(store, run.text) if store is not None else []
    return Answer(
        question=question,
        text=run.text,
        model=record.model,
        citations=citations,
        usage=record.usage,
        cost=prices.cost(record.model, record.usage),
        zero_cost_baseline=record.zero_cost_baseline,
        records=[record],
    )
