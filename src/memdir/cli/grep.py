"""``memdir grep``: search a store line by line, exactly as the grep tool does."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from memdir.cli._common import StoreArg, call_tool, load_toolset, open_store, print_result
from memdir.store import ROOT

__all__ = ["grep", "register"]


def grep(
    store_path: StoreArg,
    pattern: Annotated[str, typer.Argument(metavar="PATTERN",
                                           help="A Python regular expression.")],
    path: Annotated[
        str, typer.Option("--path", "-p", help="Search only this folder or file of the store.")
    ] = ROOT,
    max_results: Annotated[
        int | None,
        typer.Option("--max-results", min=1,
                     help="Stop after this many matching lines (default: the tool's own cap)."),
    ] = None,
    ignore_case: Annotated[
        bool, typer.Option("--ignore-case", "-i", help="Match letters regardless of case.")
    ] = False,
) -> None:
    """Search every line of the store's files for a regular expression.

    Frontmatter is searched too, so names and descriptions match. Each hit
    prints as /memories/file.md:LINE: text, the form a model sees from the
    grep tool; the output says when results were cut off at --max-results.

    Exit status: 0 searched (with or without hits), 2 bad pattern or no such store.

    For example:

        memdir grep ./memories 'Bristol|Leeds' -i

        memdir grep ./memories '^description:' --path /memories/people
    """
    args: dict[str, Any] = {"pattern": pattern, "path": path, "ignore_case": ignore_case}
    if max_results is not None:
        args["max_results"] = max_results
    toolset = load_toolset("read", open_store(store_path))
    print_result(call_tool(toolset, "grep", args))


def register(app: typer.Typer) -> None:
    """Add ``grep`` to the command line."""
    app.command("grep")(grep)
