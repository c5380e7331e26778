"""``memdir grep``: search a store line by line, exactly as the grep tool does."""

from __future__ import annotations

import itertools
import json
from typing import Annotated, Any

import typer

from memdir.cli._common import StoreArg, fail, json_errors, open_store
from memdir.store import ROOT

__all__ = ["grep", "register"]


@json_errors
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
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object: every hit (up to "
                           "--max-results) with its path, line number and full text.")
    ] = False,
) -> None:
    """Search every line of the store's files for a regular expression.

    Frontmatter is searched too, so names and descriptions match. Each hit
    prints as /memories/file.md:LINE: text, the form a model sees from the
    grep tool; the output says when results were cut off at --max-results.

    Exit status: 0 searched (with or without hits), 2 bad pattern or no such store.

    For example:

        memdir grep ./memories 'Bristol|Leeds' -i

        memdir grep ./memories '^description:' --path /memories/people --json
    """
    import asyncio

    from memdir.store import StoreError
    from memdir.tools._grep import grep_store, grep_tool
    from memdir.tools._spec import ToolError

    store = open_store(store_path)
    try:
        if as_json:
            found = grep_store(store, pattern, path, ignore_case)
            limit = None if max_results is None else max_results + 1
            hits = list(itertools.islice(found, limit))
            complete = max_results is None or len(hits) <= max_results
            typer.echo(json.dumps({
                "pattern": pattern, "path": store.resolve(path).virtual,
                "hits": [{"path": h.path, "line": h.line, "text": h.text}
                         for h in hits[:max_results]],
                "complete": complete,
            }, indent=2, ensure_ascii=False))
            return
        # The grep tool's own function, so the text is the model's, without building
        # the whole read set (its other tools' schemas) for one call.
        args: dict[str, Any] = {"pattern": pattern, "path": path, "ignore_case": ignore_case}
        if max_results is not None:
            args["max_results"] = max_results
        tool = grep_tool(store)

        async def run() -> str:
            return await tool(**args)

        typer.echo(asyncio.run(run()))
    except (ToolError, StoreError) as exc:
        fail(str(exc))


def register(app: typer.Typer) -> None:
    """Add ``grep`` to the command line."""
    app.command("grep")(grep)
