"""``memdir tree``: the store's folders and files, each file with its description."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Annotated

import typer
from rich.markup import escape

from memdir.cli._common import StoreArg, console, fail, json_errors, open_store, print_json
from memdir.store import ROOT, Entry, StoreError, listing_mark

__all__ = ["entry_dict", "register", "tree", "tree_lines"]


def _label(entry: Entry, mark: str | None = None) -> str:
    name = escape(entry.path.rsplit("/", 1)[-1])
    if entry.is_dir:
        return f"[bold blue]{name}/[/]"
    desc = escape(entry.description) if entry.description else "[red](no description)[/]"
    flag = f"[bold red]{escape(mark)}[/] " if mark else ""
    return f"{name}  [dim]{entry.size:,} B[/]  {flag}{desc}"


def entry_dict(entry: Entry) -> dict[str, object]:
    """One folder or file of a listing, for ``--json``."""
    if entry.is_dir:
        return {"path": entry.path, "kind": "folder", "depth": entry.depth}
    return {"path": entry.path, "kind": "file", "depth": entry.depth, "bytes": entry.size,
            "description": entry.description}


def tree_lines(top: str, entries: list[Entry],
               marks: Mapping[str, str] | None = None) -> list[str]:
    """Lines (rich markup) drawing ``entries``, as listed by :meth:`Store.walk`, under ``top``.

    Drawn by hand rather than with ``rich.tree`` so that long descriptions are
    never cropped to the terminal's width, and without recursion, so a tree
    deeper than the interpreter's recursion limit (made by hand or by a shell
    command) is drawn too. ``marks`` (path -> words) flags files before their
    description, e.g. the ones a sync left with a conflict.
    """
    children: dict[str, list[Entry]] = {}
    for entry in entries:
        children.setdefault(entry.path.rsplit("/", 1)[0], []).append(entry)
    lines = [f"[bold blue]{escape(top)}/[/]"]

    def pending(folder: str, prefix: str) -> list[tuple[Entry, str, bool]]:
        kids = children.get(folder, [])
        return [(e, prefix, k == len(kids) - 1) for k, e in enumerate(kids)][::-1]

    stack = pending(top, "")
    while stack:  # depth first with a stack: a thousand folders deep is drawn like three
        entry, prefix, last = stack.pop()
        label = _label(entry, (marks or {}).get(entry.path))
        lines.append(f"{prefix}{'└── ' if last else '├── '}{label}")
        if entry.is_dir:
            stack.extend(pending(entry.path, prefix + ("    " if last else "│   ")))
    return lines


@json_errors
def tree(
    store_path: StoreArg,
    path: Annotated[str, typer.Argument(help="The folder inside the store to show.")] = ROOT,
    depth: Annotated[
        int | None,
        typer.Option("--depth", "-d", min=1, help="Show this many levels (default: all)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object: every folder and file "
                           "with its depth, size and description.")
    ] = False,
) -> None:
    """Show the store as a tree, each file with its size and description.

    Names and descriptions are what an agent sees before it opens a file, so
    this is the quickest way to judge whether a store is easy to navigate.
    PATH is an agent path such as /memories/people.

    Exit status: 0 shown, 2 no such store or folder.

    For example:

        memdir tree ./memories /memories/people --depth 1

        memdir tree ./memories --json
    """
    store = open_store(store_path)
    try:
        top = store.resolve(path, "dir").virtual
        entries = store.walk(top, max_depth=depth)
    except StoreError as exc:
        fail(str(exc), f"list the whole store with `memdir tree {shlex.quote(str(store_path))}`.")
    files = sum(1 for e in entries if not e.is_dir)
    folders = len(entries) - files
    if as_json:
        print_json({"path": top, "folders": folders, "files": files,
                    "entries": [entry_dict(e) for e in entries]})
        return
    for line in tree_lines(top, entries, listing_mark(store.root)):
        console.print(line)
    console.print(f"[dim]{folders} folder(s), {files} file(s)[/]")


def register(app: typer.Typer) -> None:
    """Add ``tree`` to the command line."""
    app.command("tree")(tree)
