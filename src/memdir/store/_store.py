"""The store: a folder of markdown memory files that agents see as ``/memories``.

All reads and writes of agent-facing paths go through :class:`Store`, and the
store acts on them only through directory handles (see :mod:`memdir.store._paths`),
so no racing rename or link swap can point an act outside the root. Writes are
atomic and serialised by a lock file shared by every process that opens the same
root, and a writer can state which version of a file it based its change on, so
a stale writer is refused instead of silently overwriting someone else's update.
Every OS error comes back as a :class:`StoreError` naming the agent-facing path.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from memdir.store._deadline import check_deadline
from memdir.store._errors import (
    ConflictError,
    FileExistsInStoreError,
    FileTooLargeError,
    NotFoundError,
    PathError,
    StoreError,
)
from memdir.store._frontmatter import description_of
from memdir.store._paths import (
    ANY_NAME,
    FILE_MODE,
    MARKDOWN,
    ROOT,
    Kind,
    NamePolicy,
    StorePath,
    check_new_path,
    dir_handle,
    lstat_at,
    make_folders,
    open_dir,
    open_root,
    os_error,
    posix_parts,
    read_at,
    remove_at,
    resolve,
    split,
    to_virtual,
    write_at,
    write_temp_at,
)
from memdir.store._tree import (
    Listed,
    Node,
    capture_tree,
    make_plain,
    reset_tree,
    subtree_extent,
    temp_files,
    walk_listing,
    walk_tree,
)

if TYPE_CHECKING:  # filelock pulls in asyncio: loaded on the first write, not to read
    from filelock import FileLock

__all__ = [
    "ANY_VERSION",
    "AnyVersion",
    "DEFAULT_MAX_FILE_BYTES",
    "Entry",
    "EntryKind",
    "Store",
    "digest_text",
]

DEFAULT_MAX_FILE_BYTES: Final = 512 * 1024
DEFAULT_LOCK_TIMEOUT: Final = 60.0
STATE_DIR: Final = ".memdir"
_HEAD_BYTES: Final = 4096
_MAX_HEADER_BYTES: Final = 64 * 1024
_EDIT_ATTEMPTS: Final = 3


class _AnyVersion:
    def __repr__(self) -> str:
        return "ANY_VERSION"


ANY_VERSION: Final = _AnyVersion()
"""Pass as ``expect`` to write without checking the file's current version."""

AnyVersion = _AnyVersion
"""The type of :data:`ANY_VERSION`, for annotations."""


def digest_text(text: str) -> str:
    """The version tag of a file's content: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Entry:
    """One node of a listing: a folder, or a file with its description."""

    path: str
    is_dir: bool
    depth: int
    size: int = 0
    description: str | None = None


EntryKind = Literal["file", "dir", "other"]
"""What lives at a path: a regular file, a folder, or something else (a link, FIFO...)."""

# Changes made through any Store object of this process, per root (see Store.generation).
_GENERATIONS: Counter[Path] = Counter()
_GENERATIONS_LOCK = threading.Lock()
_LOCK_MADE = threading.Lock()
"""Held while a store's file lock is made, so that threads share one."""



