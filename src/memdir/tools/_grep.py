r"""``grep``: a regular-expression search over the store, line by line.

Each file is searched whole in multi-line mode, which finds every line a
line-by-line search would (and perhaps a few more, across line breaks); each hit's
line is then checked on its own. A file without a hit costs one regex scan and
no line splitting. Patterns whose meaning depends on where the text ends
(lookarounds, ``\A``, ``\Z``, possessive or atomic groups, scoped flags) are
searched strictly line by line instead, so the answer is always exact.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir.store import ROOT, Store, StoreError
from memdir.tools._spec import ToolError, ToolFunction

__all__ = ["GrepHit", "grep_store", "grep_tool"]

MAX_LINE_CHARS = 200
"""Longest line text a hit shows; longer lines are trimmed around the match."""
MAX_RESULTS_CAP = 1000
"""Largest ``max_results`` accepted."""
_UNSAFE = ("(?=", "(?!", "(?<", "\\A", "\\Z", "(?>", "*+", "++", "?+", "}+", "(?-")


@dataclass(frozen=True, slots=True)
class GrepHit:
    """One matching line."""

    path: str
    line: int
    text: str
    column: int
    """0-based offset of the match in ``text`` (before trimming)."""


def _compile(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise ToolError(
            f"The pattern {pattern!r} is not a valid Python regular expression: {exc}. "
            "Escape special characters such as ( [ . * + ? with a backslash, or search "
            "for a plain word."
        ) from None


def _host_files(store: Store, path: str) -> list[tuple[str, Path]]:
    target = store.resolve(path)
    if target.host.is_file():
        if not target.virtual.endswith(".md"):
            return []
        return [(target.virtual, target.host)]
    if not target.host.is_dir():
        raise StoreError(f"{target.virtual} does not exist. View {ROOT} to see the store.")
    found: list[tuple[str, Path]] = []
    _collect(target.host, target.virtual, found)
    return found


def _collect(host: Path, virtual: str, out: list[tuple[str, Path]]) -> None:
    try:
        items = sorted(os.scandir(host), key=lambda d: d.name)
    except FileNotFoundError:
        return
    folders = []
    for item in items:
        if item.name.startswith("."):
            continue
        if item.is_dir(follow_symlinks=False):
            folders.append(item)
        elif item.name.endswith(".md") and item.is_file(follow_symlinks=False):
            out.append((f"{virtual}/{item.name}", Path(item.path)))
    for folder in folders:
        _collect(Path(folder.path), f"{virtual}/{folder.name}", out)


def _file_hits(rx: re.Pattern[str], text: str, safe: bool) -> Iterator[tuple[int, str, int]]:
    """Yield (line number, line, column) for each line of ``text`` that ``rx`` matches."""
    if not safe:
        for number, line in enumerate(text.split("\n"), start=1):
            match = rx.search(line)
            if match is not None:
                yield number, line, match.start()
        return
    pos = 0
    number = 1
    counted = 0
    size = len(text)
    while pos <= size:
        match = rx.search(text, pos)
        if match is None:
            return
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.start())
        if end < 0:
            end = size
        number += text.count("\n", counted, start)
        counted = start
        line = text[start:end]
        # Confirm on the line alone: the whole-text hit may span a line break, and
        # a few zero-width tests (\B on an empty line) differ at the boundaries.
        own = rx.search(line)
        if own is not None:
            yield number, line, own.start()
        pos = end + 1


def grep_store(
    store: Store, pattern: str, path: str = ROOT, ignore_case: bool = False
) -> Iterator[GrepHit]:
    """Every line below ``path`` matching ``pattern``, in path and line order.

    Raises:
        ToolError: The pattern is not a valid regular expression.
        StoreError: ``path`` is not a valid place in the store.
    """
    rx = _compile(pattern, ignore_case)
    safe = not any(marker in pattern for marker in _UNSAFE)
    for virtual, host in _host_files(store, path):
        try:
            text = host.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue  # removed or replaced while we searched; the listing was a snapshot
        if text.startswith("\ufeff"):
            text = text[1:]
        if text.endswith("\n"):
            text = text[:-1]  # a final newline ends the last line; it opens no new one
        for number, line, column in _file_hits(rx, text, safe):
            yield GrepHit(virtual, number, line.rstrip("\r"), column)


def _trim(text: str, column: int) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    start = max(0, min(column - MAX_LINE_CHARS // 4, len(text) - MAX_LINE_CHARS))
    piece = text[start : start + MAX_LINE_CHARS]
    return ("..." if start else "") + piece + ("..." if start + MAX_LINE_CHARS < len(text) else "")


def grep_tool(store: Store) -> ToolFunction:
    """The ``grep`` tool over ``store``."""

    async def grep(
        pattern: str, path: str = ROOT, max_results: int = 50, ignore_case: bool = False
    ) -> str:
        r"""Search memory files for a regular expression, line by line.

        Every line of every file below path is searched, frontmatter included (so
        names and descriptions match too). Each hit is shown as
        ``/memories/file.md:LINE: text``, with very long lines trimmed around the
        match; use view with view_range on the line numbers to read around a hit.
        Patterns use Python regex syntax and match anywhere in a line: try
        alternatives (``alice|bob``) and ignore_case to widen a search.

        Args:
            pattern: A Python regular expression, e.g. "birthday|born" or "\bAPI key\b".
            path: The folder or file to search, /memories (the whole store) by default.
            max_results: The most matching lines to show (1 to 1000); the total count is
                always reported.
            ignore_case: Match letters regardless of case.
        """
        if not 1 <= max_results <= MAX_RESULTS_CAP:
            raise ToolError(f"max_results must be between 1 and {MAX_RESULTS_CAP}.")
        if pattern == "":
            raise ToolError("The pattern is empty; give a word or regular expression.")
        shown: list[str] = []
        total = 0
        files: set[str] = set()
        for hit in grep_store(store, pattern, path, ignore_case):
            total += 1
            files.add(hit.path)
            if len(shown) < max_results:
                shown.append(f"{hit.path}:{hit.line}: {_trim(hit.text, hit.column)}")
        where = store.resolve(path).virtual
        if total == 0:
            return (
                f"No lines match {pattern!r} in {where}. Try a shorter pattern, "
                "alternatives (a|b), ignore_case=true, or view the folder."
            )
        head = f"{total} matching line(s) in {len(files)} file(s) under {where}:"
        lines = [head, *shown]
        if total > len(shown):
            lines.append(
                f"[{total - len(shown)} more matching line(s) not shown. Narrow the pattern "
                f"or the path, or raise max_results (now {max_results}).]"
            )
        return "\n".join(lines)

    return grep
