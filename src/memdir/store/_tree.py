"""The one walk of a store's tree, and what counts as a memory file.

Every consumer that needs the files of a store (listings, grep, the BM25
index, the shell tool's check, snapshots, lint, metrics) reads this walk, so
they agree on what a memory file is: a regular file whose name the store's
:class:`~memdir.store._paths.NamePolicy` accepts, with no hidden component on
its path. Everything else the walk meets is reported with its kind, so lint and
the shell check can name it.

The walk is iterative and goes through directory handles: a tree thousands of
folders deep is listed without recursion, and no symbolic link is followed.
Inside a tool call it checks the call's deadline between folders, so a walk of
a huge tree ends when the call's time is up.
A folder's handle is closed as soon as its last subfolder has been opened, so
the handles held at once stay below the tree's depth.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Final, Literal

from memdir.store._deadline import check_deadline
from memdir.store._frontmatter import description_of
from memdir.store._paths import (
    ANY_NAME,
    MARKDOWN,
    ROOT,
    NamePolicy,
    is_temp_name,
    lstat_at,
    open_dir,
    open_root,
    read_at,
    remove_at,
    to_virtual,
    write_at,
)

__all__ = [
    "HEAD_BYTES",
    "MAX_HEADER_BYTES",
    "STATE_NAMES",
    "Listed",
    "Node",
    "NodeKind",
    "capture_tree",
    "head_description",
    "make_plain",
    "reset_tree",
    "subtree_extent",
    "visible_entries",
    "walk_listing",
    "walk_tree",
]

STATE_NAMES: Final = frozenset({".memdir", ".git"})
"""The store's own state at the root; never part of the tree."""

NodeKind = Literal["dir", "memory", "other", "temp", "link", "special"]
"""``memory``: a memory file; ``other``: any other regular file (non-markdown,
hidden, or with an undecodable name); ``temp``: an atomic write's temporary
file; ``link``: a symbolic link; ``special``: a FIFO, socket or device."""

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

_BY_NAME: Final = attrgetter("name")

HEAD_BYTES: Final = 4096
"""Bytes a listing reads first for a file's description (a usual header fits)."""
MAX_HEADER_BYTES: Final = 64 * 1024
"""Most bytes a listing reads for a header that does not end within :data:`HEAD_BYTES`."""


@dataclass(frozen=True, slots=True)
class Node:
    """One entry of the tree."""

    parts: tuple[str, ...]
    kind: NodeKind
    depth: int
    """1 for an entry directly in the walked folder."""
    size: int
    mtime_ns: int
    ino: int
    mode: int
    ctime_ns: int
    """The inode's change time: unlike ``mtime_ns``, no process can set it back, so a
    cache keyed on it sees an edit made in place with the size and mtime restored."""

    @property
    def virtual(self) -> str:
        """The agent-facing path."""
        return to_virtual(self.parts)

    @property
    def name(self) -> str:
        """The entry's own name."""
        return self.parts[-1]


class _Handle:
    """A folder handle shared by its pending subfolders; closed after the last one opens."""

    __slots__ = ("fd", "pending")

    def __init__(self, fd: int, pending: int) -> None:
        self.fd = fd
        self.pending = pending


def _kind(name: str, st: os.stat_result, hidden: bool, names: NamePolicy) -> NodeKind:
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "link"
    if not stat.S_ISREG(mode):
        return "special"
    if is_temp_name(name):
        return "temp"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "other"
    if hidden or name.startswith(".") or not names.is_file_name(name):
        return "other"
    return "memory"


def walk_tree(
    root_fd: int,
    start: tuple[str, ...] = (),
    *,
    max_depth: int | None = None,
    hidden: bool = False,
    names: NamePolicy = MARKDOWN,
) -> list[Node]:
    """Every entry below the folder ``start``, in tree order.

    Within a folder, subfolders come first (each followed by its own tree), then
    the other entries, each group sorted by name.

    Args:
        root_fd: The store root's handle (not consumed).
        start: The folder to walk, as components below the root.
        max_depth: Walk this many levels below ``start`` (None: everything).
        hidden: Also walk into hidden folders (their entries are never memory files).
        names: Which file names are memory files.

    Raises:
        OSError: ``start`` cannot be opened as a folder.
    """
    out: list[Node] = []
    first = _Handle(open_dir(root_fd, start), 0)
    open_handles = [first]
    # Work items: a Node to emit, or (parent handle, node of the folder to scan).
    stack: list[Node | tuple[_Handle, Node | None]] = [(first, None)]
    try:
        while stack:
            item = stack.pop()
            if isinstance(item, Node):
                out.append(item)
                continue
            check_deadline()  # between folders: a walk of a huge tree stops on time
            parent, node = item
            if node is None:
                handle = parent
                parts, depth, in_hidden = start, 0, False
            else:
                child = _open_child(parent, node.name, open_handles)
                if child is None:
                    continue  # replaced or removed meanwhile
                handle = child
                parts, depth = node.parts, node.depth
                in_hidden = any(p.startswith(".") for p in node.parts[len(start):])
            stack.extend(reversed(_scan(handle, parts, depth, in_hidden, max_depth, hidden,
                                        names, open_handles)))
    finally:
        for handle in open_handles:
            os.close(handle.fd)
    return out


