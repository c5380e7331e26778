"""Exports a package takes from its submodules only when a name is first used (PEP 562).

A package whose submodules pull in heavy libraries (the MCP SDK, numpy) keeps its
``import`` light this way: it maps each public name to the submodule that defines it,
and the submodule loads the first time the name is looked up.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module ``__getattr__`` and ``__dir__`` for names that load on first use.

    Args:
        package: The package's ``__name__``.
        homes: Each public name -> the submodule (relative to ``package``) defining it.

    Returns:
        ``(__getattr__, __dir__)``, to assign at the package's top level. A name found
        once is kept in the package's namespace, so later lookups skip ``__getattr__``.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
