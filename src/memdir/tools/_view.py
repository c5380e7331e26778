"""Rendering what ``view`` shows: numbered file lines and folder listings."""

from __future__ import annotations

import os
import re
import threading
import weakref
from contextlib import suppress

from memdir.store import (
    ROOT,
    Entry,
    Listed,
    Store,
    StoreError,
    StorePath,
    listing_mark,
    slugify,
)
from memdir.store._feed import ChangeFeed
from memdir.store._paths import open_dir, open_root, posix_parts
from memdir.store._tree import head_description
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

    The counts come from one listing of each folder (names and entry types, no
    file opened or stat'ed); only the entries shown are opened, each once, for
    its size and description.

    Raises:
        ToolError: ``view_range`` is not two entry numbers within the listing.
    """
    everything = _walked(store, folder.virtual)
    if not everything:
        if folder.is_root:
            return (
                f"{ROOT} is empty: the store holds no files yet. Add one with create, e.g. "
                f"create(path='{ROOT}/topic/note.md', file_text='---\\nname: note\\n"
                "description: <one line>\\n---\\n...')."
            )
        return f"{folder.virtual} is an empty folder."
    total = sum(1 for e in everything if not e[1])
    folders = len(everything) - total
    counts: dict[str, int] = {}
    skip = len(folder.virtual) + 1
    if len(everything) > MAX_LISTING_ENTRIES:
        for path, is_dir, depth, _, _ in everything:
            if not is_dir and depth > 2:
                # Count the file under its ancestor at depth 2, the deepest folder shown.
                end = path.index("/", path.index("/", skip) + 1)
                counts[path[:end]] = counts.get(path[:end], 0) + 1
    head = f"{folder.virtual}: {total} file(s) in {folders} folder(s) (size, description)"
    if counts:  # the walk is in tree order, so its first two levels are the shallow listing
        entries = [e for e in everything if e[2] <= 2]
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
    with _Details(store) as details:
        for listed in entries[first - 1 : last]:
            line = _entry_line(details.entry(listed), counts, marks.get(listed[0]))
            if shown >= MAX_LISTING_ENTRIES * 2 or size + len(line) + 1 > MAX_LISTING_CHARS:
                break
            lines.append(line)
            size += len(line) + 1
            shown += 1
    if first + shown - 1 < len(entries):  # entries after the last one shown
        lines.append(_cut_note(folder.virtual, everything, first, first + shown - 1,
                               len(entries)))
    return "\n".join(lines)


_KEPT_FOLDERS = 8
"""Folders whose listing walk a store's :class:`_Walks` keeps between calls."""


class _Walks:
    """The listing walks of one store, kept while its change feed reports nothing new.

    In a running server the same folder is listed again and again; its walk (the
    names and entry types of every entry below it, what the counts come from) is
    kept and done again only after the feed names a change anywhere in the store.
    Sizes and descriptions are read at each call, for the entries shown. Where the
    feed is not live (no inotify), every poll says everything and each call walks.
    """

    def __init__(self, store: Store) -> None:
        self.feed = ChangeFeed(store.root, lazy=True)  # one call pays for no watch
        self.lock = threading.Lock()
        self.kept: dict[str, list[Listed]] = {}

    def walk(self, store: Store, folder: str) -> list[Listed]:
        with self.lock:
            if not self.feed.poll().none:
                self.kept.clear()
            found = self.kept.pop(folder, None)
            if found is None:
                found = store.listing(folder, detail_depth=0, describe=False,
                                      markdown_only=False)
            self.kept[folder] = found  # the most recent last
            while len(self.kept) > _KEPT_FOLDERS:
                del self.kept[next(iter(self.kept))]
            return found


_WALKS: weakref.WeakKeyDictionary[Store, _Walks] = weakref.WeakKeyDictionary()
_WALKS_LOCK = threading.Lock()


def _walked(store: Store, folder: str) -> list[Listed]:
    """Every entry below ``folder`` with its depth, no file opened (see :class:`_Walks`)."""
    with _WALKS_LOCK:
        walks = _WALKS.get(store)
        if walks is None:
            walks = _WALKS[store] = _Walks(store)
    return walks.walk(store, folder)


class _Details:
    """Sizes and descriptions of the entries a listing shows, through one handle per folder.

    Entries of one folder come together in a listing, so each folder is opened once
    (from the root, following no link).
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.root_fd = -1
        self.folder: str | None = None
        self.fd = -1

    def __enter__(self) -> _Details:
        self.root_fd = open_root(self.store.root)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        os.close(self.root_fd)

    def entry(self, listed: Listed) -> Entry:
        """The entry with its size and, for a markdown file, its description.

        A file gone or replaced since the walk saw it is shown with what can be read
        of it; a name the store refuses (a control character, say) gets no description.
        """
        path, is_dir, depth, _, _ = listed
        if is_dir:
            return Entry(path, True, depth)
        folder, _, name = path.rpartition("/")
        if folder != self.folder:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1
            self.folder = folder
            with suppress(OSError):
                self.fd = open_dir(self.root_fd, posix_parts(folder))
        size, description = 0, None
        if self.fd >= 0:
            if name.endswith(".md") and self._accepted(path):
                try:
                    size, description = head_description(self.fd, name)
                    return Entry(path, False, depth, size, description)
                except OSError:
                    pass  # not readable: its size alone, as for any other file
            with suppress(OSError):
                size = os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_size
        return Entry(path, False, depth, size, description)

    def _accepted(self, path: str) -> bool:
        try:
            self.store.split(path, "file")
        except StoreError:
            return False
        return True


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


def _cut_note(path: str, everything: list[Listed], first: int, last: int, count: int) -> str:
    """What a cut listing says: how many entries, which are shown, and three ways on."""
    skip = len(path) + 1
    files: dict[str, int] = {}
    for entry, is_dir, depth, _, _ in everything:
        if not is_dir and depth > 1:
            top = entry[: entry.index("/", skip)]
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
