"""The registry of tool sets by name."""

from __future__ import annotations

from typing import Literal, get_args

from memdir.store import Store
from memdir.tools._spec import ToolSet

__all__ = ["TOOLSET_NAMES", "ToolSetName", "make_toolset"]

ToolSetName = Literal["write", "read", "bm25", "chunk", "shell", "folder", "anthropic"]
TOOLSET_NAMES: tuple[str, ...] = get_args(ToolSetName)


def make_toolset(name: str, store: Store) -> ToolSet:
    """Build the named tool set over ``store``.

    Raises:
        ValueError: ``name`` is not one of :data:`TOOLSET_NAMES`.
    """
    # Imported here so that building one set never loads another's dependencies.
    if name == "write":
        from memdir.tools._memory import write_set

        return write_set(store)
    if name == "read":
        from memdir.tools._memory import read_set

        return read_set(store)
    if name == "folder":
        from memdir.tools._memory import folder_set

        return folder_set(store)
    if name == "bm25":
        from memdir.tools._ranked import bm25_set

        return bm25_set(store)
    if name == "chunk":
        from memdir.tools._ranked import chunk_set

        return chunk_set(store)
    if name == "shell":
        from memdir.tools._shell import shell_set

        return shell_set(store)
    if name == "anthropic":
        from memdir.tools.anthropic import anthropic_set

        return anthropic_set(store)
    raise ValueError(f"unknown tool set {name!r}; choose one of {', '.join(TOOLSET_NAMES)}")