def nodes_at(
    root_fd: int, parts: tuple[str, ...], *, names: NamePolicy = MARKDOWN
) -> list[Node]:
    """The entry at ``parts``, or for a folder every visible entry below it; [] if gone.

    For a reader of a change feed (:mod:`memdir.store._feed`): the state now of one
    path the feed named. Nothing is followed; a link is reported as a link.
    """
    if not parts:
        return walk_tree(root_fd, names=names)
    try:
        parent = open_dir(root_fd, parts[:-1])
    except OSError:
        return []
    try:
        st = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
    except OSError:
        return []
    finally:
        os.close(parent)
    hidden = any(p.startswith(".") for p in parts)
    kind = _kind(parts[-1], st, hidden, names)
    if kind != "dir":
        return [Node(parts, kind, len(parts), st.st_size, st.st_mtime_ns, st.st_ino,
                     st.st_mode, st.st_ctime_ns)]
    if hidden:
        return []
    try:
        return walk_tree(root_fd, parts, names=names)
    except OSError:
        return []  # replaced by something else meanwhile: the feed names it again


def visible_entries(fd: int) -> Iterator[tuple[os.DirEntry[str], bool]]:
    """A folder's entries without the hidden ones, each with whether it is a folder.

    The preamble of the store's fast walks (:func:`memory_files`, and
    :func:`memdir.tools._textcache.read_once`'s listings): a name starting
    with ``.`` is skipped (the store's own state, temporary files, hidden
    folders), and a folder is told by the directory entry's type without
    following anything, so a link to a folder is not one. An entry whose type
    cannot be read (gone meanwhile) is left out. Entries come one at a time, so
    a folder of many thousand files is never held as a list of entries; the
    listing is closed once the loop over it ends, by exhaustion or otherwise.

    Raises:
        OSError: The folder cannot be listed (raised at the first entry asked for).
    """
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                continue  # hidden, the store's own state, temporary files
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            yield entry, is_dir


def memory_files(
    root_fd: int, names: NamePolicy = MARKDOWN
) -> list[tuple[str, os.stat_result]]:
    """Every memory file below the root, as its virtual path with its ``lstat``, unsorted.

    The same files as the ``memory`` nodes of :func:`walk_tree`, found in a
    fraction of its time (no sorting, no node per entry, and folders told from
    files by the directory entry's type, so only candidate files are stat'ed):
    the walk a search index or a text cache makes to check its fingerprints.
    Nothing is followed.

    Cost: one ``lstat`` per memory file and one ``open`` per folder.
    """
    found: list[tuple[str, os.stat_result]] = []
    stack: list[tuple[int, str]] = [(os.dup(root_fd), ROOT + "/")]
    suffixes = names.suffixes
    try:
        while stack:
            check_deadline()  # between folders, as walk_tree does
            fd, prefix = stack.pop()
            try:
                for entry, is_dir in visible_entries(fd):
                    name = entry.name
                    if is_dir:
                        try:
                            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                        except OSError:
                            continue
                        stack.append((child, prefix + name + "/"))
                        continue
                    if not (name.endswith(suffixes) if suffixes is not None
                            else names.is_file_name(name)):
                        continue
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue  # gone meanwhile
                    if stat.S_ISREG(st.st_mode) and (name.isascii() or _encodable(name)):
                        found.append((prefix + name, st))
            finally:
                os.close(fd)
    finally:
        for fd, _ in stack:
            os.close(fd)
    return found


Listed = tuple[str, bool, int, int, str | None]
"""One entry of :func:`walk_listing`: (agent path, is a folder, depth, size, description)."""


