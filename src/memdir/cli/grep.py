"""``memdir grep``: search a store line by line, exactly as the grep tool does."""

from __future__ import annotations

import re
from typing import Annotated

import typer

from memdir.cli._common import StoreArg, fail, json_errors, open_store
from memdir.store import ROOT

__all__ = ["grep", "register"]

_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")
"""Terminal colour and cursor sequences (the pattern click strips from piped output)."""


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
    import sys

    from memdir.cli._fastgrep import emit, grep_output
    from memdir.store import StoreError
    from memdir.tools._spec import ToolError

    store = open_store(store_path, reads_only=True)
    try:
        text = grep_output(store, pattern, path, max_results, ignore_case, as_json)
    except (ToolError, StoreError) as exc:
        fail(str(exc))
    if "\x1b" in text and not sys.stdout.isatty():
        text = _ANSI.sub("", text)  # as typer.echo does: no terminal escapes into a pipe
    emit(text, as_json=as_json)


def register(app: typer.Typer) -> None:
    """Add ``grep`` to the command line."""
    app.command("grep")(grep)
