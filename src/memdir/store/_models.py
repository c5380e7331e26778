"""The pydantic models of a memory file's header, apart so that importing the store skips them.

:mod:`memdir.store._frontmatter` (and :mod:`memdir.store`) hand these out on first use.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Frontmatter", "SkillMetadata", "SkillSource"]


class Frontmatter(BaseModel):
    """The header of a memory file; unknown keys are preserved on round trips."""

    model_config = ConfigDict(extra="allow")

    name: str
    description: str
    metadata: dict[str, Any] | None = None

    def to_yaml(self) -> str:
        """Serialise in a stable key order: name, description, metadata, then the rest."""
        data: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.metadata is not None:
            data["metadata"] = self.metadata
        data.update(self.model_extra or {})
        import yaml  # imported where used: reading a store never loads the YAML emitter

        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000)


class SkillSource(BaseModel):
    """One task attempt an entry of the skill library was drawn from."""

    model_config = ConfigDict(extra="allow")

    task: str
    outcome: Literal["success", "failure"]


class SkillMetadata(BaseModel):
    """``metadata`` of an entry in the skill setting."""

    model_config = ConfigDict(extra="allow")

    type: Literal["skill", "note"]
    sources: list[SkillSource] = Field(default_factory=list)
    """May be empty here when the body's Sources section lists them instead
    (:func:`memdir.store.entry_sources`)."""
