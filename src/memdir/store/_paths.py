"""Agent paths to host paths, and atomic writes: the store's one safety boundary.

Agents name files as ``/memories/people/alice.md``. :func:`resolve` turns such a
name into a host path under the store root, or refuses it. The rules: no NUL
bytes or control characters, no ``..`` components, no absolute host paths, no
hidden components (memdir keeps its own state in ``.memdir`` and ``.git``), no
symlink that leads outside the root, and a file name must end in ``.md``.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from memdir.store._errors import PathError

__all__ = ["ROOT", "StorePath", "atomic_write", "posix_parts", "resolve", "to_virtual"]

ROOT = "/memories"
"""The name agents see for the store root."""

_MAX_PATH_CHARS = 1024
_MAX_COMPONENT_CHARS = 255

Kind = Literal["file", "dir", "any"]


@dataclass(frozen=True, slots=True)
class StorePath:
    """A checked location in a store: its agent-facing name and its host path."""

    virtual: str
    host: Path

    @property
    def is_root(self) -> bool:
        """Whether this is the store root itself."""
        return self.virtual == ROOT


def _parts(path: str) -> list[str]:
    if not isinstance(path, str) or not path.strip():
        raise PathError(f"The path is empty. Give a path under {ROOT}, e.g. {ROOT}/notes.md.")
    if len(path) > _MAX_PATH_CHARS:
        raise PathError(f"The path is longer than {_MAX_PATH_CHARS} characters; use a shorter one.")
    if any(ord(ch) < 32 or ch == "\x7f" for ch in path):
        raise PathError(
            "The path contains a NUL byte or another control character; "
            "use printable characters only."
        )
    if "\\" in path:
        raise PathError("Use forward slashes in paths, e.g. /memories/people/alice.md.")
    text = path.strip()
    if text == ROOT or text.startswith(ROOT + "/"):
        rest = text[len(ROOT) :]
    elif text.startswith("/"):
        raise PathError(
            f"{path!r} is outside the memory store. Every path starts with {ROOT}, "
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
        if part == "..":
            raise PathError(
                f"{path!r} uses '..'. Paths may not climb out of a folder; "
                f"write the full path from {ROOT} instead."
            )
        if part.startswith("."):
            raise PathError(
                f"{path!r} has a hidden component {part!r}; names starting with '.' "
                "are reserved. Choose a name that starts with a letter or digit."
            )
        if len(part) > _MAX_COMPONENT_CHARS:
            raise PathError(f"A component of {path!r} is longer than {_MAX_COMPONENT_CHARS}.")
    return parts


def to_virtual(parts: list[str] | tuple[str, ...]) -> str:
    """Join path components into the agent-facing form ``/memories/...``."""
    return ROOT if not parts else ROOT + "/" + "/".join(parts)


def resolve(root: Path, path: str, kind: Kind = "any") -> StorePath:
    """Check an agent's path and map it to a host path under ``root``.

    Args:
        root: The store's root directory on the host (must exist).
        path: The path as an agent wrote it, ``/memories/...`` or relative to the root.
        kind: ``"file"`` requires a ``.md`` file name, ``"dir"`` forbids one, and
            ``"any"`` accepts either (the name decides what is meant).

    Returns:
        The checked location. The target need not exist.

    Raises:
        PathError: The path is malformed, escapes the root, or names a non-markdown file.
    """
    parts = _parts(path)
    virtual = to_virtual(parts)
    is_md = bool(parts) and parts[-1].endswith(".md")
    if kind == "file" and not is_md:
        if not parts:
            raise PathError(f"{ROOT} is the store's root folder; name a file inside it.")
        raise PathError(
            f"{virtual} is not a markdown file name. Only .md files live in the store; "
            f"try {virtual.removesuffix('/')}.md."
            if "." not in parts[-1]
            else f"{virtual} is not a markdown file. Only .md files live in the store; "
            "give the file a .md name."
        )
    if kind == "dir" and is_md:
        raise PathError(f"{virtual} names a file, but a folder is needed here.")
    if kind == "any" and parts and "." in parts[-1] and not is_md:
        raise PathError(
            f"{virtual} is not a markdown file. Only .md files live in the store; "
            "give the file a .md name."
        )
    real_root = Path(os.path.realpath(root))
    host = real_root.joinpath(*parts)
    real = Path(os.path.realpath(host))
    if real != real_root and real_root not in real.parents:
        raise PathError(f"{virtual} leads outside the memory store through a symbolic link.")
    return StorePath(virtual=virtual, host=host)


def atomic_write(host: Path, data: bytes) -> None:
    """Write ``data`` to ``host`` so readers see either the old or the new bytes.

    The bytes go to a temporary file in the same folder, are flushed to disk, and
    replace the target in one rename; the folder entry is synced afterwards. The
    file keeps the permissions of the file it replaces; a new file gets the usual
    ``0o666`` less the process umask (``mkstemp`` alone would leave it ``0o600``).
    """
    host.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = host.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=host.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, host)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(host.parent)


def _umask() -> int:
    # The umask can only be read by setting it; restore it at once.
    current = os.umask(0o022)
    os.umask(current)
    return current


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def posix_parts(virtual: str) -> tuple[str, ...]:
    """Components of a virtual path below the root (``()`` for the root)."""
    return PurePosixPath(virtual).parts[2:]
