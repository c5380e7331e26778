"""Agent paths, and every file-system act on them: the store's one safety boundary.

Agents name files as ``/memories/people/alice.md``. :func:`split` checks such a
name and turns it into components, or refuses it. The rules: no NUL bytes or
control characters (C0 or C1), no lone surrogates, no ``..`` components, no
absolute host paths, no hidden components (memdir keeps its own state in
``.memdir`` and ``.git``), no component over 255 bytes, no component (and no
path) that begins or ends with whitespace, and a file name the store's
:class:`NamePolicy` accepts (memdir's own: ``.md`` only).

A path is taken as written: nothing is trimmed, and names are compared byte for
byte (no case folding, no Unicode normalization), so two spellings never reach
one entry unless the file system itself folds them. The spellings that are
folded are the ones that cannot name distinct entries: repeated slashes, ``.``
components and a final slash. Whitespace at either end of a name is refused
rather than kept or trimmed: trimming made ``dir `` reach ``dir``, and keeping
it makes two entries that look the same in every listing.

Acting on a checked name never goes through a host path string. Every read,
write, delete, rename and listing opens the components one by one from the
root's directory handle, refusing symbolic links at each step (``O_NOFOLLOW``),
and then acts relative to the handle of the last folder (``openat``-style). A
racing process that swaps a folder for a link to a host folder between the check
and the act therefore makes the act fail; it can never redirect it. Files are
opened non-blocking and checked to be regular files before any byte is read, so
a FIFO or socket under a markdown name neither hangs nor crashes a reader.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final, Literal

from memdir.store._errors import (
    FileExistsInStoreError,
    NotFoundError,
    PathError,
    StoreError,
)

__all__ = [
    "ANY_NAME",
    "FILE_MODE",
    "FOLDER_MODE",
    "MARKDOWN",
    "MAX_DEPTH",
    "MAX_PATH_BYTES",
    "ROOT",
    "NamePolicy",
    "StorePath",
    "atomic_write",
    "check_new_path",
    "is_temp_name",
    "make_folders",
    "os_error",
    "posix_parts",
    "resolve",
    "shown",
    "split",
    "to_virtual",
]

ROOT = "/memories"
"""The name agents see for the store root."""

_MAX_PATH_CHARS = 4096
_MAX_COMPONENT_BYTES = 255
FILE_MODE: Final = 0o600
"""Permission bits of a new memory file: its owner's only (memories are personal data)."""
FOLDER_MODE: Final = 0o700
"""Permission bits of a new folder of a store (and of a store root memdir creates)."""
MAX_DEPTH: Final = 32
"""Most levels below the root a new entry may sit at (``/memories/a/b.md`` is at 2)."""
MAX_PATH_BYTES: Final = 1024
"""Longest path below the root a new entry may have, in UTF-8 bytes."""
_MAX_SHOWN = 120
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TEMP_PREFIX: Final = ".tmp-"
_TEMP_SUFFIX: Final = ".part"

Kind = Literal["file", "dir", "any"]


@dataclass(frozen=True, slots=True)
class NamePolicy:
    """Which file names a store holds.

    Args:
        suffixes: Accepted file name endings (``(".md",)`` for memdir), or None to
            accept any name with an extension (a dot not at the start).
        label: How messages name the accepted files, e.g. "markdown file".
    """

    suffixes: tuple[str, ...] | None = (".md",)
    label: str = "markdown file"

    def is_file_name(self, name: str) -> bool:
        """Whether ``name`` is the name of a file this store holds."""
        if self.suffixes is None:
            return "." in name.lstrip(".")
        return name.endswith(self.suffixes)

    def looks_like_file(self, name: str) -> bool:
        """Whether ``name`` was meant as a file (it has an extension)."""
        return "." in name


MARKDOWN: Final = NamePolicy()
"""memdir's own policy: only ``.md`` files live in a store."""

ANY_NAME: Final = NamePolicy(suffixes=None, label="file")
"""Any file name (the Anthropic memory tool profile: ``notes.xml``, ``progress``)."""


@dataclass(frozen=True, slots=True)
class StorePath:
    """A checked location in a store: its agent-facing name and its host path.

    ``host`` is for display and for code outside the store that has no handle;
    the store itself acts through :attr:`parts` from the root's handle.
    """

    virtual: str
    host: Path

    @property
    def is_root(self) -> bool:
        """Whether this is the store root itself."""
        return self.virtual == ROOT

    @property
    def parts(self) -> tuple[str, ...]:
        """The components below the root (``()`` for the root)."""
        return posix_parts(self.virtual)


