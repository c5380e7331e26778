"""Roles: which prompt, which tools, and which budget and generation settings each runs with.

Defaults follow the study's configuration: the search agent gets 40 tool rounds
and an 8,192-token output cap, the management agent (and the other store
builders) 60 rounds and 32,768 tokens, both at high reasoning effort; the
execution agent at temperature 0 with an 8,192-token cap. The judge's defaults
live with the judge (:mod:`memdir.bench.judge`).
"""

from __future__ import annotations

from typing import Literal

from inspect_ai.model import GenerateConfig
from pydantic import BaseModel, ConfigDict, Field

from memdir.agents._profiles import profile

__all__ = ["ROLE_NAMES", "Effort", "RoleConfig", "role_config"]

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


_SEARCH = {"max_rounds": 40, "max_tokens": 8192, "reasoning_effort": "high"}
_BUILD = {"max_rounds": 60, "max_tokens": 32768, "reasoning_effort": "high"}

_DEFAULTS: dict[str, dict[str, object]] = {
    "management": {"prompt": "management-conversation", "toolset": "write", **_BUILD},
    "reorganizer": {"prompt": "reorganize-preserve", "toolset": "write", **_BUILD},
    "foldering": {"prompt": "foldering", "toolset": "folder", **_BUILD},
    "curator": {"prompt": "curator", "toolset": "write", **_BUILD},
    "search": {"prompt": "search-hierarchical", "toolset": "read", **_SEARCH},
    "retriever": {"prompt": "retriever-cite", "toolset": "read", **_SEARCH},
    "execution": {"prompt": "execution", "toolset": None, "max_rounds": 50,
                  "max_tokens": 8192, "temperature": 0.0},
}

ROLE_NAMES: tuple[str, ...] = tuple(_DEFAULTS)


def role_config(role: str, **changes: object) -> RoleConfig:
    """The default configuration of ``role``, with ``changes`` applied.

    Raises:
        ValueError: ``role`` is not one of :data:`ROLE_NAMES`.
    """
    if role not in _DEFAULTS:
        raise ValueError(f"unknown role {role!r}; choose one of {', '.join(ROLE_NAMES)}")
    return RoleConfig.model_validate({"role": role, **_DEFAULTS[role], **changes})
