"""Sync conflicts kept inside memory files: their form, how to find them, what agents are told.

When two replicas changed the same lines of a file, the merge keeps both
versions in a *conflict block*: plain markdown, made of HTML comment lines that
never touch the frontmatter, so the file stays a valid memory file that every
tool set reads. Git's own conflict markers never reach a store file::

    <!-- memdir-conflict 3f2a9c1b begin: two replicas changed these lines ... -->
    <!-- memdir-conflict 3f2a9c1b version: replica laptop -->
    the lines as the laptop wrote them
    <!-- memdir-conflict 3f2a9c1b version: replica server -->
    the lines as the server wrote them
    <!-- memdir-conflict 3f2a9c1b end -->

Whoever replaces the block with the text to keep (an ordinary ``str_replace``)
resolves the conflict; every replica learns of it at its next sync.

Listings mark conflicted files without reading every file: each sync records
the files it brought in that hold a block in ``.memdir/conflicts`` (local,
derived state, never snapshot), and a listing re-checks only those.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memdir.store._paths import ROOT, atomic_write

__all__ = [
    "MARKER",
    "ConflictBlock",
    "block_id",
    "conflict_alarms",
    "conflict_findings",
    "conflict_followup",
    "conflict_note",
    "conflicted_paths",
    "find_blocks",
    "has_conflict",
    "listing_mark",
    "record_conflicts",
    "render_block",
]

MARKER: Final = "<!-- memdir-conflict "
"""Every line of a conflict block's frame starts with this."""
_LINE: Final = re.compile(
    r"^<!-- memdir-conflict (?P<id>[0-9a-f]{8}) (?P<kind>begin|version|end)"
    r"(?:: (?P<text>.*?))? -->\r?$"
)
_ANY_MARK: Final = re.compile(r"^<!-- memdir-conflict ", re.MULTILINE)
INDEX_NAME: Final = "conflicts"
"""The file in the store's state folder listing files that may hold a block."""
_STATE: Final = ".memdir"
LINES_WHAT: Final = (
    "two replicas changed these lines at the same time and both versions are kept below. "
    "Keep what is true (one version, or both combined) and replace everything from this "
    "line to the end line with it"
)


@dataclass(frozen=True, slots=True)
class ConflictBlock:
    """One conflict block of a file: where it lies and the versions it keeps."""

    id: str
    first: int
    """1-based line of the begin line."""
    last: int
    """1-based line of the end line."""
    what: str
    """The begin line's explanation."""
    versions: tuple[tuple[str, str], ...]
    """(label, text) of each version, in the order written."""


def block_id(*parts: str) -> str:
    """A stable 8-hex-digit id for a block built from ``parts`` (path and versions)."""
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:8]


def _clean(label: str) -> str:
    """A label or explanation fit for one comment line: no line breaks, no comment end."""
    return " ".join(label.replace("-->", "- ->").split())


def render_block(ident: str, what: str, versions: Sequence[tuple[str, str]]) -> str:
    """The text of one conflict block, ending with a newline.

    Args:
        ident: The block's id (:func:`block_id`).
        what: What happened and what to do, one line.
        versions: (label, text) of each version; a version's text may be empty.
    """
    lines = [f"{MARKER}{ident} begin: {_clean(what)} -->"]
    for label, text in versions:
        lines.append(f"{MARKER}{ident} version: {_clean(label)} -->")
        if text:
            lines.append(text if not text.endswith("\n") else text[:-1])
    lines.append(f"{MARKER}{ident} end -->")
    return "\n".join(lines) + "\n"


def has_conflict(text: str) -> bool:
    """Whether ``text`` holds any line of a conflict block's frame."""
    return MARKER in text and _ANY_MARK.search(text) is not None


def find_blocks(text: str) -> list[ConflictBlock]:
    """Every complete conflict block of ``text``, in order (nested ones are content)."""
    if not has_conflict(text):
        return []
    found: list[ConflictBlock] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        match = _LINE.match(lines[index])
        if match is None or match["kind"] != "begin":
            index += 1
            continue
        block = _read_block(lines, index, match["id"], match["text"] or "")
        if block is None:
            index += 1
            continue
        found.append(block)
        index = block.last
    return found


def _read_block(lines: list[str], start: int, ident: str, what: str) -> ConflictBlock | None:
    versions: list[tuple[str, list[str]]] = []
    for index in range(start + 1, len(lines)):
        match = _LINE.match(lines[index])
        if match is not None and match["id"] == ident:
            if match["kind"] == "end":
                return ConflictBlock(ident, start + 1, index + 1, what, tuple(
                    (label, "\n".join(body)) for label, body in versions))
            if match["kind"] == "version":
                versions.append((match["text"] or "", []))
                continue
            return None  # a second begin with the same id: not a block
        if versions:
            versions[-1][1].append(lines[index].removesuffix("\r"))
        elif lines[index].strip():
            return None  # text between begin and the first version
    return None


def _marker_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.split("\n"), 1) if line.startswith(MARKER)]


