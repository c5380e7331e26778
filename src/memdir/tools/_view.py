"""Rendering what ``view`` shows: numbered file lines and folder listings."""

from __future__ import annotations

import re
from dataclasses import replace

from memdir.store import ROOT, Entry, Store, StoreError, StorePath, listing_mark, slugify
from memdir.tools._spec import ToolError

__all__ = [
    "LISTING_ENTRY",
    "MAX_LINE_VIEW_CHARS",
    "MAX_LISTING_CHARS",
    "MAX_LISTING_ENTRIES",
    "MAX_VIEW_CHARS",
    "MAX_VIEW_LINES",
    "NUMBERED_LINE",
    "listing_line",
    "number_capped",
    "markdown_name",
    "number_lines",
    "render_listing",
    "split_lines",
]

MAX_VIEW_LINES = 1000
"""Most lines one ``view`` of a file shows before asking for a ``view_range``."""
MAX_VIEW_CHARS = 60_000
"""Most characters one ``view`` of a file shows before asking for a ``view_range``."""
MAX_LINE_VIEW_CHARS = 20_000
"""Longest single line ``view`` shows in full; the rest of it is summarised."""
MAX_LISTING_ENTRIES = 300
"""A folder listing with more entries than this is shown two levels deep."""


def split_lines(text: str) -> list[str]:
    """A file's lines as ``view`` numbers them (a final newline ends the last line)."""
    if not text:
        return []
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


NUMBERED_LINE = re.compile(r"^ *(?P<number>\d+)\t(?P<text>.*)$", re.MULTILINE)
"""One line as :func:`number_lines` shows it: its number (right-aligned), a tab, its text."""
LISTING_ENTRY = re.compile(
    r"^(?P<indent>(?:  )*)(?P<name>[^/\n]+?) \((?P<size>\d+(?:\.\d)? [KM]?B)\) - "
    r"(?P<description>.*)$",
    re.MULTILINE,
)
"""A file's line in a folder listing, as :func:`listing_line` writes it; a folder's line
(``name/``) does not match."""


def number_lines(lines: list[str], first: int) -> str:
    """Lines prefixed by their number (right-aligned) and a tab; a line's final CR is hidden."""
    return "\n".join(
        f"{number:>6}\t{line.removesuffix(chr(13))}" for number, line in enumerate(lines, first)
    )


def number_capped(path: str, lines: list[str], first: int) -> str:
    """Number ``lines`` starting at ``first``, cutting off at the view limits with a note."""
    shown: list[str] = []
    size = 0
    for line in lines:
        if len(line) > MAX_LINE_VIEW_CHARS:
            line = (
                line[:MAX_LINE_VIEW_CHARS]
                + f" [... {len(line) - MAX_LINE_VIEW_CHARS:,} more characters on this line]"
            )
        if len(shown) >= MAX_VIEW_LINES or size + len(line) > MAX_VIEW_CHARS:
            break
        shown.append(line)
        size += len(line) + 8
    body = number_lines(shown, first)
    if len(shown) == len(lines):
        return body
    last = first + len(shown) - 1
    end = first + len(lines) - 1
    return (
        f"{body}\n[Output cut after line {last} of {end}. Read the rest with "
        f"view_range, e.g. view(path={path!r}, view_range=[{last + 1}, "
        f"{min(end, last + MAX_VIEW_LINES)}]).]"
    )


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


MAX_LISTING_CHARS = MAX_VIEW_CHARS
"""Most characters one listing shows before it says how to see the rest."""
_BIGGEST_SHOWN = 5
"""Sub-folders a cut listing names as places to look into."""


