"""Entries of any name in a store, acted on only through directory handles.

:class:`~memdir.store.Store`'s own methods hold memory files: names its
:class:`~memdir.store.NamePolicy` accepts, folders pruned when emptied, and the
kind of an entry decided by its name. A profile that mimics another tool (the
Anthropic memory tool: ``progress`` with no extension, ``notes.xml``, folders
that stay when emptied) decides instead from what is on disk. :class:`Entries`
gives such a profile the store's guarantee all the same: a path is checked by
:func:`~memdir.store._paths.split`, its folders are opened one at a time from
the root's handle without following a link, and every act is relative to the
handle of the folder it happens in (:class:`Folder`). A racing process that
swaps a folder for a link makes an act fail; it cannot redirect it.

OS errors come back as :class:`~memdir.store.StoreError` naming the
``/memories`` path, never a host path.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from memdir.store._errors import NotFoundError
from memdir.store._paths import (
    ANY_NAME,
    lstat_at,
    open_dir,
    open_root,
    read_at,
    remove_at,
    split,
    to_virtual,
    write_at,
)
from memdir.store._tree import subtree_extent, walk_tree

if TYPE_CHECKING:
    from memdir.store._store import Store

__all__ = ["Entries", "Found", "FoundType", "Folder"]

FoundType = Literal["dir", "file", "link", "special"]
"""A folder, a regular file, a symbolic link, or a FIFO, socket or device."""


@dataclass(frozen=True, slots=True)
class Found:
    """An entry as it is on disk (links are never followed)."""

    parts: tuple[str, ...]
    type: FoundType
    size: int

    @property
    def virtual(self) -> str:
        """The agent-facing path."""
        return to_virtual(self.parts)


def _type(mode: int) -> FoundType:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "link" if stat.S_ISLNK(mode) else "special"


def _found(parts: tuple[str, ...], st: os.stat_result) -> Found:
    return Found(parts, _type(st.st_mode), st.st_size)


class Folder:
    """An open folder of a store (a directory handle) and the acts done inside it.

    Every name is one component, never a path; nothing here follows a link.
    Obtain one from :meth:`Entries.folder`; it is closed with that block.
    """

    def __init__(self, entries: Entries, fd: int, parts: tuple[str, ...]) -> None:
        self._entries = entries
        self._fd = fd
        self.parts = parts

    def _virtual(self, name: str | None = None) -> str:
        return to_virtual(self.parts if name is None else (*self.parts, name))

    def itself(self) -> Found:
        """The folder itself (its size is what a listing shows for it)."""
        return _found(self.parts, os.fstat(self._fd))

    def lookup(self, name: str) -> Found | None:
        """The entry ``name`` in this folder, or None if there is none."""
        with self._entries.errors(self._virtual(name)):
            st = lstat_at(self._fd, name)
        return None if st is None else _found((*self.parts, name), st)

    def read(self, name: str) -> bytes:
        """The bytes of the regular file ``name``.

        Raises:
            StoreError: It is missing, a link, a folder or a special file.
        """
        with self._entries.errors(self._virtual(name)):
            return read_at(self._fd, name)

    def write(self, name: str, data: bytes) -> None:
        """Replace or create the file ``name`` atomically, within the store's size cap.

        Raises:
            FileTooLargeError: ``data`` is over the cap.
        """
        store = self._entries.store
        virtual = self._virtual(name)
        store._check_size(virtual, len(data))
        with self._entries.errors(virtual):
            write_at(self._fd, name, data)
        store.note_change()

    def remove(self, name: str) -> None:
        """Remove ``name``: a file or link itself, or a folder with its whole tree."""
        with self._entries.errors(self._virtual(name)):
            remove_at(self._fd, name)
        self._entries.store.note_change()

    def move(self, name: str, into: Folder, new_name: str) -> None:
        """Move the entry ``name`` to ``new_name`` in the folder ``into`` (maybe this one)."""
        with self._entries.errors(self._virtual(name)):
            os.rename(name, new_name, src_dir_fd=self._fd, dst_dir_fd=into._fd)
            os.fsync(into._fd)
            if into._fd != self._fd:
                os.fsync(self._fd)
        self._entries.store.note_change()

    @contextmanager
    def child(self, name: str) -> Iterator[Folder]:
        """The subfolder ``name``, opened from this folder's handle."""
        with self._entries.errors(self._virtual(name)):
            fd = open_dir(self._fd, (name,))
        try:
            yield Folder(self._entries, fd, (*self.parts, name))
        finally:
            os.close(fd)

    def extent(self) -> tuple[int, int]:
        """How deep and how long the paths inside this folder go (see ``subtree_extent``)."""
        with self._entries.errors(self._virtual()):
            return subtree_extent(self._fd, ())

    def listing(self, max_depth: int) -> list[Found]:
        """Visible entries up to ``max_depth`` levels down, in tree order.

        Each folder's entries are sorted by name and a subfolder's own entries
        follow it directly. Hidden names are left out and hidden folders not
        entered; links and special files are listed with their type.
        """
        with self._entries.errors(self._virtual()):
            nodes = walk_tree(self._fd, (), max_depth=max_depth, names=ANY_NAME)
        found = [
            Found((*self.parts, *n.parts), _type(n.mode), n.size)
            for n in nodes
            if not any(p.startswith(".") for p in n.parts)
        ]
        return sorted(found, key=lambda f: f.parts)


class Entries:
    """Any entry of ``store``, whatever its name, reached only through directory handles.

    Args:
        store: The store; its root, lock, size cap and change count are used.
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    def split(self, path: str) -> tuple[str, ...]:
        """Check an agent's path (any file name, no hidden or ``..`` component)."""
        return split(path, "any", ANY_NAME)

    @contextmanager
    def errors(self, virtual: str) -> Iterator[None]:
        """Turn an OS error inside the block into a store error about ``virtual``.

        A file where a folder should be reads as a missing entry
        (:class:`NotFoundError`), as it does for the reference tool.
        """
        try:
            yield
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise NotFoundError(
                    f"{virtual} does not exist: a part of the path is a file."
                ) from None
            raise self.store._fail(exc, virtual) from None

    @contextmanager
    def folder(self, parts: tuple[str, ...], *, create: bool = False) -> Iterator[Folder]:
        """The folder ``parts``, opened one component at a time from the root's handle.

        Args:
            parts: The folder's components below the root (``()`` for the root).
            create: Make missing folders on the way (a file or link on the way
                still fails).

        Raises:
            NotFoundError: A folder on the way is missing or is a file.
            PathError: A folder on the way is a symbolic link.
        """
        with self.errors(to_virtual(parts)):
            root_fd = open_root(self.store.root)
            try:
                fd = open_dir(root_fd, parts, create=create)
            finally:
                os.close(root_fd)
        try:
            yield Folder(self, fd, parts)
        finally:
            os.close(fd)

    def lookup(self, parts: tuple[str, ...]) -> Found | None:
        """The entry at ``parts``, or None if nothing is there (or a file is on the way)."""
        try:
            with self.folder(parts[:-1]) as folder:
                return folder.itself() if not parts else folder.lookup(parts[-1])
        except NotFoundError:
            return None

    def blocker(self, parts: tuple[str, ...]) -> Found | None:
        """The first entry on the way to ``parts`` that exists and is not a folder."""
        for depth in range(1, len(parts) + 1):
            found = self.lookup(parts[:depth])
            if found is None:
                return None
            if found.type != "dir":
                return found
        return None