def shown(text: str, limit: int = _MAX_SHOWN) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters with a note."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f" (+{len(text) - limit:,} more characters)"


_shown = shown


_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f]")
"""A NUL byte or another control character (C0, DEL or C1)."""


def _parts(path: str) -> list[str]:
    if not isinstance(path, str) or not path.strip():
        raise PathError(f"The path is empty. Give a path under {ROOT}, e.g. {ROOT}/notes.md.")
    if len(path) > _MAX_PATH_CHARS:
        raise PathError(f"The path is longer than {_MAX_PATH_CHARS} characters; use a shorter one.")
    if _CONTROL.search(path) is not None:
        raise PathError(
            "The path contains a NUL byte or another control character; "
            "use printable characters only."
        )
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise PathError(
            "The path contains an invalid character (a lone surrogate); "
            "use ordinary Unicode text only."
        ) from None
    if "\\" in path:
        raise PathError("Use forward slashes in paths, e.g. /memories/people/alice.md.")
    if path[0].isspace() or path[-1].isspace():
        raise PathError(
            f"The path {_shown(path)} begins or ends with a space. Names in the store never "
            "do, and paths are never trimmed (so that no spelling reaches another entry); "
            f"if you mean {_shown(path.strip())}, write it so."
        )
    text = path
    if text == ROOT or text.startswith(ROOT + "/"):
        rest = text[len(ROOT) :]
    elif text.startswith("/"):
        raise PathError(
            f"{_shown(path)} is outside the memory store. Every path starts with {ROOT}, "
            f"e.g. {ROOT}/notes.md."
        )
    elif text == ROOT[1:] or text.startswith(ROOT[1:] + "/"):
        # "memories/a.md" lost its leading slash; it means /memories/a.md.
        rest = text[len(ROOT) - 1 :]
    else:
        # Any other relative path is read relative to the store root.
        rest = "/" + text
    parts = [p for p in rest.split("/") if p not in ("", ".")]
    for part in parts:
        _check_part(path, part)
    return parts


def _check_part(path: str, part: str) -> None:
    """Refuse a component of ``path`` that the store never holds."""
    if part[0].isspace() or part[-1].isspace():
        if not part.strip():
            raise PathError(f"{_shown(path)} has a component {part!r} made only of "
                            "spaces; leave it out.")
        raise PathError(
            f"{_shown(path)} has a component {part!r} that begins or ends with a space. "
            f"Names in the store never do, since {part!r} and {part.strip()!r} would look "
            f"alike and be mistaken for each other; use {part.strip()!r}."
        )
    if part == "..":
        raise PathError(
            f"{_shown(path)} uses '..'. Paths may not climb out of a folder; "
            f"write the full path from {ROOT} instead."
        )
    if part.startswith("."):
        raise PathError(
            f"{_shown(path)} has a hidden component {part!r}; names starting with '.' "
            "are reserved. Choose a name that starts with a letter or digit."
        )
    if len(part.encode("utf-8", "surrogatepass")) > _MAX_COMPONENT_BYTES:
        raise PathError(
            f"A component of {_shown(path)} is longer than {_MAX_COMPONENT_BYTES} bytes "
            "in UTF-8 (accented letters take two); choose a shorter name."
        )