class _LastFolder:
    """An open handle on the folder last asked for; the caller closes it.

    Reached from the root as :func:`dir_handle` reaches it, following no link.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.parts: tuple[str, ...] | None = None
        self.root_fd = -1
        self.fd = -1

    def handle(self, parts: tuple[str, ...]) -> int:
        """A handle on the folder ``parts``.

        Raises:
            OSError: As :func:`open_dir`.
        """
        if parts != self.parts or self.fd < 0:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1
            if self.root_fd < 0:
                self.root_fd = open_root(self.root)
            self.parts = parts
            self.fd = open_dir(self.root_fd, parts)
        return self.fd

    def close(self) -> None:
        """Close the handles."""
        for fd in (self.fd, self.root_fd):
            if fd >= 0:
                os.close(fd)
        self.fd = self.root_fd = -1

class Store:
    """A memory store rooted at a host directory.

    Args:
        root: The host directory. It must exist unless ``create`` is set.
        max_file_bytes: Largest file a write may produce (UTF-8 bytes).
        create: Create the directory (and its parents) if missing.
        names: Which file names the store holds (memdir's own: ``.md`` only).
        lock_timeout: Seconds to wait for the write lock before giving up with a
            :class:`StoreError`.
        sweep_now: Remove the temporary files killed writers left behind while
            opening (a walk of the whole tree). False puts that off until this
            object first takes the write lock, for a caller that only reads
            (``memdir grep``): reads never show temporary files either way.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        create: bool = False,
        names: NamePolicy = MARKDOWN,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        sweep_now: bool = True,
    ) -> None:
        path = Path(root).expanduser()
        if create:
            make_folders(path)
        if not path.is_dir():
            raise StoreError(
                f"No store at {path}: the folder does not exist. "
                "Create it with `memdir init PATH` first."
            )
        self.root = Path(os.path.realpath(path))
        self.max_file_bytes = max_file_bytes
        self.names = names
        self.lock_timeout = lock_timeout
        self._lock_path = self._state_dir() / "lock"
        self._file_lock: FileLock | None = None
        self._desc_cache: dict[str, tuple[tuple[int, int, int, int], str | None]] = {}
        self._swept = False
        if sweep_now:
            self._sweep_temps()

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    @property
    def _lock(self) -> FileLock:
        """The cross-process write lock, made on first use (reads never need it)."""
        if self._file_lock is None:
            from filelock import FileLock

            with _LOCK_MADE:
                if self._file_lock is None:
                    self._file_lock = FileLock(self._lock_path, timeout=self.lock_timeout,
                                               mode=FILE_MODE)
        return self._file_lock

    def _state_dir(self) -> Path:
        state = self.root / STATE_DIR
        try:
            mode = os.lstat(state).st_mode
        except FileNotFoundError:
            make_folders(state)  # it holds derived data (a search index): the owner's only
            return state
        if not stat.S_ISDIR(mode):
            # A link would take the lock and the saved search index wherever it points.
            raise StoreError(
                f"{state} is not a folder memdir made (a link or a file), so memdir will not "
                "keep its lock and search index there. Remove it (memdir makes the folder "
                "again; it holds only derived data) and open the store again."
            )
        return state

    def _sweep_temps(self) -> None:
        """Remove temporary files that killed writers left behind (only if no writer runs)."""
        from filelock import Timeout

        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            return  # a writer is at work; its temporary file is not stale
        self._swept = True
        try:
            with self._root() as root_fd:
                for parts in temp_files(root_fd):  # by name: no stat of every file
                    with suppress(OSError), dir_handle(self.root, parts[:-1]) as fd:
                        os.unlink(parts[-1], dir_fd=fd)
        except OSError:
            pass  # an unreadable corner: the next writer's sweep or lint will name it
        finally:
            self._lock.release()

    # -- paths -----------------------------------------------------------------

    def resolve(self, path: str, kind: str = "any") -> StorePath:
        """Check an agent path; see :func:`memdir.store.resolve`."""
        return resolve(self.root, path, _kind_arg(kind), self.names)

    def split(self, path: str, kind: str = "any") -> tuple[str, ...]:
        """Check an agent path and return its components below the root."""
        return split(path, _kind_arg(kind), self.names)

    def virtual(self, host: Path) -> str:
        """The agent-facing name of a host path under the root."""
        rel = host.relative_to(self.root)
        return to_virtual(rel.parts)

    @contextmanager
    def _root(self) -> Iterator[int]:
        fd = open_root(self.root)
        try:
            yield fd
        finally:
            os.close(fd)

    def _fail(self, exc: OSError, virtual: str) -> StoreError:
        """The store error for an OS error met on ``virtual``, with a next step."""
        code = exc.errno
        if code == errno.ENOENT:
            return NotFoundError(self._missing(virtual))
        if code == errno.EISDIR:
            return PathError(f"{virtual} is a folder; view it to list its files.")
        if code == errno.ENXIO:
            return PathError(
                f"{virtual} is not a regular file (a FIFO, socket or device) and cannot be "
                "read; delete it."
            )
        if code == errno.ELOOP:
            return PathError(
                f"{virtual} is or goes through a symbolic link, which the store never "
                "follows; delete the link and use the real path."
            )
        if code == errno.ENOTDIR:
            return PathError(
                f"{virtual}: a part of the path is a file, so it cannot hold other files."
            )
        return os_error(exc, virtual)

    def kind(self, path: str) -> EntryKind | None:
        """What lives at ``path`` (links are never followed), or None if nothing does."""
        parts = self.split(path)
        virtual = to_virtual(parts)
        if not parts:
            return "dir"
        try:
            with dir_handle(self.root, parts[:-1]) as fd:
                st = lstat_at(fd, parts[-1])
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise self._fail(exc, virtual) from None
        if st is None:
            return None
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        return "file" if stat.S_ISREG(st.st_mode) else "other"

    def exists(self, path: str) -> bool:
        """Whether a file or folder lives at ``path``."""
        return self.kind(path) is not None

    def is_dir(self, path: str) -> bool:
        """Whether ``path`` names an existing folder."""
        return self.kind(path) == "dir"

    # -- reading -------------------------------------------------------------

    def read_bytes(self, path: str) -> bytes:
        """Return a file's bytes.

        Raises:
            NotFoundError: No file at ``path`` (the message suggests a listing).
            PathError: ``path`` is a folder, a link, or not a regular file.
        """
        parts = self.split(path, "file")
        virtual = to_virtual(parts)
        try:
            with dir_handle(self.root, parts[:-1]) as fd:
                return read_at(fd, parts[-1])
        except OSError as exc:
            raise self._fail(exc, virtual) from None

    def read_nodes(self, nodes: Iterable[Node]) -> Iterator[tuple[Node, bytes | None]]:
        """The bytes of each file of a walk (:meth:`tree`), in the order given.

        Consecutive files of one folder are read through one handle on it, so a
        search over thousands of files opens each folder once instead of once per
        file (reached from the root as :meth:`read_bytes` does, following no link).
        A file removed or replaced by something else since the walk gives None.
        """
        root_fd = open_root(self.root)
        folder: tuple[str, ...] | None = None
        fd = -1
        try:
            for node in nodes:
                check_deadline()  # a search over thousands of files stops on time
                parent = node.parts[:-1]
                if parent != folder:
                    if fd >= 0:
                        os.close(fd)
                        fd = -1
                    folder = parent
                    with suppress(OSError):
                        fd = open_dir(root_fd, parent)
                data = None
                if fd >= 0:
                    with suppress(OSError):
                        data = read_at(fd, node.name)
                yield node, data
        finally:
            if fd >= 0:
                os.close(fd)
            os.close(root_fd)

    def read(self, path: str) -> str:
        """Return a file's text.

        Raises:
            NotFoundError: No file at ``path`` (the message suggests a listing).
            StoreError: The file is not UTF-8 text, or not a regular file.
        """
        data = self.read_bytes(path)
        try:
            return data.decode("utf-8")  # no newline translation
        except UnicodeDecodeError:
            raise StoreError(f"{to_virtual(self.split(path))} is not valid UTF-8 text.") from None

    def version(self, path: str) -> str | None:
        """The digest of a file's current content, or None if it does not exist."""
        try:
            return digest_text(self.read(path))
        except NotFoundError:
            return None

    def _missing(self, virtual: str) -> str:
        parent = virtual.rsplit("/", 1)[0] or ROOT
        try:
            where = parent if self.kind(parent) == "dir" else ROOT
        except StoreError:
            where = ROOT
        return f"{virtual} does not exist. View {where} to see what is there."

    # -- writing -------------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's write lock (shared by all processes using this root).

        Raises:
            StoreError: The lock was not free within ``lock_timeout`` seconds.
        """
        from filelock import Timeout

        try:
            self._lock.acquire()
        except Timeout:
            raise StoreError(
                f"The store is busy: another writer has held its lock for over "
                f"{self.lock_timeout:g} s. Try again in a moment."
            ) from None
        try:
            if not self._swept:
                self._sweep_temps()  # the lock is ours (and re-entrant): nothing else writes
            yield
        finally:
            self._lock.release()

    @property
    def generation(self) -> int:
        """How many changes this process has made to this root (through any Store object).

        Derived state such as a search index can skip re-checking the files while
        the generation is unchanged. Changes made by other processes, or by code
        that writes files directly, are not counted; such code calls
        :meth:`note_change`, and caches must still re-check the files now and then.
        """
        return _GENERATIONS[self.root]

    def note_change(self) -> None:
        """Record that the files changed by some means other than this class."""
        with _GENERATIONS_LOCK:
            _GENERATIONS[self.root] += 1

    def write(
        self,
        path: str,
        text: str,
        *,
        expect: str | None | _AnyVersion = ANY_VERSION,
    ) -> str:
        """Write a whole file atomically and return its new version digest.

        Args:
            path: The file to write.
            text: Its complete new content.
            expect: The version the writer based this content on: a digest from
                :meth:`version`, None to require that no file exists yet, or
                :data:`ANY_VERSION` to skip the check.

        Raises:
            ConflictError: The file's current version differs from ``expect``.
            FileExistsInStoreError: ``expect`` is None and the file exists.
            FileTooLargeError: ``text`` is over the size cap.
        """
        parts = self.split(path, "file")
        virtual = to_virtual(parts)
        data = _encode(text, virtual)
        self._check_size(virtual, len(data))
        self._check_new(parts)
        with self.locked():
            try:
                with dir_handle(self.root, parts[:-1], create=True) as fd:
                    current = self._current(fd, parts[-1], virtual)
                    _check_expect(virtual, expect, current)
                    write_at(fd, parts[-1], data)
            except OSError as exc:
                raise self._fail(exc, virtual) from None
            self.note_change()
        return digest_text(text)

    def _check_new(self, parts: tuple[str, ...]) -> None:
        """Refuse a new file too deep or too long (:func:`check_new_path`); existing ones pass."""
        try:
            check_new_path(parts)
        except PathError:
            if self.kind(to_virtual(parts)) is None:
                raise

    def _current(self, fd: int, name: str, virtual: str) -> str | None:
        """The version of ``name`` in the folder ``fd``; refuse anything but a regular file."""
        st = lstat_at(fd, name)
        if st is None:
            return None
        if stat.S_ISDIR(st.st_mode):
            raise PathError(f"{virtual} is a folder; choose a file name ending in .md.")
        if not stat.S_ISREG(st.st_mode):
            raise PathError(
                f"{virtual} is a symbolic link or special file, not a memory file; delete it "
                "first."
            )
        return hashlib.sha256(read_at(fd, name)).hexdigest()[:16]

    def create(self, path: str, text: str) -> str:
        """Write a new file; refuse if one already exists."""
        return self.write(path, text, expect=None)

    def edit(
        self,
        path: str,
        change: Callable[[str], str],
        *,
        expect: str | _AnyVersion = ANY_VERSION,
    ) -> str:
        """Apply ``change`` to a file's text and write the result; return the new digest.

        ``change`` runs outside the write lock (it may be CPU work on a large
        file); the result is written under the lock only if the file still holds
        the text ``change`` was given. If another writer changed it meanwhile,
        ``change`` runs again on the new text (with ``expect`` set, the edit is
        refused instead, as the caller's version is then stale). ``change`` may
        raise to abort; nothing is written then. It may be called more than once.

        Args:
            path: The file to edit.
            change: Old text -> new text.
            expect: The version the caller based the change on (see :meth:`write`).
        """
        virtual = to_virtual(self.split(path, "file"))
        for _ in range(_EDIT_ATTEMPTS):
            old = self.read(path)
            version = digest_text(old)
            _check_expect(virtual, expect, version)
            new = change(old)
            try:
                return self.write(path, new, expect=version)
            except ConflictError:
                if not isinstance(expect, _AnyVersion):
                    raise
        with self.locked():  # still racing after several tries: hold the lock throughout
            old = self.read(path)
            new = change(old)
            return self.write(path, new, expect=digest_text(old))

    def _check_size(self, virtual: str, size: int) -> None:
        if size > self.max_file_bytes:
            raise FileTooLargeError(
                f"The new content of {virtual} would be {size:,} bytes, over the store's cap "
                f"of {self.max_file_bytes:,} bytes per file. Split it into several files."
            )

    def delete(self, path: str, *, expect: str | None | _AnyVersion = ANY_VERSION) -> int:
        """Delete a file, or a folder with everything in it; the root is refused.

        A link or special file is removed itself, never what it points to.

        Args:
            path: The file or folder to delete.
            expect: For a file, the version the caller last saw (see :meth:`write`).

        Returns:
            How many memory files were removed.
        """
        parts = self.split(path)
        virtual = to_virtual(parts)
        if not parts:
            raise PathError(f"{ROOT} is the store's root and cannot be deleted.")
        with self.locked():
            try:
                with dir_handle(self.root, parts[:-1]) as fd:
                    st = lstat_at(fd, parts[-1])
                    if st is None:
                        raise NotFoundError(self._missing(virtual))
                    count = int(stat.S_ISREG(st.st_mode))
                    if stat.S_ISDIR(st.st_mode):
                        count = sum(n.kind == "memory" for n in self.tree(virtual))
                    elif not isinstance(expect, _AnyVersion):
                        _check_expect(virtual, expect, self._current(fd, parts[-1], virtual))
                    remove_at(fd, parts[-1])
            except OSError as exc:
                raise self._fail(exc, virtual) from None
            self.note_change()
            self._prune_empty(parts[:-1])
        return count

    def rename(
        self,
        old_path: str,
        new_path: str,
        *,
        transform: Callable[[str], str] | None = None,
    ) -> None:
        """Move a file or folder; refuse an existing destination.

        A file keeps being a markdown file (both names end in ``.md``); a folder
        may not move inside itself. Empty folders left behind are removed.

        Args:
            old_path: What to move.
            new_path: Where it goes.
            transform: For a file, a change to its text made in the same step (the
                new text is written before anything moves, so a failure, a full
                disk included, leaves both names as they were).
        """
        src = split(old_path, "any", ANY_NAME)  # a stray file may be renamed into .md
        dst = self.split(new_path)
        src_v, dst_v = to_virtual(src), to_virtual(dst)
        if not src or not dst:
            raise PathError(f"{ROOT} itself cannot be moved or replaced.")
        if (dst_v + "/").startswith(src_v + "/"):
            raise PathError(f"Cannot move {src_v} inside itself.")
        with self.locked():
            try:
                with dir_handle(self.root, src[:-1]) as sfd:
                    st = lstat_at(sfd, src[-1])
                    if st is None:
                        raise NotFoundError(self._missing(src_v))
                    self._check_move(st, src_v, dst_v, dst[-1])
                    below = (0, 0)
                    if stat.S_ISDIR(st.st_mode):
                        with self._root() as root_fd:
                            below = subtree_extent(root_fd, src)
                    check_new_path(dst, below)
                    with dir_handle(self.root, dst[:-1], create=True) as dfd:
                        if lstat_at(dfd, dst[-1]) is not None:
                            raise FileExistsInStoreError(
                                f"{dst_v} already exists. Choose another name, or merge the "
                                "two by editing one and deleting the other."
                            )
                        new_text = None
                        if transform is not None and stat.S_ISREG(st.st_mode):
                            new_text = self._transformed(sfd, src[-1], src_v, transform)
                        _move(sfd, src[-1], dfd, dst[-1], new_text, st.st_mode)
            except OSError as exc:
                raise self._fail(exc, src_v) from None
            self.note_change()
            self._prune_empty(src[:-1])

    def _check_move(self, st: os.stat_result, src_v: str, dst_v: str, dst_name: str) -> None:
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise PathError(f"{src_v} is a link or special file, not a memory file; delete it.")
        if stat.S_ISREG(st.st_mode) != self.names.is_file_name(dst_name):
            raise PathError(
                f"Cannot move {src_v} to {dst_v}: a file must keep a .md name "
                "and a folder must not get one."
            )

    def _transformed(
        self, fd: int, name: str, virtual: str, transform: Callable[[str], str]
    ) -> bytes:
        try:
            text = read_at(fd, name).decode("utf-8")
        except UnicodeDecodeError:
            raise StoreError(f"{virtual} is not valid UTF-8 text.") from None
        data = _encode(transform(text), virtual)
        self._check_size(virtual, len(data))
        return data

    def _prune_empty(self, parts: tuple[str, ...]) -> None:
        for depth in range(len(parts), 0, -1):
            try:
                with dir_handle(self.root, parts[: depth - 1]) as fd:
                    os.rmdir(parts[depth - 1], dir_fd=fd)
            except OSError:
                return  # not empty (or not there): the folders above are not empty either

    # -- listing -------------------------------------------------------------

    def tree(
        self, under: str = ROOT, max_depth: int | None = None, *, hidden: bool = False
    ) -> list[Node]:
        """Every entry below the folder ``under``, each with its kind (see ``walk_tree``).

        This is the one walk that decides what a memory file is (``kind == "memory"``);
        grep, the index, the shell check, snapshots and lint all read it.
        """
        parts = self.split(under, "dir")
        virtual = to_virtual(parts)
        try:
            with self._root() as root_fd:
                return walk_tree(root_fd, parts, max_depth=max_depth, hidden=hidden,
                                 names=self.names)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise PathError(f"{virtual} is a file; view it to read it.") from None
            raise self._fail(exc, virtual) from None

    def listing(
        self,
        under: str = ROOT,
        *,
        detail_depth: int | None = None,
        describe: bool = True,
        markdown_only: bool = True,
    ) -> list[Listed]:
        """:meth:`walk`'s entries as tuples, each file within ``detail_depth`` opened once.

        (path, is a folder, depth, size, description) in tree order, with no cache:
        for a command that lists the store once. Entries deeper than ``detail_depth``
        levels have size 0 and no description (see ``walk_listing``).
        """
        parts = self.split(under, "dir")
        virtual = to_virtual(parts)
        try:
            with self._root() as root_fd:
                return walk_listing(root_fd, parts, detail_depth=detail_depth,
                                    describe=describe, markdown_only=markdown_only,
                                    names=self.names)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise PathError(f"{virtual} is a file; view it to read it.") from None
            raise self._fail(exc, virtual) from None

    def files(self, under: str = ROOT) -> list[str]:
        """Every markdown file at or below ``under``, in tree order (folders first)."""
        return [n.virtual for n in self.tree(under) if n.kind == "memory"]

    def walk(
        self,
        under: str = ROOT,
        max_depth: int | None = None,
        *,
        describe: bool = True,
        markdown_only: bool = True,
    ) -> list[Entry]:
        """Folders and markdown files below ``under`` in tree order (folders first).

        Hidden entries are skipped, and so are other files unless ``markdown_only``
        is False (``lint`` reports them).

        Args:
            under: The folder to list.
            max_depth: List this many levels below ``under`` (None: everything).
            describe: Read each file's description (set False when only paths and
                sizes are needed; it saves opening every file).
            markdown_only: Leave out regular files that are not memory files.
        """
        entries: list[Entry] = []
        folders = _LastFolder(self.root)  # a folder's files come together: one handle each
        try:
            for node in self.tree(under, max_depth):
                if describe:
                    check_deadline()  # each description is a read: thousands take a while
                if node.kind == "dir":
                    entries.append(Entry(node.virtual, True, node.depth))
                elif node.kind == "memory":
                    desc = self._described(node, folders) if describe else None
                    entries.append(Entry(node.virtual, False, node.depth, node.size, desc))
                elif node.kind == "other" and not markdown_only and not node.name.startswith("."):
                    entries.append(Entry(node.virtual, False, node.depth, node.size))
        finally:
            folders.close()
        return entries

    def description(self, path: str) -> str | None:
        """A file's one-line description, or None if it has none."""
        parts = self.split(path, "file")
        virtual = to_virtual(parts)
        try:
            with dir_handle(self.root, parts[:-1]) as fd:
                return self._head_description(fd, parts[-1])
        except OSError as exc:
            raise self._fail(exc, virtual) from None

    def _described(self, node: Node, folders: _LastFolder) -> str | None:
        key = node.virtual
        cached = self._desc_cache.get(key)
        stamp = (node.ino, node.mtime_ns, node.ctime_ns, node.size)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            desc = self._head_description(folders.handle(node.parts[:-1]), node.name)
        except OSError:
            desc = None  # replaced or removed since the walk saw it
        self._desc_cache[key] = (stamp, desc)
        return desc

    @staticmethod
    def _head_description(fd: int, name: str) -> str | None:
        head = read_at(fd, name, _HEAD_BYTES)
        if len(head) == _HEAD_BYTES and b"\n---" not in head[3:]:
            head = read_at(fd, name, _MAX_HEADER_BYTES)
        return description_of(head.decode("utf-8", errors="replace"))

    def make_plain(self, *, keep_git: bool = True) -> list[tuple[str, str]]:
        """Remove links and special files and clear setuid, setgid and execute bits.

        For code that let something else change the files (the shell tool): call
        it under :meth:`locked`, before the lock is released, so no other tool
        ever meets what was planted. Returns (path, what was done) pairs.

        Args:
            keep_git: Keep a ``.git`` at the root; pass False when there was none
                before the change (git would run hooks and config planted in it).
        """
        try:
            done = make_plain(self.root, self.names)
            with self._root() as fd:
                if not keep_git and lstat_at(fd, ".git") is not None:
                    remove_at(fd, ".git")
                    done.append((f"{ROOT}/.git", "removed a repository it created"))
        except OSError as exc:
            raise self._fail(exc, ROOT) from None
        if done:
            self.note_change()
        return done

    def capture(self) -> tuple[dict[str, bytes], frozenset[str]]:
        """Every regular file's bytes and every folder, hidden ones too, under the lock.

        Returns agent-facing paths (``/memories/...``); links and special files are
        left out, so :meth:`reset_to` with the result removes them.
        """
        with self.locked():
            try:
                files, folders = capture_tree(self.root)
            except OSError as exc:
                raise self._fail(exc, ROOT) from None
        return ({to_virtual(p): data for p, data in files.items()},
                frozenset(to_virtual(p) for p in folders))

    def reset_to(self, files: Mapping[str, bytes], folders: Iterable[str] = ()) -> int:
        """Make the store hold exactly ``files`` (and ``folders``), under the lock.

        Every other entry goes, whatever its name or kind; changed files are
        rewritten atomically; ``.memdir`` and ``.git`` at the root stay. This is the
        one way a store is put back to an earlier state (a snapshot, a history step).

        Args:
            files: Agent-facing path -> bytes.
            folders: Agent-facing paths of folders to keep even when empty.

        Returns:
            How many entries were removed, written or rewritten.
        """
        with self.locked():
            try:
                changes = reset_tree(self.root, {posix_parts(p): d for p, d in files.items()},
                                     [posix_parts(p) for p in folders])
            except OSError as exc:
                raise self._fail(exc, ROOT) from None
            if changes:
                self.note_change()
        return changes

    def stray_files(self) -> list[Path]:
        """Host files under the root that are not memory files (contract defects).

        Links and special files count; temporary files of atomic writes and hidden
        names at the root do not.
        """
        return [
            self.root.joinpath(*n.parts)
            for n in self.tree()
            if n.kind in ("other", "link", "special")
            and not (len(n.parts) == 1 and n.name.startswith("."))
        ]


