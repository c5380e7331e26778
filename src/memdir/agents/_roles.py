"""Roles: which prompt, which tools, and which budget and generation settings each runs with.

:class:`RoleConfig` is the shape; each setting declares the defaults of the roles it
runs beside the code that runs them (:func:`declare_role`): the search role here
(``ask``), the management role with ``ingest``, the other store builders in
:mod:`memdir.builders`, the skill roles in :mod:`memdir.skills`, the judge with the
judge (:mod:`memdir.bench.judge`). :func:`role_config` looks any declared role up
by name. The study's budgets: 40 tool rounds and an 8,192-token output cap for a
role that searches, 60 rounds and 32,768 tokens for one that writes a store, both
at high reasoning effort.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from inspect_ai.model import GenerateConfig
from pydantic import BaseModel, ConfigDict, Field

from memdir.agents._profiles import profile

__all__ = [
    "SEARCH_BUDGET",
    "SEARCH_ROLE",
    "WRITE_BUDGET",
    "Effort",
    "RoleConfig",
    "declare_role",
    "declared_roles",
    "role_config",
]

Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]


class RoleConfig(BaseModel):
    """How one role runs: its prompt, tool set, round budget and generation settings."""

    model_config = ConfigDict(frozen=True)

    role: str
    prompt: str = Field(description="Name of the prompt in memdir.agents.prompts.")
    toolset: str | None = Field(description="Tool set name (memdir.tools), None for no tools.")
    max_rounds: int = Field(ge=1, description="Model calls that may use tools.")
    max_tokens: int | None = Field(default=None, gt=0)
    reasoning_effort: Effort | None = None
    temperature: float | None = Field(default=None, ge=0)

    def generate_config(self, model_name: str) -> GenerateConfig:
        """The per-call generation settings for ``model_name`` (provider/model).

        What the provider takes comes from its profile (:mod:`memdir.agents._profiles`):
        reasoning effort only where the model accepts it, prompt caching switched
        on where it must be asked for, and no reasoning summary where asking for
        none spares a billed probe call.
        """
        found = profile(model_name)
        name = model_name.partition("/")[2]
        return GenerateConfig(
            max_tokens=self.max_tokens,
            reasoning_effort=self.reasoning_effort if found.takes_effort(name) else None,
            temperature=self.temperature,
            cache_prompt=True if found.cache_prompt else None,
            reasoning_summary="none" if found.no_reasoning_summary else None,
        )

    def with_(self, **changes: object) -> RoleConfig:
        """A copy with some fields changed (validated)."""
        return RoleConfig.model_validate({**self.model_dump(), **changes})


SEARCH_BUDGET: Final[Mapping[str, object]] = {
    "max_rounds": 40, "max_tokens": 8192, "reasoning_effort": "high",
}
"""The budget of a role that reads a store to answer (the search agent, the retriever)."""
WRITE_BUDGET: Final[Mapping[str, object]] = {
    "max_rounds": 60, "max_tokens": 32768, "reasoning_effort": "high",
}
"""The budget of a role that writes a store (management, reorganizer, foldering, curator)."""

_DECLARED: dict[str, RoleConfig] = {}


def declare_role(role: str, **defaults: object) -> RoleConfig:
    """Declare ``role``'s defaults, so :func:`role_config` finds it by name; return them.

    Raises:
        ValueError: The role was declared before with other defaults.
    """
    config = RoleConfig.model_validate({"role": role, **defaults})
    known = _DECLARED.setdefault(role, config)
    if known != config:
        raise ValueError(f"the role {role!r} is declared twice, with different defaults")
    return config


def declared_roles() -> tuple[str, ...]:
    """The names of every role declared so far, in declaration order."""
    return tuple(_DECLARED)


def role_config(role: str, **changes: object) -> RoleConfig:
    """The declared defaults of ``role``, with ``changes`` applied.

    Raises:
        ValueError: No loaded module declares ``role``.
    """
    known = _DECLARED.get(role)
    if known is None:
        raise ValueError(
            f"unknown role {role!r}; choose one of {', '.join(_DECLARED)} (the builder and "
            "skill roles are declared when memdir.builders and memdir.skills load)"
        )
    return known.with_(**changes) if changes else known


SEARCH_ROLE = declare_role("search", prompt="search-hierarchical", toolset="read", **SEARCH_BUDGET)
"""The search agent ``ask`` runs (the prompt and tools follow the store's variant there)."""