def check_new_path(parts: tuple[str, ...], below: tuple[int, int] = (0, 0)) -> None:
    """Refuse to make an entry at ``parts`` deeper or longer than the store allows.

    Walks, listings and the tools that draw a tree handle any depth, but trees
    hundreds of folders deep are never what an agent means and break tools
    outside memdir (editors, archivers, other tools' recursion limits), so every
    act that makes a new name checks it here: a new file or folder, and the
    destination of a move. Entries made otherwise (by hand, by a shell command)
    stay readable, editable and removable.

    Args:
        parts: The new entry's components below the root.
        below: For a folder that moves, the depth and the UTF-8 length of the
            deepest and the longest path inside it (relative to it).

    Raises:
        PathError: The entry, or one inside a moved folder, would sit more than
            :data:`MAX_DEPTH` levels down or have a path longer than
            :data:`MAX_PATH_BYTES` bytes.
    """
    depth = len(parts) + below[0]
    size = len("/".join(parts).encode("utf-8", "surrogatepass")) + below[1]
    if depth > MAX_DEPTH:
        if below[0]:
            hint = (f"the folder holds entries {below[0]} levels inside it, so move it at most "
                    f"{max(0, MAX_DEPTH - below[0])} levels below {ROOT}, or flatten it first.")
        else:
            flat = to_virtual((*parts[: MAX_DEPTH - 1], parts[-1]))
            hint = f"use fewer folders, e.g. {shown(flat)}."
        raise PathError(
            f"{shown(to_virtual(parts))} would put an entry {depth} levels below {ROOT}; the "
            f"store keeps entries at most {MAX_DEPTH} levels deep: {hint}"
        )
    if size > MAX_PATH_BYTES:
        inside = " (counting the longest path inside the folder moved)" if below[1] else ""
        raise PathError(
            f"{shown(to_virtual(parts))} would be {size:,} bytes long below {ROOT}{inside}; "
            f"the store keeps paths to at most {MAX_PATH_BYTES:,} bytes. Use shorter folder "
            "and file names, or fewer folders."
        )


def to_virtual(parts: list[str] | tuple[str, ...]) -> str:
    """Join path components into the agent-facing form ``/memories/...``."""
    return ROOT if not parts else ROOT + "/" + "/".join(parts)


def posix_parts(virtual: str) -> tuple[str, ...]:
    """Components of a virtual path below the root (``()`` for the root)."""
    return PurePosixPath(virtual).parts[2:]


def split(path: str, kind: Kind = "any", names: NamePolicy = MARKDOWN) -> tuple[str, ...]:
    """Check an agent's path and return its components below the root.

    Args:
        path: The path as an agent wrote it, ``/memories/...`` or relative to the root.
        kind: ``"file"`` requires a file name the policy accepts, ``"dir"`` forbids
            one, and ``"any"`` accepts either (the name decides what is meant).
        names: Which file names the store holds.

    Raises:
        PathError: The path is malformed or names a file the store does not hold.
    """
    parts = _parts(path)
    virtual = to_virtual(parts)
    is_file = bool(parts) and names.is_file_name(parts[-1])
    what = names.label
    if kind == "file" and not is_file:
        if not parts:
            raise PathError(f"{ROOT} is the store's root folder; name a file inside it.")
        if names.suffixes is not None and not names.looks_like_file(parts[-1]):
            raise PathError(
                f"{virtual} is not a {what} name. Only {what}s live in the store; "
                f"try {virtual}{names.suffixes[0]}."
            )
        raise PathError(
            f"{virtual} is not a {what}. Only {what}s live in the store; give it another name."
        )
    if kind == "dir" and is_file:
        raise PathError(f"{virtual} names a file, but a folder is needed here.")
    if kind == "any" and parts and names.looks_like_file(parts[-1]) and not is_file:
        raise PathError(
            f"{virtual} is not a {what}. Only {what}s live in the store; give it another name."
        )
    return tuple(parts)


def resolve(root: Path, path: str, kind: Kind = "any", names: NamePolicy = MARKDOWN) -> StorePath:
    """Check an agent's path and map it to a host path under ``root``.

    The host path is a name only: the store never acts through it (see the
    module docstring). Code outside the store that must use it gets a path that
    led inside the root when it was checked.

    Args:
        root: The store's root directory on the host (must exist).
        path: The path as an agent wrote it, ``/memories/...`` or relative to the root.
        kind: See :func:`split`.
        names: Which file names the store holds.

    Returns:
        The checked location. The target need not exist.

    Raises:
        PathError: The path is malformed, escapes the root, or names a file the
            store does not hold.
    """
    parts = split(path, kind, names)
    virtual = to_virtual(parts)
    try:
        real_root = Path(os.path.realpath(root))
        host = real_root.joinpath(*parts)
        real = Path(os.path.realpath(host))
    except OSError:
        # realpath reads a link it has just seen; a link swapped away in between
        # makes it raise. The path changed under us: refuse it, never act on it.
        raise PathError(f"{virtual} changed while it was being checked (a folder on the way "
                        "was replaced); try the call again.") from None
    if real != real_root and real_root not in real.parents:
        raise PathError(f"{virtual} leads outside the memory store through a symbolic link.")
    return StorePath(virtual=virtual, host=host)


