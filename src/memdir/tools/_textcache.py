"""The bytes of a store's memory files, held in memory and kept in step through its change feed.

``grep`` reads every file of the folder it searches on each call; a process that
searches one store again and again (``memdir serve``, an agent's loop, a study
cell) keeps the files here instead, so a search costs the scan of bytes already
in memory, not a walk and a read of each file. The store's change feed
(:mod:`memdir.store._feed`) names what changed before each use, and only those
files are read again, so a change made by anyone before a search is seen by it.
Where the feed is not live, every use walks the files and re-reads those whose
fingerprint (inode, size, modification and change times) moved.

Memory is bounded: files are kept until :data:`CACHE_BYTES` are held; the
rest are read from disk at each use. The cache is derived state: dropping it
changes nothing but speed.

Costs: each use grows with the changes since the last one (a walk of every file
without a live feed, and at the first use: the feed watches from then on, except
in a process that makes one call), plus the reads of files beyond the bound.

A process that searches once (``memdir grep``) has nothing to keep the bytes for:
:func:`read_once` gives it the same files in the same order, read one at a time
and let go, so its memory does not grow with the store. A process that answers
one tool call and exits (``memdir tool``) says so with :func:`single_use`, and
the tools it runs then read that way too (:func:`keeps_text`).
"""

from __future__ import annotations

import bisect
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from memdir.store import ROOT, Store
from memdir.store._deadline import check_deadline
from memdir.store._feed import ChangeFeed, in_one_call, one_call
from memdir.store._paths import (
    _READ_FLAGS,
    NamePolicy,
    open_dir,
    open_root,
    posix_parts,
    read_at,
    to_virtual,
)
from memdir.store._tree import _encodable, memory_files, nodes_at, visible_entries

__all__ = ["CACHE_BYTES", "TextCache", "cache_for", "keeps_text", "read_once", "single_use"]

CACHE_BYTES: Final = 512 * 1024 * 1024
"""Most file bytes one store's cache holds in memory."""
_CACHED_STORES: Final = 4
_BULK: Final = 64
"""From this many files to (re)read at once, they are read folder by folder."""

_Key = tuple[int, int, int, int]


