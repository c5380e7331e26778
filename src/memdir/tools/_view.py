"""Rendering what ``view`` shows: numbered file lines and folder listings."""

from __future__ import annotations

import re

from memdir.store import ROOT, Entry, Store, StorePath, listing_mark, slugify

__all__ = [
    "LISTING_ENTRY",
    "MAX_LINE_VIEW_CHARS",
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


def render_listing(store: Store, folder: StorePath) -> str:
    """The tree below ``folder``: each file with its size and description.

    Small trees are shown whole; a tree with more than :data:`MAX_LISTING_ENTRIES`
    entries is shown two levels deep, each deeper folder with its file count.
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
    if counts:
        entries = store.walk(folder.virtual, max_depth=2, markdown_only=False)
        head += (
            ". Showing two levels; view a subfolder to see inside the folders marked with "
            "a file count:"
        )
    else:
        entries = store.walk(folder.virtual, markdown_only=False)
        head += ":"
    lines = [head]
    limit = MAX_LISTING_ENTRIES * 2
    marks = listing_mark(store.root)  # files a sync left with two versions to reconcile
    lines.extend(_entry_line(entry, counts, marks.get(entry.path)) for entry in entries[:limit])
    if len(entries) > limit:
        lines.append(
            f"[{len(entries) - limit} more entries not shown; view a subfolder or use grep "
            "to narrow down.]"
        )
    return "\n".join(lines)


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