def _kind_arg(kind: str) -> Kind:
    if kind == "file":
        return "file"
    if kind == "dir":
        return "dir"
    if kind == "any":
        return "any"
    raise ValueError(f"unknown kind {kind!r}")


def _encode(text: str, virtual: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise StoreError(
            f"The text for {virtual} contains an invalid character (a lone surrogate); "
            "send ordinary Unicode text."
        ) from None


def _check_expect(virtual: str, expect: str | None | _AnyVersion, current: str | None) -> None:
    if isinstance(expect, _AnyVersion):
        return
    if expect is None and current is not None:
        raise FileExistsInStoreError(
            f"{virtual} already exists. View it and edit it with str_replace "
            "or insert, or delete it first if it should be replaced."
        )
    if expect is not None and current != expect:
        raise ConflictError(
            f"{virtual} changed since you read it (you had version {expect}, "
            f"it is now {current or 'deleted'}). Read it again and redo your change."
        )


def _move(
    sfd: int, src: str, dfd: int, dst: str, new_data: bytes | None, mode: int
) -> None:
    """Move ``src`` to ``dst``; with ``new_data``, the moved file gets that content.

    The new content is written to a temporary file first; only then does
    anything move. If putting the new content in place fails, the move is undone.
    """
    if new_data is None:
        os.rename(src, dst, src_dir_fd=sfd, dst_dir_fd=dfd)
    else:
        tmp = write_temp_at(dfd, new_data, mode)
        try:
            os.rename(src, dst, src_dir_fd=sfd, dst_dir_fd=dfd)
        except BaseException:
            os.unlink(tmp, dir_fd=dfd)
            raise
        try:
            os.rename(tmp, dst, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            os.rename(dst, src, src_dir_fd=dfd, dst_dir_fd=sfd)
            os.unlink(tmp, dir_fd=dfd)
            raise
    os.fsync(dfd)
    if sfd != dfd:
        os.fsync(sfd)
