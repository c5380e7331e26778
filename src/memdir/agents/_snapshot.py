"""All-or-nothing units of work: snapshot a store's files, restore them on failure.

A snapshot holds the bytes of every regular file under the store's root (its
own state excepted) and the set of folders, read through the store's one walk.
Restoring goes through :meth:`memdir.store.Store.reset_to`, the store's one way
back to an earlier state: changed files are rewritten, files and folders
created since are removed, and what was deleted is made again, so the tree is
byte-for-byte what it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memdir.store import Store

__all__ = ["StoreSnapshot", "restore", "snapshot"]


@dataclass(frozen=True)
class StoreSnapshot:
    """The files (agent-facing path -> bytes) and folders of a store at one moment."""

    root: Path
    files: dict[str, bytes]
    folders: frozenset[str]


def snapshot(store: Store) -> StoreSnapshot:
    """Capture the store's files and folders."""
    files, folders = store.capture()
    return StoreSnapshot(store.root, files, folders)


def restore(store: Store, snap: StoreSnapshot) -> None:
    """Put the store back exactly as ``snap`` captured it."""
    if store.root != snap.root:
        raise ValueError(f"the snapshot is of {snap.root}, not of {store.root}")
    store.reset_to(snap.files, snap.folders)