# -- OS errors as messages ---------------------------------------------------------

_ERRNO_TEXT: Final = {
    errno.ENAMETOOLONG: "a name on the way is too long; choose a shorter one",
    errno.ELOOP: "it goes through a symbolic link, which the store does not follow",
    errno.ENOTDIR: "a part of it that should be a folder is a file",
    errno.EISDIR: "it is a folder, not a file",
    errno.EEXIST: "something already exists there; choose another name",
    errno.ENOTEMPTY: "the folder is not empty",
    errno.EINVAL: "the operation is not possible there (e.g. moving a folder inside itself)",
    errno.ENOSPC: "the disk is full; nothing was changed, free space or make the text shorter",
    errno.EDQUOT: "the disk quota is used up; nothing was changed",
    errno.EFBIG: "the file would be too large",
    errno.EACCES: "permission denied on the host",
    errno.EPERM: "the host does not permit this",
    errno.EROFS: "the store is on a read-only file system",
    errno.EMFILE: "too many files are open at once; try again with a smaller folder",
    errno.ENFILE: "too many files are open at once; try again later",
    errno.EBUSY: "the host reports it busy; try again",
    errno.ENXIO: "it is not a regular file",
    errno.EILSEQ: "a name on the way is not valid for the file system",
}


def os_error(exc: OSError, virtual: str) -> StoreError:
    """A store error for an OS error met while acting on ``virtual``.

    The message names the agent-facing path and the reason, never a host path.
    """
    code = exc.errno or 0
    reason = _ERRNO_TEXT.get(code) or (exc.strerror or type(exc).__name__).lower()
    where = shown(virtual) if len(virtual) > _MAX_SHOWN else virtual
    if code == errno.ENOENT:
        return NotFoundError(f"{where} does not exist. View {ROOT} to see what is there.")
    if code == errno.EEXIST:
        return FileExistsInStoreError(f"{where}: {reason}.")
    return PathError(f"{where}: {reason}.") if code in _PATH_ERRNOS else StoreError(
        f"{where}: {reason}."
    )


_PATH_ERRNOS: Final = frozenset(
    {errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.EINVAL, errno.EILSEQ}
)


@contextmanager
def os_errors(virtual: str) -> Iterator[None]:
    """Turn any OS error inside the block into a :class:`StoreError` about ``virtual``."""
    try:
        yield
    except OSError as exc:
        raise os_error(exc, virtual) from None