class TextCache:
    """Every memory file of one store, in path order, with its bytes.

    Thread-safe.

    Args:
        store: The store.
        limit: Most bytes held in memory; files past it are read at each use.
    """

    def __init__(self, store: Store, *, limit: int = CACHE_BYTES) -> None:
        self.store = store
        self.limit = limit
        self._lock = threading.Lock()
        self._feed = ChangeFeed(store.root, lazy=True)
        self._order: list[str] = []
        self._keys: dict[str, _Key] = {}
        self._data: dict[str, bytes] = {}
        self._held = 0
        self.reads = 0
        """Files read from disk by this cache (for the tests and the benchmark)."""

    @property
    def live(self) -> bool:
        """Whether changes come from a live feed."""
        return self._feed.live

    def close(self) -> None:
        """Stop following the files."""
        self._feed.close()

    def files(self, under: str = ROOT) -> list[tuple[str, bytes | None]]:
        """Each memory file at or below the folder ``under``, sorted by path, with its bytes.

        A file that vanished meanwhile comes with None.
        """
        with self._lock:
            self._refresh()
            prefix = under.rstrip("/") + "/"
            lo = bisect.bisect_left(self._order, prefix)
            hi = bisect.bisect_left(self._order, prefix[:-1] + chr(ord("/") + 1), lo)
            wanted = self._order[lo:hi]
            held = [(v, self._data.get(v)) for v in wanted]
        return [(v, data if data is not None else self._read(v)) for v, data in held]

    # -- inside ------------------------------------------------------------------

    def _refresh(self) -> None:
        changes = self._feed.poll()
        if changes.none:
            return
        if changes.everything:
            found = self._walk(())
            stale = set(self._keys)
        else:
            found, stale = {}, set()
            for parts in changes.paths:
                found.update(self._walk(parts))
                virtual = to_virtual(parts)
                prefix = virtual + "/"
                lo = bisect.bisect_left(self._order, prefix)
                hi = bisect.bisect_left(self._order, virtual + chr(ord("/") + 1), lo)
                stale.update(self._order[lo:hi])
                if virtual in self._keys:
                    stale.add(virtual)
        for virtual in stale - found.keys():
            self._forget(virtual)
        todo = [(virtual, key) for virtual, key in found.items() if self._keys.get(virtual) != key]
        if len(todo) < _BULK:
            for virtual, key in todo:
                self._take(virtual, key)
        else:
            self._take_all(todo)

    def _walk(self, parts: tuple[str, ...]) -> dict[str, _Key]:
        root_fd = open_root(self.store.root)
        try:
            if not parts:
                return {v: (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
                        for v, st in memory_files(root_fd, self.store.names)}
            return {n.virtual: (n.ino, n.mtime_ns, n.ctime_ns, n.size)
                    for n in nodes_at(root_fd, parts, names=self.store.names)
                    if n.kind == "memory"}
        finally:
            os.close(root_fd)

    def _forget(self, virtual: str) -> None:
        del self._keys[virtual]
        data = self._data.pop(virtual, None)
        if data is not None:
            self._held -= len(data)
        i = bisect.bisect_left(self._order, virtual)
        if i < len(self._order) and self._order[i] == virtual:
            del self._order[i]

    def _take(self, virtual: str, key: _Key) -> None:
        if virtual in self._keys:
            self._forget(virtual)
        self._keys[virtual] = key
        bisect.insort(self._order, virtual)
        if self._held + key[3] <= self.limit:
            data = self._read(virtual)
            if data is not None:
                self._data[virtual] = data
                self._held += len(data)

    def _take_all(self, todo: list[tuple[str, _Key]]) -> None:
        """:meth:`_take` for many files at once (a first use, a big change).

        The paths are sorted once, not inserted one by one, and files are read
        folder by folder, each folder opened once (a read of one file opens each
        folder on its way from the root).
        """
        for virtual, _ in todo:
            if virtual in self._keys:
                self._forget(virtual)
        for virtual, key in todo:
            self._keys[virtual] = key
        self._order.extend(virtual for virtual, _ in todo)
        self._order.sort()
        chosen: dict[tuple[str, ...], list[str]] = {}
        for virtual, key in todo:
            if self._held + key[3] <= self.limit:
                self._held += key[3]  # reserved; corrected by what is read
                *within, name = virtual[len(ROOT) + 1:].split("/")
                chosen.setdefault(tuple(within), []).append(name)
        root_fd = open_root(self.store.root)
        try:
            for parts, names in chosen.items():
                self._read_folder(root_fd, parts, names)
        finally:
            os.close(root_fd)

    def _read_folder(self, root_fd: int, folder: tuple[str, ...], names: list[str]) -> None:
        prefix = "/".join((ROOT, *folder, ""))
        try:
            fd = open_dir(root_fd, folder)
        except OSError:
            fd = -1  # gone meanwhile: nothing held, each is read (or not) at use
        try:
            for name in names:
                virtual = prefix + name
                reserved = self._keys[virtual][3]
                data = None
                if fd >= 0:
                    self.reads += 1
                    try:
                        data = read_at(fd, name)
                    except OSError:
                        data = None
                self._held -= reserved
                if data is not None and self._held + len(data) <= self.limit:
                    self._data[virtual] = data
                    self._held += len(data)
        finally:
            if fd >= 0:
                os.close(fd)

    def _read(self, virtual: str) -> bytes | None:
        """A file's bytes through the store's handles (no link followed); None if gone."""
        parts = posix_parts(virtual)
        self.reads += 1
        try:
            root_fd = open_root(self.store.root)
            try:
                fd = open_dir(root_fd, parts[:-1])
                try:
                    return read_at(fd, parts[-1])
                finally:
                    os.close(fd)
            finally:
                os.close(root_fd)
        except OSError:
            return None


_CACHES: OrderedDict[Path, TextCache] = OrderedDict()
_CACHES_LOCK = threading.Lock()


def cache_for(store: Store) -> TextCache:
    """The shared cache of a store's root (one per root, the last few roots kept)."""
    with _CACHES_LOCK:
        cache = _CACHES.get(store.root)
        if cache is None:
            cache = TextCache(store)
            _CACHES[store.root] = cache
            while len(_CACHES) > _CACHED_STORES:
                _CACHES.popitem(last=False)[1].close()
        _CACHES.move_to_end(store.root)
        return cache


@contextmanager
def single_use() -> Iterator[None]:
    """Within it, the tools read each file as they need it and fill no text cache.

    For a process that answers one call and exits (``memdir tool``): a cache
    filled with the whole store for that one call would be dropped at exit
    unread, after costing the store's size in memory and a second walk. This
    is :func:`memdir.store._feed.one_call`, which also keeps lazy feeds from
    watching; like it, it reaches the call made inside the block and nothing
    outside it: a server never enters it, and its calls keep the cache.
    """
    with one_call():
        yield


def keeps_text() -> bool:
    """Whether a search here should keep the files' bytes: False inside :func:`single_use`."""
    return not in_one_call()


_OPEN_LEVELS: Final = 32
"""Most folder handles :func:`read_once` holds down one path; those above are reopened."""


def read_once(store: Store, under: str = ROOT) -> Iterator[tuple[str, bytes | None]]:
    """Each memory file at or below the folder ``under``, as :meth:`TextCache.files` gives it.

    The same files in the same order (sorted by path), each read when it is
    reached and held by nobody after: memory holds the listings of the folders
    on the way down to the current file and that file's bytes, however big the
    store. The rules are the store's walk's (:func:`~memdir.store._tree.memory_files`):
    hidden names are skipped, nothing is followed, and only regular files whose
    names the store accepts are read. A folder's entries are sorted with each
    subfolder named ``name/``, which is where its files fall among full paths,
    so the walk needs no list of the whole store to come out in path order.

    A file that vanished (or was swapped for anything but a regular file)
    between its folder's listing and its read comes with None.

    Cost: one listing per folder and one open, ``fstat`` and read per memory file
    (the listing's entry types tell folders, links and files apart, so no file is
    stat'ed twice).
    """
    parts = posix_parts(under)
    if any(part.startswith(".") for part in parts):
        return  # the store's walk never enters a hidden folder
    root_fd = open_root(store.root)
    path: list[_Level] = []
    try:
        try:
            path.append(_Level(parts, open_dir(root_fd, parts), store.names))
        except OSError:
            return
        while path:
            level = path[-1]
            entry = next(level.entries, None)
            if entry is None or level.handle(root_fd) < 0:
                path.pop().release()
                continue
            fd = level.fd
            _, name, is_dir = entry
            if not is_dir:
                yield level.prefix + name, _read_regular(fd, name)
                continue
            check_deadline()  # between folders, as the store's walk does
            try:
                child = open_dir(fd, (name,))
            except OSError:
                continue  # gone meanwhile, or no longer a folder
            path.append(_Level((*level.parts, name), child, store.names))
            if len(path) > _OPEN_LEVELS:
                path[-_OPEN_LEVELS - 1].release()
    finally:
        for level in path:
            level.release()
        os.close(root_fd)


class _Level:
    """One folder on :func:`read_once`'s way down: its handle and its entries still to visit."""

    __slots__ = ("entries", "fd", "parts", "prefix")

    def __init__(self, parts: tuple[str, ...], fd: int, names: NamePolicy) -> None:
        self.parts = parts
        self.prefix = to_virtual(parts) + "/"
        self.fd = fd
        try:
            found = _listing(fd, names)
        except OSError:
            found = []  # unreadable meanwhile: as the store's walk, nothing in it
        self.entries = iter(found)

    def handle(self, root_fd: int) -> int:
        """The folder's handle, reopened from the root if it was let go; -1 if it is gone."""
        if self.fd < 0:
            try:
                self.fd = open_dir(root_fd, self.parts)
            except OSError:
                self.entries = iter(())
        return self.fd

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _listing(fd: int, names: NamePolicy) -> list[tuple[str, str, bool]]:
    """A folder's subfolders and memory-file candidates as (sort key, name, is a folder), sorted."""
    found: list[tuple[str, str, bool]] = []
    suffixes = names.suffixes
    for entry, is_dir in visible_entries(fd):
        name = entry.name
        if is_dir:
            found.append((name + "/", name, True))
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue  # a link, a FIFO, a socket, a device
        except OSError:
            continue  # gone meanwhile
        if not (name.endswith(suffixes) if suffixes is not None else names.is_file_name(name)):
            continue
        if name.isascii() or _encodable(name):
            found.append((name, name, False))
    found.sort()
    return found


def _read_regular(dir_fd: int, name: str) -> bytes | None:
    """The bytes of the regular file ``name`` in a folder, or None (gone, a link, not a file).

    What :func:`~memdir.store._paths.read_at` reads, with its flags (no link
    followed, no FIFO waited on), in one ``read`` for a file that keeps its
    size: a read asking for one byte more than the file holds and getting
    exactly its size has reached the end, where ``read_at`` asks again to see
    nothing come. A file that grew or shrank meanwhile is read on to its end.
    """
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        size = st.st_size
        data = os.read(fd, min(size + 1, _READ_CHUNK))
        if len(data) == size:
            return data
        parts = [data]
        while chunk := os.read(fd, _READ_CHUNK):
            parts.append(chunk)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


_READ_CHUNK: Final = 1 << 20
"""Most bytes asked of one ``read``."""
