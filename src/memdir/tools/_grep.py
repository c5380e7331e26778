r"""``grep``: a regular-expression search over the store, line by line.

Each file is searched whole in multi-line mode, which finds every line a
line-by-line search would (and perhaps a few more, across line breaks); each hit's
line is then checked on its own. A file without a hit costs one regex scan and
no line splitting. Patterns whose meaning depends on where the text ends
(lookarounds, ``\A``, ``\Z``, possessive or atomic groups, scoped flags) are
searched strictly line by line instead, so the answer is always exact.

Patterns are compiled by the ``regex`` package in its ``re``-compatible mode
(``VERSION0``), not by ``re``: the same syntax and matches, but every search
takes a timeout, so inside a tool call no pattern can run past the call's
deadline (:func:`memdir.tools._limits.remaining`), and its engine is guarded
against many of the nested repeats that make ``re`` backtrack for minutes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import regex

from memdir.store import ROOT, Store, StoreError
from memdir.tools._limits import CallTimeoutError, echo, remaining
from memdir.tools._literals import fold, required_literals
from memdir.tools._spec import ToolError, ToolFunction, tool_flags

__all__ = [
    "GREP_HIT",
    "GREP_SUMMARY",
    "MAX_PATTERN_CHARS",
    "GrepHit",
    "grep_store",
    "grep_text",
    "grep_tool",
    "hit_line",
    "summary_line",
]

MAX_LINE_CHARS = 200
"""Longest line text a hit shows; longer lines are trimmed around the match."""
MAX_RESULTS_CAP = 1000
"""Largest ``max_results`` accepted."""
MAX_PATTERN_CHARS = 4000
"""Longest pattern accepted (compiling a huge one alone could take seconds)."""
GREP_HIT = re.compile(
    rf"^(?P<path>{ROOT}/.*?\.md):(?P<line>\d+): (?P<text>.*)$", re.MULTILINE
)
"""One hit as :func:`hit_line` writes it: ``/memories/a b.md:12: the line`` (a path
holding ``.md:<digits>: `` itself is read up to its first such point)."""
GREP_SUMMARY = re.compile(
    r"^(?P<total>\d+) matching line\(s\) in (?P<files>\d+) file\(s\) under (?P<where>.+):$",
    re.MULTILINE,
)
"""The first line of a ``grep`` result that found something, as :func:`summary_line` writes it."""
_UNSAFE = ("(?=", "(?!", "(?<", "\\A", "\\Z", "(?>", "*+", "++", "?+", "}+", "(?-")


@dataclass(frozen=True, slots=True)
class GrepHit:
    """One matching line (without its line break)."""

    path: str
    line: int
    text: str


_Search = Callable[..., "regex.Match[str] | None"]


def _compile(pattern: str, ignore_case: bool) -> regex.Pattern[str]:
    flags = regex.VERSION0 | regex.MULTILINE | (regex.IGNORECASE if ignore_case else 0)
    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        raise ToolError(
            f"The pattern {echo(pattern)} is not a valid Python regular expression: {exc}. "
            "Escape special characters such as ( [ . * + ? with a backslash, or search "
            "for a plain word."
        ) from None


def _bounded(rx: regex.Pattern[str]) -> _Search:
    """``rx.search`` that stops at the running tool call's deadline.

    Raises (when called):
        CallTimeoutError: The deadline passed before or during the search.
    """

    def search(text: str, pos: int = 0) -> regex.Match[str] | None:
        try:
            return rx.search(text, pos, timeout=remaining())
        except TimeoutError:
            raise CallTimeoutError("the regular expression ran out of time") from None

    return search


def _memory_files(
    store: Store, path: str, cache: bool
) -> Iterator[list[tuple[str, bytes | None]]]:
    """Each memory file at or below ``path``, sorted, with its bytes, in batches.

    The store's own walk decides which files are memory files. With ``cache`` they
    come from the store's text cache (:mod:`memdir.tools._textcache`), kept in step
    with the files through the change feed; without it each is read as its batch
    is reached and nothing is kept (:func:`~memdir.tools._textcache.read_once`).
    A file that vanished meanwhile comes with None.
    """
    target = store.resolve(path)
    kind = store.kind(target.virtual)
    if kind == "file":
        if target.virtual.endswith(".md"):
            try:  # through the store's handles: no link is followed
                yield [(target.virtual, store.read_bytes(target.virtual))]
            except StoreError:
                yield [(target.virtual, None)]
        return
    if kind != "dir":
        raise StoreError(f"{target.virtual} does not exist. View {ROOT} to see the store.")
    from memdir.tools._textcache import cache_for, read_once

    if cache:
        files = cache_for(store).files(target.virtual)
        for start in range(0, len(files), _BATCH):
            yield files[start : start + _BATCH]
        return
    batch: list[tuple[str, bytes | None]] = []
    held = 0
    for virtual, data in read_once(store, target.virtual):
        batch.append((virtual, data))
        held += 0 if data is None else len(data)
        if len(batch) >= _BATCH or held >= _BATCH_BYTES:
            yield batch
            batch.clear()  # the search is done with it: its bytes go before more are read
            held = 0
    if batch:
        yield batch


def _text(data: bytes) -> str:
    """A file's text (undecodable bytes replaced), without a BOM or the final newline."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-1]  # a final newline ends the last line; it opens no new one
    return text


