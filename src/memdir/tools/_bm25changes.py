"""The files a listing's record names as changed, walked and read as the index reads them.

A record beside the saved index (:class:`memdir.tools._bm25walk.Proof`) names
the paths where the store may differ from that index. The index
(:mod:`memdir.tools._bm25index`) and a search answered without numpy
(:mod:`memdir.tools._bm25light`) both walk just those paths through the
store's own rules and read what they find with these functions, so they see
the same files with the same text.

Also the rule for when the index folds its changes into a new saved file
(:func:`compact_at`): a reader that would not fold them must leave such a
search to the index, which does.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from memdir.store import ROOT, StoreError
from memdir.store._paths import open_root
from memdir.store._tree import nodes_at

if TYPE_CHECKING:
    from memdir.store import Store

__all__ = ["COMPACT_MIN", "COMPACT_SHARE", "Key", "compact_at", "memory_at", "parts_of",
           "read_text"]

Key = tuple[int, int, int, int]
"""What says a file is unchanged: inode, modification and change times, size (an edit
moves the change time on, and it cannot be set back)."""
COMPACT_SHARE: Final = 0.05
COMPACT_MIN: Final = 64
"""Compact once the delta holds this many files and a twentieth of the store."""


def compact_at(live: int, least: int = COMPACT_MIN) -> float:
    """How many changed slots make the index compact (and save) a store of ``live`` files."""
    return max(least, COMPACT_SHARE * live)


def parts_of(virtual: str) -> tuple[str, ...] | None:
    """The components of an agent path below the root; None for one no walk may follow."""
    if virtual == ROOT:
        return ()
    if not virtual.startswith(ROOT + "/"):
        return None
    parts = tuple(virtual[len(ROOT) + 1:].split("/"))
    if any(p in ("", ".", "..") or "\0" in p for p in parts):
        return None
    return parts


def memory_at(store: Store, parts: tuple[str, ...]) -> dict[str, Key]:
    """The memory files at or under ``parts`` now, with their fingerprints ({} if none)."""
    try:
        root_fd = open_root(store.root)
    except OSError:
        return {}
    try:
        nodes = nodes_at(root_fd, parts, names=store.names)
    except OSError:
        return {}
    finally:
        os.close(root_fd)
    return {n.virtual: (n.ino, n.mtime_ns, n.ctime_ns, n.size)
            for n in nodes if n.kind == "memory"}


def read_text(store: Store, virtual: str) -> str:
    """A file's text as the index reads it (bad UTF-8 replaced; "" if gone since the walk)."""
    try:
        return store.read_bytes(virtual).decode("utf-8", errors="replace")
    except StoreError:
        return ""  # removed or replaced since the walk
