"""The ``memdir`` command line.

The application (:data:`app`, a typer app whose subcommands are imported on
first use) is built in :mod:`memdir.cli._app`, and only when a command needs
it: a plain ``memdir grep STORE PATTERN`` is answered by
:mod:`memdir.cli._fastgrep` without loading typer or pydantic at all, which
is most of that command's start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

    app: typer.Typer

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from memdir.cli._app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Entry point of the ``memdir`` executable."""
    import sys

    if sys.argv[1:2] == ["grep"]:
        from memdir.cli import _fastgrep

        try:
            if _fastgrep.run(sys.argv[2:]):
                return
        except KeyboardInterrupt:
            raise SystemExit(130) from None  # ExitCode.INTERRUPTED, without loading typer
    from memdir.cli._app import app

    app()
