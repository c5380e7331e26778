"""All-or-nothing units of work: snapshot a store's files, restore them on failure.

A snapshot holds the bytes of every file under the store's root (the hidden
state folder excepted) and the set of folders. Restoring writes back changed
files, removes files and folders created since, and recreates what was deleted,
so the tree is byte-for-byte what it was.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from memdir.store import Store, atomic_write

__all__ = ["StoreSnapshot", "restore", "snapshot"]

_STATE = ".memdir"


@dataclass(frozen=True)
class StoreSnapshot:
    """The files (relative path -> bytes) and folders of a store at one moment."""

    root: Path
    files: dict[str, bytes]
    folders: frozenset[str]


def _scan(root: Path) -> tuple[dict[str, Path], set[str]]:
    files: dict[str, Path] = {}
    folders: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == root:
            dirnames[:] = [d for d in dirnames if d != _STATE]
        for name in dirnames:
            folders.add((here / name).relative_to(root).as_posix())
        for name in filenames:
            host = here / name
            files[host.relative_to(root).as_posix()] = host
    return files, folders


def snapshot(store: Store) -> StoreSnapshot:
    """Capture the store's files and folders."""
    with store.locked():
        files, folders = _scan(store.root)
        data = {rel: host.read_bytes() for rel, host in files.items() if not host.is_symlink()}
    return StoreSnapshot(store.root, data, frozenset(folders))


def restore(store: Store, snap: StoreSnapshot) -> None:
    """Put the store back exactly as ``snap`` captured it."""
    if store.root != snap.root:
        raise ValueError(f"the snapshot is of {snap.root}, not of {store.root}")
    with store.locked():
        files, folders = _scan(store.root)
        for rel, host in files.items():
            if rel not in snap.files and not host.is_symlink():
                host.unlink()
        for rel in sorted(folders - snap.folders, key=len, reverse=True):
            shutil.rmtree(store.root / rel, ignore_errors=True)
        for rel in sorted(snap.folders):
            (store.root / rel).mkdir(parents=True, exist_ok=True)
        for rel, data in snap.files.items():
            host = store.root / rel
            if host.is_dir():
                shutil.rmtree(host)
            if not host.is_file() or host.read_bytes() != data:
                atomic_write(host, data)
