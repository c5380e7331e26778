"""``memdir view``: show a file (or a part of it) or a folder, exactly as the view tool does."""

from __future__ import annotations

import shlex
from typing import Annotated, Any

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
from memdir.store import ROOT, Store

__all__ = ["register", "view"]


@json_errors
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
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object: a file's numbered lines "
                           "(of the range or section asked for), or a folder's entries.")
    ] = False,
) -> None:
    """Show a memory file with numbered lines, or list a folder.

    The output is what a model sees from the read set's view tool (or, with
    --section, section_read): line numbers count from the top of the file,
    frontmatter included, so they match grep hits and citations such as
    /memories/people/maya.md:L10-15.

    Exit status: 0 shown, 2 no such store, file or section.

    For example:

        memdir view ./memories /memories/people/maya.md --range 5 20

        memdir view ./memories /memories/people/maya.md --section 'Work > Past'

        memdir view ./memories /memories/people --json
    """
    if line_range is not None and section is not None:
        fail("--range and --section cannot be combined.", "use one of them.")
    steps = [s.strip().lstrip("#").strip() for s in (section or "").split(">") if s.strip()]
    if section is not None and not steps:
        fail("--section needs at least one heading.", "e.g. --section 'Work > Past'.")
    store = open_store(store_path)
    if as_json:
        _print_json(store, path, line_range, steps if section is not None else None)
        return
    from memdir.tools._textcache import single_use

    toolset = load_toolset("read", store)
    args: dict[str, Any] = {"path": path}
    if line_range is not None:
        args["view_range"] = list(line_range)
    with single_use():  # this process makes one call: no watches, no text kept
        if section is not None:
            result = call_tool(toolset, "section_read", {"path": path, "heading_path": steps})
        else:
            result = call_tool(toolset, "view", args)
    if result.is_error and "not valid UTF-8" in result.content:
        fail(result.content.removeprefix("Error: "),
             f"search it with `memdir grep {shlex.quote(str(store_path))} PATTERN --path "
             f"{shlex.quote(path)}` (bad bytes show as \ufffd), or convert the file to UTF-8 "
             "(e.g. iconv -f latin1 -t utf-8).")
    print_result(result)


def _print_json(store: Store, path: str, line_range: tuple[int, int] | None,
                steps: list[str] | None) -> None:
    from memdir.cli.tree import entry_dict
    from memdir.store import StoreError, find_section, load_document

    try:
        target = store.resolve(path)
        if target.host.is_dir():
            print_json({"path": target.virtual, "kind": "folder",
                        "entries": [entry_dict(e) for e in store.walk(target.virtual,
                                                                       max_depth=2)]})
            return
        lines = store.read(target.virtual).splitlines()
        first, last = 1, len(lines)
        heading = None
        if steps is not None:
            doc = load_document(store, target.virtual)
            found = find_section(doc.body, steps, doc.body_line)
            first, last, heading = found.start, found.end, list(found.path)
        elif line_range is not None:
            first, last = line_range[0], (len(lines) if line_range[1] == -1 else line_range[1])
            if not 1 <= first <= max(last, 1) or last > len(lines):
                fail(f"--range {line_range[0]} {line_range[1]} is outside the file's "
                     f"{len(lines)} lines.", f"give START and END between 1 and {len(lines)}.")
    except (StoreError, LookupError) as exc:
        fail(str(exc).strip("'\""))
    data: dict[str, object] = {"path": target.virtual, "kind": "file", "total_lines": len(lines)}
    if heading is not None:
        data["section"] = heading
    data["lines"] = [{"line": n, "text": lines[n - 1]} for n in range(first, last + 1)]
    print_json(data)


def register(app: typer.Typer) -> None:
    """Add ``view`` to the command line."""
    app.command("view")(view)