def head_description(dir_fd: int, name: str) -> tuple[int, str | None]:
    """The size of the regular file ``name`` in a folder and its description, in one open.

    Reads :data:`HEAD_BYTES`, and on to :data:`MAX_HEADER_BYTES` when the header has
    not ended by then; the description is :func:`description_of` the bytes read.

    Raises:
        OSError: As :func:`~memdir.store._paths.read_at` (a link, a folder or a special
            file is never read).
    """
    fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.ENXIO,
                          "not a regular file")
        size = st.st_size
        head = os.read(fd, HEAD_BYTES)
        if len(head) < HEAD_BYTES and len(head) < size:
            head = _read_up_to(fd, HEAD_BYTES, head, size)  # a short read: read on
        if len(head) == HEAD_BYTES and b"\n---" not in head[3:]:
            head = _read_up_to(fd, MAX_HEADER_BYTES, head, size)
    finally:
        os.close(fd)
    return size, description_of(head.decode("utf-8", errors="replace"))


def _read_up_to(fd: int, limit: int, head: bytes, size: int) -> bytes:
    """``head`` (the bytes read so far from ``fd``) and what follows, up to ``limit`` bytes.

    Reading stops at the file's ``size`` as ``fstat`` gave it, so a small file takes one
    ``read``, not a second one that finds its end.
    """
    parts = [head]
    got = len(head)
    while got < limit:
        chunk = os.read(fd, limit - got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
        if got >= size:
            break  # the end fstat saw: no read only to find it
    return b"".join(parts)


def walk_listing(
    root_fd: int,
    start: tuple[str, ...] = (),
    *,
    detail_depth: int | None = None,
    describe: bool = True,
    markdown_only: bool = True,
    names: NamePolicy = MARKDOWN,
) -> list[Listed]:
    """The entries of a listing below the folder ``start``, in :func:`walk_tree`'s order.

    The same entries as the folders, ``memory`` files and (unless ``markdown_only``)
    other visible files of :func:`walk_tree`, found by one listing of each folder:
    folders and files are told apart by the directory entry's type, and only files
    within ``detail_depth`` levels are opened: each once, through its folder's handle,
    for its size and, with ``describe``, its description (:func:`head_description`;
    without it, an ``lstat``). Deeper entries come with size 0 and no description,
    for callers that only count them. Hidden entries are left out and hidden
    folders not entered; nothing is followed.

    Cost: one ``open`` and listing per folder, and per file within ``detail_depth``
    an ``open``, ``fstat``, ``read`` and ``close`` (or one ``lstat``).

    Raises:
        OSError: ``start`` cannot be opened as a folder.
    """
    out: list[Listed] = []
    first = _Handle(open_dir(root_fd, start), 0)
    open_handles = [first]
    prefix = to_virtual(start)
    # Work items: an entry to emit, or a folder to scan.
    stack: list[Listed | _Folder] = [_Folder(first, "", prefix, 0)]
    try:
        while stack:
            item = stack.pop()
            if not isinstance(item, _Folder):
                out.append(item)
                continue
            check_deadline()  # between folders: a walk of a huge tree stops on time
            handle = item.parent if item.depth == 0 else _open_child(
                item.parent, item.name, open_handles)
            if handle is None:
                continue  # replaced or removed meanwhile
            detail = detail_depth is None or item.depth < detail_depth
            stack.extend(reversed(_scan_listing(handle, item.path, item.depth, detail,
                                                describe, markdown_only, names, open_handles)))
    finally:
        for handle in open_handles:
            os.close(handle.fd)
    return out


class _Folder:
    """A folder :func:`walk_listing` has still to scan, and the handle it is opened from."""

    __slots__ = ("depth", "name", "parent", "path")

    def __init__(self, parent: _Handle, name: str, path: str, depth: int) -> None:
        self.parent = parent
        self.name = name
        self.path = path
        self.depth = depth


def _scan_listing(
    handle: _Handle,
    path: str,
    depth: int,
    detail: bool,
    describe: bool,
    markdown_only: bool,
    names: NamePolicy,
    open_handles: list[_Handle],
) -> list[Listed | _Folder]:
    """The work a folder adds to :func:`walk_listing`, in the order it is to be done."""
    with os.scandir(handle.fd) as listing:
        entries = sorted(listing, key=_BY_NAME)
    folders: list[Listed | _Folder] = []
    files: list[Listed | _Folder] = []
    level = depth + 1
    fd = handle.fd
    suffixes = names.suffixes
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue  # hidden (the store's own state and temporary files among them)
        try:
            if not entry.is_file(follow_symlinks=False):
                if entry.is_dir(follow_symlinks=False):
                    virtual = f"{path}/{name}"
                    folders.append((virtual, True, level, 0, None))
                    handle.pending += 1
                    folders.append(_Folder(handle, name, virtual, level))
                continue  # a folder, or a link or special file (never listed)
        except OSError:
            continue  # gone meanwhile
        memory = (name.endswith(suffixes) if suffixes is not None else names.is_file_name(name)
                  ) and (name.isascii() or _encodable(name))
        if not memory and markdown_only:
            continue
        size, description = 0, None
        if detail:
            try:
                if describe and memory:
                    try:
                        size, description = head_description(fd, name)
                    except OSError:
                        size = entry.stat(follow_symlinks=False).st_size  # not readable
                else:
                    size = entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue  # gone meanwhile
        files.append((f"{path}/{name}", False, level, size, description))
    if handle.pending == 0:
        _close(handle, open_handles)
    return folders + files


def temp_files(root_fd: int) -> list[tuple[str, ...]]:
    """The temporary files of atomic writes below the root, hidden folders included.

    Found by name alone (folders are told from files by the directory entry's
    type), so the walk costs a listing of each folder, not a stat of each file.
    The store's own state at the root (:data:`STATE_NAMES`) is skipped, as
    :func:`walk_tree` skips it. Nothing is followed.
    """
    found: list[tuple[str, ...]] = []
    stack: list[tuple[int, tuple[str, ...]]] = [(os.dup(root_fd), ())]
    try:
        while stack:
            fd, parts = stack.pop()
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        name = entry.name
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                if parts or name not in STATE_NAMES:
                                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                                    stack.append((child, (*parts, name)))
                            elif is_temp_name(name) and entry.is_file(follow_symlinks=False):
                                found.append((*parts, name))
                        except OSError:
                            continue  # gone or replaced meanwhile
            finally:
                os.close(fd)
    finally:
        for fd, _ in stack:
            os.close(fd)
    return found


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def subtree_extent(root_fd: int, folder: tuple[str, ...]) -> tuple[int, int]:
    """How deep and how long the paths inside ``folder`` go, relative to it.

    Returns:
        The most levels below ``folder`` any entry sits at, and the longest
        ``/rest/of/path`` below it in UTF-8 bytes (both 0 for an empty folder);
        what :func:`~memdir.store._paths.check_new_path` needs for a moved folder.
    """
    depth = size = 0
    for node in walk_tree(root_fd, folder, hidden=True, names=ANY_NAME):
        depth = max(depth, node.depth)
        rel = node.parts[len(folder):]
        size = max(size, len(rel) + sum(len(p.encode("utf-8", "surrogateescape")) for p in rel))
    return depth, size


def _open_child(parent: _Handle, name: str, open_handles: list[_Handle]) -> _Handle | None:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent.fd)
    except (FileNotFoundError, NotADirectoryError, OSError):
        fd = -1
    finally:
        parent.pending -= 1
        if parent.pending == 0:
            _close(parent, open_handles)
    if fd < 0:
        return None
    handle = _Handle(fd, 0)
    open_handles.append(handle)
    return handle


