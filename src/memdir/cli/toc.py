"""``memdir toc``: a file's heading outline, exactly as the toc tool shows it."""

from __future__ import annotations

from typing import Annotated

import typer

from memdir.cli._common import StoreArg, call_tool, load_toolset, open_store, print_result

__all__ = ["register", "toc"]


def toc(
    store_path: StoreArg,
    file: Annotated[
        str, typer.Argument(help="A file of the store, e.g. /memories/people/alice.md.")
    ],
) -> None:
    """Show the heading outline of a memory file with the lines each section spans.

    The line ranges can be passed to `memdir view --range`, and the heading
    texts to `memdir view --section`.

    Exit status: 0 shown, 2 no such store or file.

    For example:

        memdir toc ./memories /memories/people/alice.md
    """
    toolset = load_toolset("read", open_store(store_path))
    print_result(call_tool(toolset, "toc", {"path": file}))


def register(app: typer.Typer) -> None:
    """Add ``toc`` to the command line."""
    app.command("toc")(toc)
