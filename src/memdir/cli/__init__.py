"""The ``memdir`` command line.

Each subcommand lives in its own module of this package and exposes
``register(app)``; modules are discovered at start-up, so adding a subcommand
never edits this file.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

__all__ = ["app", "main"]

app = typer.Typer(
    name="memdir",
    help="Filesystem-based memory for LLM agents: a store of markdown files, "
    "the tools agents use on it, and the study framework to measure them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_all() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_all()


def main() -> None:
    """Entry point of the ``memdir`` executable."""
    app()
