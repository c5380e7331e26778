"""``memdir view``: show a file (or a part of it) or a folder, exactly as the view tool does."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from memdir.cli._common import StoreArg, call_tool, fail, load_toolset, open_store, print_result
from memdir.store import ROOT

__all__ = ["register", "view"]


def view(
    store_path: StoreArg,
    path: Annotated[
        str, typer.Argument(help="A file or folder inside the store, e.g. /memories/people.")
    ] = ROOT,
    line_range: Annotated[
        tuple[int, int] | None,
        typer.Option("--range", "-r", metavar="START END",
                     help="Show only lines START to END (1-based, inclusive; END -1 means to "
                     "the end of the file)."),
    ] = None,
    section: Annotated[
        str | None,
        typer.Option("--section", "-s",
                     help="Show only the section under these headings, outer to inner, joined "
                     "by '>' (e.g. 'Work > Past'); the section_read tool."),
    ] = None,
) -> None:
    """Show a memory file with numbered lines, or list a folder.

    The output is what a model sees from the read set's view tool (or, with
    --section, section_read): line numbers count from the top of the file,
    frontmatter included, so they match grep hits and citations such as
    /memories/people/alice.md:L10-15.

    Exit status: 0 shown, 2 no such store, file or section.

    For example:

        memdir view ./memories /memories/people/alice.md --range 5 20

        memdir view ./memories /memories/people/alice.md --section 'Work > Past'
    """
    if line_range is not None and section is not None:
        fail("--range and --section cannot be combined.", "use one of them.")
    toolset = load_toolset("read", open_store(store_path))
    if section is not None:
        steps = [s.strip().lstrip("#").strip() for s in section.split(">") if s.strip()]
        if not steps:
            fail("--section needs at least one heading.", "e.g. --section 'Work > Past'.")
        result = call_tool(toolset, "section_read", {"path": path, "heading_path": steps})
    else:
        args: dict[str, Any] = {"path": path}
        if line_range is not None:
            args["view_range"] = list(line_range)
        result = call_tool(toolset, "view", args)
    print_result(result)


def register(app: typer.Typer) -> None:
    """Add ``view`` to the command line."""
    app.command("view")(view)