def render_listing(store: Store, folder: StorePath, view_range: list[int] | None = None) -> str:
    """The tree below ``folder``: each file with its size and description.

    Small trees are shown whole; a tree with more than :data:`MAX_LISTING_ENTRIES`
    entries is shown two levels deep, each deeper folder with its file count. The
    listing's entries are numbered in order, and one view shows at most
    ``2 * MAX_LISTING_ENTRIES`` of them and :data:`MAX_LISTING_CHARS` characters;
    a listing cut there ends with how many entries it has and how to see the
    others: ``view_range=[first, last]`` over its entries, a sub-folder's own
    listing (the largest are named), or grep.

    Raises:
        ToolError: ``view_range`` is not two entry numbers within the listing.
    """
    everything = store.walk(folder.virtual, describe=False, markdown_only=False)
    if not everything:
        if folder.is_root:
            return (
                f"{ROOT} is empty: the store holds no files yet. Add one with create, e.g. "
                f"create(path='{ROOT}/topic/note.md', file_text='---\\nname: note\\n"
                "description: <one line>\\n---\\n...')."
            )
        return f"{folder.virtual} is an empty folder."
    total = sum(1 for e in everything if not e.is_dir)
    folders = len(everything) - total
    counts: dict[str, int] = {}
    if len(everything) > MAX_LISTING_ENTRIES:
        for entry in everything:
            if not entry.is_dir and entry.depth > 2:
                # Count the file under its ancestor at depth 2, the deepest folder shown.
                parts = entry.path[len(folder.virtual) + 1 :].split("/")
                key = f"{folder.virtual}/{parts[0]}/{parts[1]}"
                counts[key] = counts.get(key, 0) + 1
    head = f"{folder.virtual}: {total} file(s) in {folders} folder(s) (size, description)"
    if counts:  # the walk is in tree order, so its first two levels are the shallow listing
        entries = [e for e in everything if e.depth <= 2]
        head += (
            ". Showing two levels; view a subfolder to see inside the folders marked with "
            "a file count:"
        )
    else:
        entries = everything
        head += ":"
    first, last = _entry_range(folder.virtual, view_range, len(entries))
    lines = [head if view_range is None else f"{head[:-1]}, entries {first:,}-{last:,}:"]
    size = len(lines[0])
    shown = 0
    marks = listing_mark(store.root)  # files a sync left with two versions to reconcile
    for entry in entries[first - 1 : last]:
        line = _entry_line(_described(store, entry), counts, marks.get(entry.path))
        if shown >= MAX_LISTING_ENTRIES * 2 or size + len(line) + 1 > MAX_LISTING_CHARS:
            break
        lines.append(line)
        size += len(line) + 1
        shown += 1
    if first + shown - 1 < len(entries):  # entries after the last one shown
        lines.append(_cut_note(folder.virtual, everything, first, first + shown - 1,
                               len(entries)))
    return "\n".join(lines)


def _described(store: Store, entry: Entry) -> Entry:
    """``entry`` with its description read (only the entries shown are opened)."""
    if entry.is_dir or not entry.path.endswith(".md"):
        return entry
    try:
        return replace(entry, description=store.description(entry.path))
    except StoreError:  # replaced or removed since the walk saw it
        return entry


def _entry_range(path: str, view_range: list[int] | None, count: int) -> tuple[int, int]:
    """The first and last entry (1-based, inclusive) a folder view asks for."""
    if view_range is None:
        return 1, count
    valid = (f"{path}'s listing has {count:,} entries: give view_range=[first, last] with "
             f"1 <= first <= last <= {count}, or last = -1 for the rest.")
    if len(view_range) != 2 or not all(isinstance(n, int) for n in view_range):
        raise ToolError(f"view_range must be two entry numbers. {valid}")
    first, last = view_range
    if last == -1 or last > count:  # a last entry past the end reads to the end
        last = count
    if not 1 <= first <= last:
        raise ToolError(f"view_range {list(view_range)} is out of range. {valid}")
    return first, last


def _cut_note(path: str, everything: list[Entry], first: int, last: int, count: int) -> str:
    """What a cut listing says: how many entries, which are shown, and three ways on."""
    depth = path.count("/") + 1
    files: dict[str, int] = {}
    for entry in everything:
        if not entry.is_dir:
            parts = entry.path.split("/")
            if len(parts) > depth + 1:
                top = "/".join(parts[: depth + 1])
                files[top] = files.get(top, 0) + 1
    biggest = sorted(files.items(), key=lambda item: (-item[1], item[0]))[:_BIGGEST_SHOWN]
    named = ", ".join(f"{p} ({n:,} files)" for p, n in biggest)
    step = min(count, last + MAX_LISTING_ENTRIES * 2)
    where = f" (the largest: {named})" if named else ""
    return (
        f"[Listing cut: entries {first:,}-{last:,} of {count:,} shown. Narrow it down: "
        f"view(path={path!r}, view_range=[{last + 1}, {step}]) shows the next entries; "
        f"view a sub-folder to list only it{where}; grep finds files by their content.]"
    )


def _entry_line(entry: Entry, counts: dict[str, int], mark: str | None = None) -> str:
    indent = "  " * (entry.depth - 1)
    name = entry.path.rsplit("/", 1)[-1]
    if entry.is_dir:
        hidden = counts.get(entry.path)
        more = f" ({hidden} files inside, not shown)" if hidden else ""
        return f"{indent}{name}/{more}"
    if not name.endswith(".md"):
        return listing_line(
            entry.depth, name, entry.size,
            f"not markdown, so search skips it; rename it to {markdown_name(name)} to read "
            "and edit it here",
        )
    description = entry.description or "(no description)"
    return listing_line(entry.depth, name, entry.size,
                        f"{mark} {description}" if mark else description)


def listing_line(depth: int, name: str, size: int, description: str) -> str:
    """A file's line in a listing: ``  name.md (1.2 KB) - description`` (:data:`LISTING_ENTRY`).

    Args:
        depth: 1 for an entry of the folder viewed; two spaces of indent per level below.
        name: The file's name.
        size: Its size in bytes.
        description: What its frontmatter says it holds.
    """
    return f"{'  ' * (depth - 1)}{name} ({_size(size)}) - {description}"


def markdown_name(name: str) -> str:
    """The memdir file name a non-markdown file could take (``notes.xml`` -> ``notes.md``)."""
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return slugify(stem) + ".md"
