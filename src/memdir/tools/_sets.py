"""The registry of tool sets by name: one line per set, naming the function that builds it.

A set's module is imported only when the set is built, so building one set never
loads another set's dependencies (the ranked sets need bm25s, the shell set a
sandbox). Facts about a set (are all its tools read-only?) are derived from its
tools' own declarations (:attr:`ToolSet.read_only`), never restated here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Final

from memdir.store import Store
from memdir.tools._spec import ToolSet

__all__ = ["TOOLSETS", "TOOLSET_NAMES", "make_toolset"]

TOOLSETS: Final[Mapping[str, str]] = {
    "write": "memdir.tools._memory:write_set",
    "read": "memdir.tools._memory:read_set",
    "bm25": "memdir.tools._ranked:bm25_set",
    "bm25-write": "memdir.tools._ranked:bm25_write_set",
    "bm25-folder": "memdir.tools._ranked:bm25_folder_set",
    "chunk": "memdir.tools._ranked:chunk_set",
    "shell": "memdir.tools._shell:shell_set",
    "shell-read": "memdir.tools._shell:shell_read_set",
    "folder": "memdir.tools._memory:folder_set",
    "anthropic": "memdir.tools.anthropic:anthropic_set",
}
"""Each set's name -> ``module:function`` that builds it over a store."""

TOOLSET_NAMES: Final[tuple[str, ...]] = tuple(TOOLSETS)


def _factory(name: str) -> Callable[[Store], ToolSet]:
    try:
        target = TOOLSETS[name]
    except KeyError:
        raise ValueError(f"unknown tool set {name!r}; choose one of "
                         f"{', '.join(TOOLSET_NAMES)}") from None
    module, _, function = target.partition(":")
    made: Callable[[Store], ToolSet] = getattr(import_module(module), function)
    return made


def make_toolset(name: str, store: Store) -> ToolSet:
    """Build the named tool set over ``store``.

    Raises:
        ValueError: ``name`` is not one of :data:`TOOLSET_NAMES`.
    """
    return _factory(name)(store)