# -- acting through directory handles ----------------------------------------------


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is a temporary file of an atomic write."""
    return name.startswith(_TEMP_PREFIX) and name.endswith(_TEMP_SUFFIX)


def open_root(root: Path) -> int:
    """A directory handle on the store root (closed by the caller)."""
    return os.open(root, _DIR_FLAGS)


def open_dir(root_fd: int, parts: tuple[str, ...], *, create: bool = False) -> int:
    """A handle on the folder ``parts`` below the root, reached without following links.

    Args:
        root_fd: The root's handle (not consumed).
        parts: The folder's components.
        create: Create missing folders on the way.

    Raises:
        OSError: ELOOP for a link, ENOTDIR for a file, ENOENT for a missing folder.
    """
    fd = os.dup(root_fd)
    try:
        for name in parts:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except NotADirectoryError:
                st = lstat_at(fd, name)
                if st is not None and stat.S_ISLNK(st.st_mode):
                    raise OSError(errno.ELOOP, "a symbolic link") from None
                raise
            except FileNotFoundError:
                if not create:
                    raise
                made = True
                try:
                    os.mkdir(name, FOLDER_MODE, dir_fd=fd)
                except FileExistsError:
                    made = False  # made meanwhile; the open below checks what it is
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                if made:
                    os.fchmod(child, FOLDER_MODE)  # exactly, whatever the umask
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def dir_handle(root: Path, parts: tuple[str, ...], *, create: bool = False) -> Iterator[int]:
    """:func:`open_dir` from the root at ``root`` as a context manager."""
    root_fd = open_root(root)
    try:
        fd = open_dir(root_fd, parts, create=create)
    finally:
        os.close(root_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    """The entry ``name`` in a folder, not following a link; None if absent."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def read_at(dir_fd: int, name: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``name`` in a folder (at most ``limit`` of them).

    Raises:
        OSError: ELOOP for a link, EISDIR for a folder, ENXIO for anything else that
            is not a regular file (a FIFO, socket or device is never read).
    """
    fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise OSError(errno.EISDIR, "is a folder")
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.ENXIO, "not a regular file")
        parts: list[bytes] = []
        left = st.st_size + 1 if limit is None else limit
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            parts.append(chunk)
            left -= len(chunk)
            if limit is None:
                left = max(left, 1)  # the file grew: read to its end
        return b"".join(parts)
    finally:
        os.close(fd)


def write_at(dir_fd: int, name: str, data: bytes, new_mode: int | None = FILE_MODE) -> None:
    """Replace (or create) the file ``name`` in a folder atomically.

    The bytes go to a temporary file in the same folder (readable by its owner
    only while it is written), are flushed, and take the name in one rename; the
    folder is synced afterwards. An existing file keeps its permission bits
    (less setuid, setgid and sticky); a new one gets ``new_mode`` exactly,
    whatever the umask (None: ``0o666`` less the umask, for files outside a store).
    """
    old = lstat_at(dir_fd, name)
    mode = 0o666 & ~_umask() if new_mode is None else new_mode
    if old is not None and stat.S_ISREG(old.st_mode):
        mode = old.st_mode & 0o777
    tmp = write_temp_at(dir_fd, data, mode)
    try:
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        _unlink_quietly(dir_fd, tmp)
        raise
    os.fsync(dir_fd)


def write_temp_at(dir_fd: int, data: bytes, mode: int, *, sync: bool = True) -> str:
    """Write ``data`` to a new temporary file in a folder; return its name.

    With ``sync=False`` the caller flushes it (``os.fsync``) before renaming it.
    """
    tmp = _temp_name()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=dir_fd)
    try:
        os.fchmod(fd, mode & 0o777)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(dir_fd, tmp)
        raise
    os.close(fd)
    return tmp


def _unlink_quietly(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def _temp_name() -> str:
    return f"{_TEMP_PREFIX}{secrets.token_hex(6)}{_TEMP_SUFFIX}"


def remove_at(dir_fd: int, name: str) -> None:
    """Remove the entry ``name`` in a folder: a link or file itself, a folder with its tree.

    The tree is removed iteratively through directory handles (no recursion
    limit, no link ever followed).
    """
    st = lstat_at(dir_fd, name)
    if st is None:
        raise FileNotFoundError(errno.ENOENT, "not found")
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    # Each stack entry: a folder's handle and the name it has in its parent's handle.
    stack: list[tuple[int, str]] = [(os.open(name, _DIR_FLAGS, dir_fd=dir_fd), name)]
    try:
        while stack:
            fd, _ = stack[-1]
            child = _first_dir_or_clear(fd)
            if child is not None:
                stack.append((os.open(child, _DIR_FLAGS, dir_fd=fd), child))
                continue
            fd, own = stack.pop()
            os.close(fd)
            parent = stack[-1][0] if stack else dir_fd
            os.rmdir(own, dir_fd=parent)
    finally:
        for fd, _ in stack:
            os.close(fd)


def _first_dir_or_clear(fd: int) -> str | None:
    """Unlink every non-folder in a folder; return a subfolder's name, or None if empty."""
    with os.scandir(fd) as entries:
        names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    for entry, is_dir in names:
        if is_dir:
            return entry
        os.unlink(entry, dir_fd=fd)
    return None


def atomic_write(host: Path, data: bytes) -> None:
    """Write ``data`` to the host path ``host`` so readers see either the old or the new bytes.

    For files outside a store (run records, manifests); a store writes through
    its handles instead. The parent folders are created.
    """
    host.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(host.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        write_at(fd, host.name, data, new_mode=None)
    finally:
        os.close(fd)


def make_folders(path: Path) -> None:
    """Create ``path`` and its missing parents, each new one with :data:`FOLDER_MODE` exactly.

    For a store root memdir creates: ``Path.mkdir(parents=True)`` would give the
    parents the umask's default (often readable by everyone).
    """
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(FOLDER_MODE)
        except FileExistsError:
            continue  # made meanwhile: not ours to change
        os.chmod(folder, FOLDER_MODE)


def _umask() -> int:
    # The umask can only be read by setting it; restore it at once.
    current = os.umask(0o022)
    os.umask(current)
    return current