def _close(handle: _Handle, open_handles: list[_Handle]) -> None:
    if handle in open_handles:
        open_handles.remove(handle)
        os.close(handle.fd)


def _scan(
    handle: _Handle,
    parts: tuple[str, ...],
    depth: int,
    in_hidden: bool,
    max_depth: int | None,
    hidden: bool,
    names: NamePolicy,
    open_handles: list[_Handle],
) -> list[Node | tuple[_Handle, Node | None]]:
    """The work a folder adds, in the order it is to be done."""
    with os.scandir(handle.fd) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    at_root = not parts
    folders: list[Node | tuple[_Handle, Node | None]] = []
    files: list[Node | tuple[_Handle, Node | None]] = []
    for entry in entries:
        if at_root and entry.name in STATE_NAMES:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # gone meanwhile
        kind = _kind(entry.name, st, in_hidden, names)
        node = Node((*parts, entry.name), kind, depth + 1, st.st_size, st.st_mtime_ns,
                    st.st_ino, st.st_mode, st.st_ctime_ns)
        if kind != "dir":
            files.append(node)
            continue
        is_hidden = in_hidden or entry.name.startswith(".")
        if is_hidden and not hidden:
            continue
        folders.append(node)
        if max_depth is None or depth + 1 < max_depth:
            handle.pending += 1
            folders.append((handle, node))
    if handle.pending == 0:
        _close(handle, open_handles)
    return folders + files


