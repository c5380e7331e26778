"""``memdir tree``: the store's folders and files, each file with its description."""

from __future__ import annotations

import io
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from memdir.cli._common import StoreArg, console, fail, json_errors, open_store, print_json
from memdir.store import ROOT, Entry, Listed, StoreError, listing_mark

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["entry_dict", "register", "tree", "tree_lines", "tree_text"]

_PRINTED_LINES = 500
"""Lines written at once: one call to rich per line cost half the time, one for all of a
100,000-file tree held all of it rendered at once."""

_NOT_PLAIN = re.compile(r"[\[\\\t\n\r\x07\x08\x0b\x0c]|:\S*:")
"""What rich's printing may change in a line: markup and its escapes, tabs (expanded),
line breaks, the control codes it strips, and ``:name:`` emoji codes (a superset: any
two colons with no space between). A line without any of these prints as it is."""


def _label(entry: Entry, mark: str | None = None,
           hidden: Mapping[str, int] | None = None) -> str:
    name = escape(entry.path.rsplit("/", 1)[-1])
    if entry.is_dir:
        below = (hidden or {}).get(entry.path)
        return f"[bold blue]{name}/[/]" + (f"  [dim]{below:,} file(s) below[/]" if below else "")
    desc = escape(entry.description) if entry.description else "[red](no description)[/]"
    flag = f"[bold red]{escape(mark)}[/] " if mark else ""
    return f"{name}  [dim]{entry.size:,} B[/]  {flag}{desc}"


def files_below_the_cut(everything: Iterable[Entry], depth: int) -> dict[str, int]:
    """Files deeper than ``depth`` in ``everything``, counted under their folder at ``depth``."""
    counts: dict[str, int] = {}
    for entry in everything:
        if not entry.is_dir and entry.depth > depth:
            cut = "/".join(entry.path.split("/")[: entry.path.count("/") - entry.depth + depth + 1])
            counts[cut] = counts.get(cut, 0) + 1
    return counts


def entry_dict(entry: Entry) -> dict[str, object]:
    """One folder or file of a listing, for ``--json``."""
    if entry.is_dir:
        return {"path": entry.path, "kind": "folder", "depth": entry.depth}
    return {"path": entry.path, "kind": "file", "depth": entry.depth, "bytes": entry.size,
            "description": entry.description}


def _branches(depths: list[int]) -> list[str]:
    """The start of each entry's line (its prefix and branch), for entries in tree order.

    ``depths`` are the entries' depths in :meth:`Store.walk`'s order (a folder's own
    entries right after it). An entry is the last of its folder when no entry of its
    depth follows before one shallower (a pass from the end finds it), and a folder
    passes its prefix on to its entries. Linear, and without recursion: a thousand
    folders deep is drawn like three.
    """
    last = [False] * len(depths)
    later: list[bool] = []  # later[d - 1]: an entry of depth d follows (in this folder)
    for index in range(len(depths) - 1, -1, -1):
        depth = depths[index]
        del later[depth:]  # deeper ones that follow are inside this entry
        last[index] = len(later) < depth or not later[depth - 1]
        later.extend([False] * (depth - len(later)))
        later[depth - 1] = True
    starts: list[str] = []
    prefixes = [""]  # prefixes[d - 1]: the prefix of the entries at depth d
    for depth, end in zip(depths, last, strict=True):
        prefix = prefixes[depth - 1]
        starts.append(prefix + ("└── " if end else "├── "))
        del prefixes[depth:]
        prefixes.append(prefix + ("    " if end else "│   "))  # for the entries inside
    return starts


def tree_lines(top: str, entries: list[Entry],
               marks: Mapping[str, str] | None = None,
               hidden: Mapping[str, int] | None = None) -> list[str]:
    """Lines (rich markup) drawing ``entries``, as listed by :meth:`Store.walk`, under ``top``.

    Drawn by hand rather than with ``rich.tree`` so that long descriptions are
    never cropped to the terminal's width, and without recursion, so a tree
    deeper than the interpreter's recursion limit (made by hand or by a shell
    command) is drawn too. ``marks`` (path -> words) flags files before their
    description, e.g. the ones a sync left with a conflict; ``hidden`` maps a
    folder drawn without its contents (cut by a depth limit) to the files it holds.
    """
    marks = marks or {}
    starts = _branches([e.depth for e in entries])
    return [f"[bold blue]{escape(top)}/[/]"] + [
        start + _label(entry, marks.get(entry.path), hidden)
        for start, entry in zip(starts, entries, strict=True)]