def conflict_note(path: str, text: str) -> str:
    """What a tool result on ``path`` adds when its text holds a conflict ("" if none)."""
    if not has_conflict(text):
        return ""
    blocks = find_blocks(text)
    if not blocks:
        lines = ", ".join(str(n) for n in _marker_lines(text)[:8])
        return (
            f"\n\n[Sync conflict: {path} still holds memdir-conflict marker lines (lines "
            f"{lines}) left from a reconciliation. Remove them with str_replace once the text "
            "around them says what is true.]"
        )
    where = ", ".join(f"lines {b.first}-{b.last}" for b in blocks[:8])
    first = blocks[0]
    return (
        f"\n\n[Sync conflict: {path} holds {len(blocks)} unresolved conflict block(s) "
        f"({where}). Two replicas of this store changed the same text at once and both "
        "versions are kept, each under a 'version:' line naming where it came from. To "
        "reconcile a block, decide what is true (one version, or the two combined) and "
        f"replace the whole block, from its begin line (line {first.first}) to its end line "
        f"(line {first.last}), with that text in one str_replace: old_str is the block "
        "exactly as view shows it, without the line numbers.]"
    )


def conflict_followup(path: str, before: str, after: str) -> str:
    """What an edit's result adds: the conflicts left in ``path``, or that they are gone."""
    if has_conflict(after):
        return conflict_note(path, after)
    if has_conflict(before):
        return f"\n[The sync conflict in {path} is resolved; the next sync shares the result.]"
    return ""


# -- the index of conflicted files ------------------------------------------------


def _index_path(root: Path) -> Path:
    return root / _STATE / INDEX_NAME


def _read_index(root: Path) -> list[str]:
    try:
        data = json.loads(_index_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, list):
        return []
    return [p for p in data if isinstance(p, str) and p.startswith(ROOT + "/")]


def _read_file(root: Path, virtual: str) -> str | None:
    """A store file's text by agent path, following no link; None if it cannot be read."""
    from memdir.store._paths import dir_handle, posix_parts, read_at

    parts = posix_parts(virtual)
    try:
        with dir_handle(root, parts[:-1]) as fd:
            return read_at(fd, parts[-1]).decode("utf-8", "replace")
    except OSError:
        return None


def record_conflicts(root: Path, candidates: Iterable[str], *, replace: bool = False) -> list[str]:
    """Update the index with ``candidates`` (agent paths a change touched); return it.

    Each candidate, and each path already listed, stays listed only if it still
    holds a conflict block. Cost: one read per candidate and per listed path.

    Args:
        root: The store's root folder.
        candidates: Paths that may have gained (or lost) a conflict.
        replace: Forget the paths already listed (after a full scan).
    """
    wanted = set(candidates) | (set() if replace else set(_read_index(root)))
    kept = sorted(p for p in wanted if has_conflict(_read_file(root, p) or ""))
    if kept or _index_path(root).exists():
        (root / _STATE).mkdir(exist_ok=True)
        atomic_write(_index_path(root), json.dumps(kept).encode("utf-8"))
    return kept


_CHECKED: dict[tuple[str, str], tuple[int, int, bool]] = {}


def conflicted_paths(root: Path) -> frozenset[str]:
    """The files of the store at ``root`` that hold a conflict block now.

    Reads the index the syncs keep, then each file it names (cached by size and
    modification time), so a listing pays for the conflicted files only.
    """
    listed = _read_index(root)
    found: set[str] = set()
    for virtual in listed:
        host = root.joinpath(*virtual[len(ROOT) + 1 :].split("/"))
        try:
            st = os.stat(host, follow_symlinks=False)
        except OSError:
            continue
        key = (str(root), virtual)
        cached = _CHECKED.get(key)
        if cached is not None and cached[:2] == (st.st_size, st.st_mtime_ns):
            held = cached[2]
        else:
            held = has_conflict(_read_file(root, virtual) or "")
            _CHECKED[key] = (st.st_size, st.st_mtime_ns, held)
        if held:
            found.add(virtual)
    return frozenset(found)


def listing_mark(root: Path) -> Mapping[str, str]:
    """Each conflicted file -> the words a listing puts before its description."""
    return {path: "[SYNC CONFLICT: view it to reconcile]" for path in conflicted_paths(root)}


def conflict_findings(texts: Mapping[str, str], first_lines: Mapping[str, int] | None = None,
                      ) -> list[tuple[str, int, str]]:
    """(path, first line, what to do) for each file of ``texts`` that holds a conflict.

    Args:
        texts: Each file's text, or its body.
        first_lines: For a body, the file's line number of its first line.
    """
    found: list[tuple[str, int, str]] = []
    for path, text in sorted(texts.items()):
        if not has_conflict(text):
            continue
        blocks = find_blocks(text)
        shift = (first_lines or {}).get(path, 1) - 1
        if blocks:
            where = ", ".join(f"lines {b.first + shift}-{b.last + shift}" for b in blocks[:6])
            labels = sorted({label for b in blocks for label, _ in b.versions})
            found.append((path, blocks[0].first + shift,
                          f"{len(blocks)} block(s) keep two versions ({where}), from "
                          f"{'; '.join(labels[:4])}; keep what is true and replace each block "
                          "with it"))
        else:
            found.append((path, _marker_lines(text)[0] + shift,
                          "stray memdir-conflict marker lines are left; remove them"))
    return found


def conflict_alarms(texts: Mapping[str, str],
                    first_lines: Mapping[str, int] | None = None) -> list[str]:
    """One health alarm per file of ``texts`` holding a conflict (:func:`conflict_findings`)."""
    return [f"unresolved sync conflict in {path}: {message}"
            for path, _line, message in conflict_findings(texts, first_lines)]
