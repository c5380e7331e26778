"""``memdir toc``: a file's heading outline, exactly as the toc tool shows it."""

from __future__ import annotations

from typing import Annotated

import typer

from memdir.cli._common import (
    StoreArg,
    call_tool,
    fail,
    json_errors,
    load_toolset,
    open_store,
    print_json,
    print_result,
)

__all__ = ["register", "toc"]


@json_errors
def toc(
    store_path: StoreArg,
    file: Annotated[
        str, typer.Argument(help="A file of the store, e.g. /memories/people/maya.md.")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object: each section's heading "
                           "path, level and first and last line.")
    ] = False,
) -> None:
    """Show the heading outline of a memory file with the lines each section spans.

    The line ranges can be passed to `memdir view --range`, and the heading
    texts to `memdir view --section`.

    Exit status: 0 shown, 2 no such store or file.

    For example:

        memdir toc ./memories /memories/people/maya.md

        memdir toc ./memories /memories/people/maya.md --json
    """
    store = open_store(store_path)
    if as_json:
        from memdir.store import StoreError, load_document

        try:
            doc = load_document(store, store.resolve(file, "file").virtual)
        except StoreError as exc:
            fail(str(exc))
        print_json({"path": doc.path, "lines": len(doc.text.splitlines()), "sections": [
            {"heading": list(s.path), "level": s.heading.level, "start": s.start, "end": s.end}
            for s in doc.sections]})
        return
    from memdir.tools._textcache import single_use

    toolset = load_toolset("read", store)
    with single_use():  # this process makes one call: no watches, no text kept
        result = call_tool(toolset, "toc", {"path": file})
    print_result(result)


def register(app: typer.Typer) -> None:
    """Add ``toc`` to the command line."""
    app.command("toc")(toc)
