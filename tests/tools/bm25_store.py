"""The small store the saved-index tests search: 40 filler notes and two people."""

from __future__ import annotations

import os
from pathlib import Path

from memdir.store import Store
from memdir.tools._bm25index import INDEX_FILE

QUERY = "trombone hiking compilers"
"""Three words, each in exactly one of the two people's notes."""


def note(name: str, body: str) -> str:
    """A memory file with frontmatter."""
    return f"---\nname: {name}\ndescription: Notes on {name}\n---\n{body}\n"


def filled_store(root: Path, folders: int = 1, filler: str = "filler text") -> Store:
    """A new store: 40 notes spread over ``folders`` folders under ``f``, then alice and bob."""
    store = Store(root, create=True)
    for i in range(40):
        folder = "f" if folders == 1 else f"f/g{i % folders}"
        store.write(f"/memories/{folder}/note-{i}.md", note(f"note-{i}", f"word{i} {filler} {i}"))
    store.write("/memories/alice.md", note("alice", "Works on compilers. Likes hiking."))
    store.write("/memories/bob.md", note("bob", "Plays the trombone."))
    return store


def saved_index(store: Store) -> Path:
    """Where the store keeps its saved bm25 index."""
    return store.root / ".memdir" / INDEX_FILE


def edit_in_place_keeping_size_and_mtime(path: Path, old: bytes, new: bytes) -> None:
    """What an outside editor can do unseen by size and mtime: same inode, same length.

    Only the change time moves, which is what an exact check of the store must read.
    """
    assert len(old) == len(new)
    st = path.stat()
    data = path.read_bytes()
    with path.open("r+b") as handle:
        handle.write(data.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (st.st_ino, st.st_size,
                                                                 st.st_mtime_ns)
