"""The ``memdir`` command line.

The application (:data:`app`, a typer app whose subcommands are imported on
first use) is built in :mod:`memdir.cli._app`, and only when a command needs
it: a plain ``memdir grep STORE PATTERN`` is answered by
:mod:`memdir.cli._fastgrep` without loading typer or pydantic at all, which
is most of that command's start-up (and a plain call of a read-only tool set by
:mod:`memdir.cli._fasttool`); a plain ``memdir serve STORE`` starts
reading its client in :mod:`memdir.cli._fastserve` before the MCP SDK loads.
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

    if sys.argv[1:2] == ["serve"]:
        from memdir.cli import _fastserve

        _fastserve.start(sys.argv[2:])  # answers the client's opening while the rest loads
        if _fastserve.feed() is not None:
            try:
                from memdir.cli._app import app

                app()
            except KeyboardInterrupt:
                # The client may have its answers before the server is up: Ctrl-C while
                # the rest loads stops it as Ctrl-C stops it serving.
                sys.stderr.write("stopped.\n")
                raise SystemExit(130) from None
            return
    elif sys.argv[1:2] in (["grep"], ["tool"]):
        from memdir.cli import _fastgrep, _fasttool

        fast = _fastgrep.run if sys.argv[1] == "grep" else _fasttool.run
        try:
            if fast(sys.argv[2:]):
                return
        except KeyboardInterrupt:
            raise SystemExit(130) from None  # ExitCode.INTERRUPTED, without loading typer
    from memdir.cli._app import app

    app()