# What re.IGNORECASE lets match an ASCII letter besides its two cases (see ``fold``):
# U+0130, U+0131, U+017F and U+212A, in UTF-8.
_FOLDING_BYTES = (b"\xc4\xb0", b"\xc4\xb1", b"\xc5\xbf", b"\xe2\x84\xaa")


def _may_match(data: bytes, plan: _Plan) -> bool:
    """False when no line of the file can match: none of the plan's literals is in its bytes.

    A literal found in the decoded text is found in the bytes too (as UTF-8), so
    a file is only skipped when decoding it could not change the answer.
    """
    needles = plan.needles
    if needles is None:
        return True
    if plan.folded:
        if not data.isascii() and any(special in data for special in _FOLDING_BYTES):
            return True
        data = data.lower()  # ASCII letters only, like the literals
    if len(needles) == 1:
        return needles[0] in data  # the common case, without a generator per file
    return any(needle in data for needle in needles)


def _file_hits(search: _Search, text: str, plan: _Plan) -> list[tuple[int, str]]:
    """(line number, line) of each line of ``text`` that ``search`` matches on its own."""
    if plan.literals is not None:
        return _literal_hits(search, text, plan.literals, plan.folded)
    if not plan.safe:
        return [(n, line) for n, line in enumerate(text.split("\n"), 1) if search(line)]

    # The whole text is scanned in multi-line mode: a scan finds every line a
    # line-by-line search would (and maybe more, across a line break), so each
    # hit's line is confirmed on its own and the scan resumes at the next line.
    def locate(pos: int) -> int:
        match = search(text, pos)
        return -1 if match is None else match.start()

    return _jump(text, text, locate, search)


def _literal_hits(
    search: Callable[[str], object], text: str, literals: list[str], folded: bool
) -> list[tuple[int, str]]:
    """Lines holding one of ``literals``, confirmed by ``search``."""
    hay = fold(text) if folded else text
    find = hay.find
    if len(literals) == 1:
        literal = literals[0]
        if literal not in hay:
            return []

        def locate(pos: int) -> int:
            return find(literal, pos)

    else:
        ahead = {lit: find(lit) for lit in literals}
        if max(ahead.values()) < 0:
            return []

        def locate(pos: int) -> int:
            best = -1
            for lit, at in ahead.items():
                if 0 <= at < pos:
                    at = ahead[lit] = find(lit, pos)
                if at >= 0 and (best < 0 or at < best):
                    best = at
            return best

    return _jump(hay, text, locate, search)