def tree_text(top: str, entries: list[Listed],
              marks: Mapping[str, str] | None = None,
              hidden: Mapping[str, int] | None = None,
              render: Console | None = None) -> list[str]:
    r"""The lines rich prints for :func:`tree_lines` on a console that is no terminal.

    ``entries`` are :meth:`Store.listing`'s tuples. A line whose text holds nothing
    rich would change (:data:`_NOT_PLAIN`) is written as it is; any other (a ``[``
    or ``\``, a tab, a control code, an emoji code, a line break in a name or a
    description) is rendered by rich itself through ``render``
    (:func:`plain_console`), so the text is rich's, byte for byte, at a fraction
    of the time.
    """
    marks = marks or {}
    hidden = hidden or {}
    render = render or plain_console()
    found = _NOT_PLAIN.search
    lines = [f"{top}/"]
    if found(lines[0]) is not None:
        lines[0] = _rendered(render, f"[bold blue]{escape(top)}/[/]")
    starts = _branches([e[2] for e in entries])
    for start, (path, is_dir, _, size, description) in zip(starts, entries, strict=True):
        name = path[path.rfind("/") + 1 :]
        if is_dir:
            below = hidden.get(path)
            text = f"{start}{name}/  {below:,} file(s) below" if below else f"{start}{name}/"
        else:
            mark = marks.get(path)
            text = (f"{start}{name}  {size:,} B  {mark + ' ' if mark else ''}"
                    f"{description or '(no description)'}")
        if found(text) is not None:
            text = start + _label(Entry(path, is_dir, 0, size, description),
                                  marks.get(path), hidden)
            text = _rendered(render, text)
        lines.append(text)
    return lines


def plain_console() -> Console:
    """A rich console that prints as ``console`` does to a file that is no terminal."""
    from rich.console import Console

    return Console(file=io.StringIO(), soft_wrap=True, highlight=False, force_terminal=False,
                   force_jupyter=False)


def _rendered(render: Console, markup: str) -> str:
    """The text ``render`` prints for one line of markup (without the line's end)."""
    file = render.file
    assert isinstance(file, io.StringIO)
    file.seek(0)
    file.truncate()
    render.print(markup)
    return file.getvalue().removesuffix("\n")


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
    store = open_store(store_path, reads_only=True)
    try:
        top = store.resolve(path, "dir").virtual
        # One walk: the counts are the whole tree's, also when --depth shows only its top
        # (whose files alone are opened for their descriptions).
        listed = store.listing(top, detail_depth=depth)
    except StoreError as exc:
        fail(str(exc), f"list the whole store with `memdir tree {shlex.quote(str(store_path))}`.")
    files = sum(1 for e in listed if not e[1])
    folders = len(listed) - files
    drawn = listed if depth is None else [e for e in listed if e[2] <= depth]
    hidden = {} if depth is None else files_below_the_cut(
        (Entry(*e) for e in listed if e[2] > depth), depth)
    if as_json:
        entries = [Entry(*e) for e in drawn]
        print_json({"path": top, "folders": folders, "files": files, "depth": depth,
                    "entries": [entry_dict(e) | ({"files_below": hidden[e.path]}
                                                 if e.path in hidden else {})
                                for e in entries]})
        return
    marks = listing_mark(store.root)
    cut = ""
    if len(drawn) < len(listed):
        shown = sum(1 for e in drawn if not e[1])
        cut = (f"; drawn to depth {depth}: {len(drawn) - shown:,} folder(s), "
               f"{shown:,} file(s) (raise --depth to see the rest)")
    total = f"{folders:,} folder(s), {files:,} file(s){cut}"
    if console.is_terminal or console.is_jupyter:
        lines = tree_lines(top, [Entry(*e) for e in drawn], marks, hidden)
        lines.append(f"[dim]{total}[/]")
        for start in range(0, len(lines), _PRINTED_LINES):  # rich's set-up per call was
            console.print("\n".join(lines[start : start + _PRINTED_LINES]))  # half the time
        return
    render = plain_console()
    lines = tree_text(top, drawn, marks, hidden, render)
    lines.append(total if _NOT_PLAIN.search(total) is None
                 else _rendered(render, f"[dim]{total}[/]"))
    out = console.file
    for start in range(0, len(lines), _PRINTED_LINES):
        out.write("\n".join(lines[start : start + _PRINTED_LINES]) + "\n")
    out.flush()


def register(app: typer.Typer) -> None:
    """Add ``tree`` to the command line."""
    app.command("tree")(tree)