_SPECIAL_BITS: Final = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX
_FILE_OPEN: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def make_plain(root: Path, names: NamePolicy = MARKDOWN) -> list[tuple[str, str]]:
    """Leave only plain files and folders under ``root``; return what was done where.

    Symbolic links, FIFOs, sockets and devices are removed; setuid, setgid and
    sticky bits are cleared everywhere and execute bits on files; every file
    stays readable and writable by its owner, every folder usable. Hidden
    entries are included (the store's own state at the root is not). Nothing
    is followed, so a link is removed itself, never what it points to.
    """
    done: list[tuple[str, str]] = []
    root_fd = open_root(root)
    try:
        nodes = walk_tree(root_fd, hidden=True, names=names)
        for node in nodes:
            action = _plain_action(node)
            if action is None:
                continue
            try:
                parent = open_dir(root_fd, node.parts[:-1])
            except OSError:
                continue  # its folder went with an earlier removal
            try:
                _make_plain_at(parent, node)
                done.append((node.virtual, action))
            except OSError:
                continue  # gone meanwhile
            finally:
                os.close(parent)
    finally:
        os.close(root_fd)
    return done


def _plain_action(node: Node) -> str | None:
    if node.kind == "link":
        return "removed a symbolic link"
    if node.kind == "special":
        return "removed a special file (FIFO, socket or device)"
    if node.kind == "dir":
        if node.mode & _SPECIAL_BITS or node.mode & 0o700 != 0o700:
            return "reset the folder's permission bits"
        return None
    if node.mode & (_SPECIAL_BITS | 0o111) or node.mode & 0o600 != 0o600:
        return "cleared setuid, setgid and execute bits"
    return None


def _make_plain_at(parent: int, node: Node) -> None:
    st = os.stat(node.name, dir_fd=parent, follow_symlinks=False)
    if node.kind in ("link", "special"):
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(node.name, dir_fd=parent)
        return
    is_dir = stat.S_ISDIR(st.st_mode)
    mode = (st.st_mode & 0o777 | 0o700) if is_dir else (st.st_mode & 0o666 | 0o600)
    try:
        fd = os.open(node.name, _DIR_FLAGS if is_dir else _FILE_OPEN, dir_fd=parent)
    except PermissionError:
        # Unreadable to its owner (mode 000): set the bits by name; it is not a link
        # (checked just above) and the command that made it has ended.
        os.chmod(node.name, mode, dir_fd=parent)
        return
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode) == is_dir:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


def capture_tree(root: Path) -> tuple[dict[tuple[str, ...], bytes], set[tuple[str, ...]]]:
    """The bytes of every regular file under ``root`` and every folder (hidden ones too).

    Links and special files are left out (a restore removes them); the store's
    own state at the root is never part of it.
    """
    files: dict[tuple[str, ...], bytes] = {}
    folders: set[tuple[str, ...]] = set()
    root_fd = open_root(root)
    try:
        for node in walk_tree(root_fd, hidden=True):
            if node.kind == "dir":
                folders.add(node.parts)
            elif node.kind in ("memory", "other", "temp"):
                parent = open_dir(root_fd, node.parts[:-1])
                try:
                    files[node.parts] = read_at(parent, node.name)
                finally:
                    os.close(parent)
    finally:
        os.close(root_fd)
    return files, folders


def reset_tree(
    root: Path,
    files: Mapping[tuple[str, ...], bytes],
    folders: Iterable[tuple[str, ...]] = (),
) -> int:
    """Make the tree under ``root`` exactly ``files`` and ``folders``; return the changes made.

    Everything else goes (whatever its name or kind, links removed themselves),
    changed files are rewritten atomically, missing ones and missing folders
    made. The store's own state at the root is left alone.
    """
    for parts in [*files, *folders]:
        if not parts or any(p in ("", ".", "..") or "/" in p for p in parts):
            raise ValueError(f"not a path below the root: {parts!r}")
    keep = set(folders) | {parts[:i] for parts in files for i in range(1, len(parts))}
    changes = 0
    root_fd = open_root(root)
    try:
        for node in reversed(walk_tree(root_fd, hidden=True)):  # children before parents
            wanted = node.parts in keep if node.kind == "dir" else (
                node.parts in files and node.kind in ("memory", "other", "temp"))
            if not wanted:
                parent = open_dir(root_fd, node.parts[:-1])
                try:
                    remove_at(parent, node.name)
                finally:
                    os.close(parent)
                changes += 1
        for parts in sorted(keep):
            os.close(open_dir(root_fd, parts, create=True))
        for parts, data in files.items():
            parent = open_dir(root_fd, parts[:-1], create=True)
            try:
                st = lstat_at(parent, parts[-1])
                if st is None or read_at(parent, parts[-1]) != data:
                    write_at(parent, parts[-1], data)
                    changes += 1
            finally:
                os.close(parent)
    finally:
        os.close(root_fd)
    return changes