def _jump(
    hay: str, text: str, locate: Callable[[int], int], check: Callable[[str], object]
) -> list[tuple[int, str]]:
    """Visit each line of ``hay`` where ``locate`` finds a candidate; keep the checked ones.

    ``hay`` is ``text`` or its case fold, which has the same line breaks; the
    lines themselves are taken from ``text``.
    """
    out: list[tuple[int, str]] = []
    rfind, find, count, size = hay.rfind, hay.find, hay.count, len(hay)
    # Offsets agree unless case folding changed the text's length (non-ASCII text).
    lines = None if hay is text or text.isascii() else text.split("\n")
    pos = counted = 0
    number = 1
    while pos <= size:
        at = locate(pos)
        if at < 0:
            break
        start = rfind("\n", 0, at) + 1
        end = find("\n", at)
        if end < 0:
            end = size
        number += count("\n", counted, start)
        counted = start
        line = text[start:end] if lines is None else lines[number - 1]
        if check(line) is not None:
            out.append((number, line))
        pos = end + 1
    return out


@dataclass(frozen=True, slots=True)
class _Plan:
    """How to search: by literal candidates, by whole-text regex, or line by line."""

    literals: list[str] | None
    folded: bool
    safe: bool
    needles: list[bytes] | None
    """The literals as UTF-8, to skip files without one before decoding them."""


def _plan(pattern: str, ignore_case: bool) -> _Plan:
    literals = required_literals(pattern, ignore_case)
    safe = not any(marker in pattern for marker in _UNSAFE)
    if literals is None:
        return _Plan(None, False, safe, None)
    found, folded = literals
    needles = None if any("\ufffd" in lit for lit in found) else [
        lit.encode("utf-8") for lit in found]  # U+FFFD may stand for undecodable bytes
    return _Plan(found, folded, safe, needles)


def _scan(
    store: Store, pattern: str, path: str, ignore_case: bool, cache: bool = True
) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    search = _bounded(_compile(pattern, ignore_case))
    plan = _plan(pattern, ignore_case)
    for batch in _memory_files(store, path, cache):
        remaining()  # the deadline holds between files too
        for virtual, data in _candidates(batch, plan):
            hits = _file_hits(search, _text(data), plan)
            if hits:
                yield virtual, hits


_BATCH = 2048
"""Files sifted between two checks of the deadline."""
_BATCH_BYTES = 4 * 1024 * 1024
"""Most bytes of files read but not yet sifted, when they are not cached."""


def _candidates(
    files: list[tuple[str, bytes | None]], plan: _Plan
) -> list[tuple[str, bytes]]:
    """The files that may hold a match (see :func:`_may_match`), in one pass."""
    needles = plan.needles
    if needles is not None and len(needles) == 1 and not plan.folded:
        needle = needles[0]  # the common case: one C-level scan per file, no call
        return [(v, d) for v, d in files if d is not None and needle in d]
    return [(v, d) for v, d in files if d is not None and _may_match(d, plan)]


def grep_store(
    store: Store, pattern: str, path: str = ROOT, ignore_case: bool = False,
    *, cache: bool = True,
) -> Iterator[GrepHit]:
    """Every line below ``path`` matching ``pattern``, in path and line order.

    Args:
        store: The store.
        pattern: A Python regular expression.
        path: The folder or file to search.
        ignore_case: Match letters regardless of case.
        cache: Keep the files' bytes in the store's text cache for the next search
            (a server, an agent's loop). False reads each file once and keeps
            nothing, for a process that searches once: its memory then holds one
            batch of files, not the store.

    Raises:
        ToolError: The pattern is not a valid regular expression.
        StoreError: ``path`` is not a valid place in the store.
    """
    for virtual, hits in _scan(store, pattern, path, ignore_case, cache):
        for number, line in hits:
            yield GrepHit(virtual, number, line.removesuffix("\r"))


def hit_line(path: str, number: int, text: str) -> str:
    """One hit of a ``grep`` result (:data:`GREP_HIT` reads it back)."""
    return f"{path}:{number}: {text}"


def summary_line(total: int, files: int, where: str) -> str:
    """The head of a ``grep`` result (:data:`GREP_SUMMARY` reads it back)."""
    return f"{total} matching line(s) in {files} file(s) under {where}:"


