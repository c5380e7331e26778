"""The store: a folder of markdown memory files that agents see as ``/memories``.

All reads and writes of agent-facing paths go through :class:`Store`. Writes are
atomic and serialised by a lock file shared by every process that opens the same
root, and a writer can state which version of a file it based its change on, so
a stale writer is refused instead of silently overwriting someone else's update.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from filelock import FileLock

from memdir.store._errors import (
    ConflictError,
    FileExistsInStoreError,
    FileTooLargeError,
    NotFoundError,
    PathError,
    StoreError,
)
from memdir.store._paths import ROOT, StorePath, atomic_write, resolve, to_virtual

__all__ = ["ANY_VERSION", "DEFAULT_MAX_FILE_BYTES", "Entry", "Store", "digest_text"]

DEFAULT_MAX_FILE_BYTES: Final = 512 * 1024
STATE_DIR: Final = ".memdir"


class _AnyVersion:
    def __repr__(self) -> str:
        return "ANY_VERSION"


ANY_VERSION: Final = _AnyVersion()
"""Pass as ``expect`` to write without checking the file's current version."""


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


_SIMPLE_DESC = re.compile(r"^description:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_YAML_SPECIAL = tuple("'\"|>[{&*!%@`#")
_HEAD_BYTES = 4096

# Changes made through any Store object of this process, per root (see Store.generation).
_GENERATIONS: Counter[Path] = Counter()
_GENERATIONS_LOCK = threading.Lock()


class Store:
    """A memory store rooted at a host directory.

    Args:
        root: The host directory. It must exist unless ``create`` is set.
        max_file_bytes: Largest file a write may produce (UTF-8 bytes).
        create: Create the directory (and its parents) if missing.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        create: bool = False,
    ) -> None:
        path = Path(root).expanduser()
        if create:
            path.mkdir(parents=True, exist_ok=True)
        if not path.is_dir():
            raise StoreError(
                f"No store at {path}: the folder does not exist. "
                "Create it with `memdir init PATH` first."
            )
        self.root = Path(os.path.realpath(path))
        self.max_file_bytes = max_file_bytes
        self._lock = FileLock(self._state_dir() / "lock", timeout=60)
        self._desc_cache: dict[str, tuple[int, int, str | None]] = {}

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    def _state_dir(self) -> Path:
        state = self.root / STATE_DIR
        state.mkdir(exist_ok=True)
        return state

    # -- paths ---------------------------------------------------------------

    def resolve(self, path: str, kind: str = "any") -> StorePath:
        """Check an agent path; see :func:`memdir.store.resolve`."""
        if kind not in ("file", "dir", "any"):
            raise ValueError(f"unknown kind {kind!r}")
        return resolve(self.root, path, kind)  # type: ignore[arg-type]

    def virtual(self, host: Path) -> str:
        """The agent-facing name of a host path under the root."""
        rel = host.relative_to(self.root)
        return to_virtual(rel.parts)

    def exists(self, path: str) -> bool:
        """Whether a file or folder lives at ``path``."""
        return self.resolve(path).host.exists()

    def is_dir(self, path: str) -> bool:
        """Whether ``path`` names an existing folder."""
        return self.resolve(path).host.is_dir()

    # -- reading -------------------------------------------------------------

    def read(self, path: str) -> str:
        """Return a file's text.

        Raises:
            NotFoundError: No file at ``path`` (the message suggests a listing).
        """
        target = self.resolve(path, "file")
        try:
            return target.host.read_bytes().decode("utf-8")  # no newline translation
        except FileNotFoundError:
            raise NotFoundError(self._missing(target.virtual)) from None
        except IsADirectoryError:
            raise PathError(f"{target.virtual} is a folder; view it to list its files.") from None
        except UnicodeDecodeError:
            raise StoreError(f"{target.virtual} is not valid UTF-8 text.") from None

    def version(self, path: str) -> str | None:
        """The digest of a file's current content, or None if it does not exist."""
        try:
            return digest_text(self.read(path))
        except NotFoundError:
            return None

    def _missing(self, virtual: str) -> str:
        parent = virtual.rsplit("/", 1)[0] or ROOT
        try:
            where = parent if self.resolve(parent).host.is_dir() else ROOT
        except PathError:
            where = ROOT
        return f"{virtual} does not exist. View {where} to see what is there."

    # -- writing -------------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's write lock (shared by all processes using this root)."""
        with self._lock:
            yield

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
        target = self.resolve(path, "file")
        data = text.encode("utf-8")
        self._check_size(target.virtual, len(data))
        with self._lock:
            if target.host.is_dir():
                raise PathError(f"{target.virtual} is a folder; choose a file name ending in .md.")
            self._check_parents(target)
            if not isinstance(expect, _AnyVersion):
                current = self.version(target.virtual)
                if expect is None and current is not None:
                    raise FileExistsInStoreError(
                        f"{target.virtual} already exists. View it and edit it with str_replace "
                        "or insert, or delete it first if it should be replaced."
                    )
                if expect is not None and current != expect:
                    raise ConflictError(
                        f"{target.virtual} changed since you read it (you had version {expect}, "
                        f"it is now {current or 'deleted'}). Read it again and redo your change."
                    )
            atomic_write(target.host, data)
            self.note_change()
        return digest_text(text)

    def create(self, path: str, text: str) -> str:
        """Write a new file; refuse if one already exists."""
        return self.write(path, text, expect=None)

    def edit(self, path: str, change: Callable[[str], str]) -> str:
        """Apply ``change`` to a file's text under the lock; return the new digest.

        ``change`` may raise to abort; nothing is written then.
        """
        with self._lock:
            old = self.read(path)
            new = change(old)
            return self.write(path, new, expect=digest_text(old))

    def _check_size(self, virtual: str, size: int) -> None:
        if size > self.max_file_bytes:
            raise FileTooLargeError(
                f"The new content of {virtual} would be {size:,} bytes, over the store's cap "
                f"of {self.max_file_bytes:,} bytes per file. Split it into several files."
            )

    def _check_parents(self, target: StorePath) -> None:
        parent = target.host.parent
        while parent != self.root and not parent.exists():
            parent = parent.parent
        if parent != self.root and not parent.is_dir():
            raise PathError(f"{self.virtual(parent)} is a file, so it cannot hold other files.")

    def delete(self, path: str) -> None:
        """Delete a file, or a folder with everything in it; the root is refused."""
        target = self.resolve(path)
        if target.is_root:
            raise PathError(f"{ROOT} is the store's root and cannot be deleted.")
        with self._lock:
            if target.host.is_symlink() or target.host.is_file():
                target.host.unlink()  # a link goes, never what it points to
            elif target.host.is_dir():
                shutil.rmtree(target.host)
            else:
                raise NotFoundError(self._missing(target.virtual))
            self.note_change()
            self._prune_empty(target.host.parent)

    def rename(self, old_path: str, new_path: str) -> None:
        """Move a file or folder; refuse an existing destination.

        A file keeps being a markdown file (both names end in ``.md``); a folder
        may not move inside itself. Empty folders left behind are removed.
        """
        src = self.resolve(old_path)
        dst = self.resolve(new_path)
        if src.is_root or dst.is_root:
            raise PathError(f"{ROOT} itself cannot be moved or replaced.")
        with self._lock:
            if not src.host.exists():
                raise NotFoundError(self._missing(src.virtual))
            if src.host.is_file() != dst.virtual.endswith(".md"):
                raise PathError(
                    f"Cannot move {src.virtual} to {dst.virtual}: a file must keep a .md name "
                    "and a folder must not get one."
                )
            if dst.host.exists():
                raise FileExistsInStoreError(
                    f"{dst.virtual} already exists. Choose another name, or merge the two by "
                    "editing one and deleting the other."
                )
            if src.host.is_dir() and (dst.virtual + "/").startswith(src.virtual + "/"):
                raise PathError(f"Cannot move {src.virtual} inside itself.")
            self._check_parents(dst)
            dst.host.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src.host, dst.host)
            self.note_change()
            self._prune_empty(src.host.parent)

    def _prune_empty(self, folder: Path) -> None:
        while folder != self.root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent

    # -- listing -------------------------------------------------------------

    def files(self, under: str = ROOT) -> list[str]:
        """Every markdown file at or below ``under``, sorted by path."""
        return [e.path for e in self.walk(under, describe=False) if not e.is_dir]

    def walk(
        self, under: str = ROOT, max_depth: int | None = None, *, describe: bool = True
    ) -> list[Entry]:
        """Folders and markdown files below ``under`` in tree order (folders first).

        Hidden entries and non-markdown files are skipped; ``lint`` reports the latter.

        Args:
            under: The folder to list.
            max_depth: List this many levels below ``under`` (None: everything).
            describe: Read each file's description (set False when only paths and
                sizes are needed; it saves opening every file).
        """
        start = self.resolve(under, "dir")
        if not start.host.is_dir():
            if start.host.exists():
                raise PathError(f"{start.virtual} is a file; view it to read it.")
            raise NotFoundError(self._missing(start.virtual))
        entries: list[Entry] = []
        self._walk(str(start.host), start.virtual, 1, max_depth, entries, describe)
        return entries

    def _walk(
        self,
        host: str,
        virtual: str,
        depth: int,
        max_depth: int | None,
        out: list[Entry],
        describe: bool = True,
    ) -> None:
        try:
            items = sorted(os.scandir(host), key=lambda d: d.name)
        except FileNotFoundError:
            return
        dirs = [d for d in items if not d.name.startswith(".") and _is_real_dir(d)]
        mds = [
            d for d in items
            if not d.name.startswith(".") and d.name.endswith(".md") and _is_real_file(d)
        ]
        for d in dirs:
            child = f"{virtual}/{d.name}"
            out.append(Entry(child, True, depth))
            if max_depth is None or depth < max_depth:
                self._walk(d.path, child, depth + 1, max_depth, out, describe)
        for f in mds:
            stat = f.stat()
            desc = (
                self._description(f.path, stat.st_mtime_ns, stat.st_size)
                if describe
                else None
            )
            out.append(Entry(f"{virtual}/{f.name}", False, depth, stat.st_size, desc))

    def description(self, path: str) -> str | None:
        """A file's one-line description, or None if it has none."""
        target = self.resolve(path, "file")
        try:
            stat = target.host.stat()
        except FileNotFoundError:
            raise NotFoundError(self._missing(target.virtual)) from None
        return self._description(str(target.host), stat.st_mtime_ns, stat.st_size)

    def _description(self, host: str, mtime: int, size: int) -> str | None:
        # Keyed by the host path as a string: building Path objects for thousands of
        # files cost more than the listing itself.
        cached = self._desc_cache.get(host)
        if cached is not None and cached[0] == mtime and cached[1] == size:
            return cached[2]
        desc = _read_description(host)
        self._desc_cache[host] = (mtime, size, desc)
        return desc

    def stray_files(self) -> list[Path]:
        """Host files under the root that are not markdown (contract defects)."""
        strays: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                host = Path(dirpath) / name
                if name.startswith(".") or not name.endswith(".md") or host.is_symlink():
                    if Path(dirpath) == self.root and name.startswith("."):
                        continue
                    strays.append(host)
        return strays


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    return entry.is_dir(follow_symlinks=False)


def _is_real_file(entry: os.DirEntry[str]) -> bool:
    return entry.is_file(follow_symlinks=False)


def _read_description(host: str) -> str | None:
    try:
        with open(host, "rb") as handle:
            head = handle.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    head = head.removeprefix("\ufeff")
    if not head.startswith("---"):
        return None
    end = head.find("\n---", 3)
    if end < 0 and len(head) >= _HEAD_BYTES:
        with open(host, encoding="utf-8", errors="replace") as handle:
            head = handle.read().removeprefix("\ufeff")
        end = head.find("\n---", 3)
    if end < 0:
        return None
    header = head[4:end]
    match = _SIMPLE_DESC.search(header)
    if match is not None:
        value = match.group(1)
        plain = not value.startswith(_YAML_SPECIAL) and ": " not in value
        if value and plain and " #" not in value:
            return value
    import yaml  # imported only for a description that is not a plain one-liner

    try:
        data = yaml.safe_load(header)
    except yaml.YAMLError:
        return None
    if isinstance(data, dict) and data.get("description") is not None:
        return " ".join(str(data["description"]).split())
    return None