def _shown_line(search: _Search, line: str) -> str:
    line = line.rstrip("\r")
    if len(line) <= MAX_LINE_CHARS:
        return line
    match = search(line)
    return _trim(line, match.start() if match is not None else 0)


def _trim(text: str, column: int) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    start = max(0, min(column - MAX_LINE_CHARS // 4, len(text) - MAX_LINE_CHARS))
    piece = text[start : start + MAX_LINE_CHARS]
    return ("..." if start else "") + piece + ("..." if start + MAX_LINE_CHARS < len(text) else "")


def grep_text(store: Store, pattern: str, path: str = ROOT, max_results: int = 50,
              ignore_case: bool = False, *, cache: bool = True) -> str:
    """The text the ``grep`` tool answers with: a summary line, then the hits shown.

    The tool calls this; ``memdir grep`` calls it too, without an event loop and
    without ``cache`` (see :func:`grep_store`). Its time is bounded by the
    deadline of the call it runs in (:func:`remaining`).

    Raises:
        ToolError: A bad argument, or the search ran out of time.
        StoreError: ``path`` is not a valid place in the store.
    """
    if not 1 <= max_results <= MAX_RESULTS_CAP:
        raise ToolError(f"max_results must be between 1 and {MAX_RESULTS_CAP}.")
    if pattern == "":
        raise ToolError("The pattern is empty; give a word or regular expression.")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(
            f"The pattern {echo(pattern)} is longer than the {MAX_PATTERN_CHARS:,} "
            "characters grep accepts. Search for a distinctive part of it."
        )
    search = _bounded(_compile(pattern, ignore_case))
    shown: list[str] = []
    total = 0
    files = 0
    try:
        for virtual, hits in _scan(store, pattern, path, ignore_case, cache):
            total += len(hits)
            files += 1
            for number, line in hits[: max_results - len(shown)]:
                shown.append(hit_line(virtual, number, _shown_line(search, line)))
    except CallTimeoutError:
        raise ToolError(
            f"The search for {echo(pattern)} did not finish within the time limit of one "
            "call and was stopped. Nested repeats such as (a+)+ or "
            r"(\w+\s?)* can take exponential time: simplify the pattern, search a plain "
            "word, or narrow the path."
        ) from None
    where = store.resolve(path).virtual
    if total == 0:
        return (
            f"No lines match {echo(pattern)} in {where}. Try a shorter pattern, "
            "alternatives (a|b), ignore_case=true, or view the folder."
        )
    lines = [summary_line(total, files, where), *shown]
    if total > len(shown):
        lines.append(
            f"[{total - len(shown)} more matching line(s) not shown. Narrow the pattern "
            f"or the path, or raise max_results (now {max_results}).]"
        )
    return "\n".join(lines)


def grep_tool(store: Store) -> ToolFunction:
    """The ``grep`` tool over ``store``.

    Its calls keep the files in the store's text cache for the next call, except
    in a process that answers one call (:func:`memdir.tools._textcache.single_use`).
    """

    @tool_flags(read_only=True)
    async def grep(
        pattern: str, path: str = ROOT, max_results: int = 50, ignore_case: bool = False
    ) -> str:
        r"""Search memory files for a regular expression, line by line.

        Every line of every file below path is searched, frontmatter included (so
        names and descriptions match too). Each hit is shown as
        "/memories/file.md:LINE: text", with very long lines trimmed around the
        match; use view with view_range on the line numbers to read around a hit.
        Patterns use Python regex syntax and match anywhere in a line: try
        alternatives (alice|bob) and ignore_case to widen a search.

        Args:
            pattern: A Python regular expression, e.g. "birthday|born" or "\bAPI key\b".
            path: The folder or file to search, /memories (the whole store) by default.
            max_results: The most matching lines to show (1 to 1000); the total count is
                always reported.
            ignore_case: Match letters regardless of case.
        """
        from memdir.tools._textcache import keeps_text

        return grep_text(store, pattern, path, max_results, ignore_case, cache=keeps_text())

    return grep
