"""A cap on how many processes one shell command may run at once, in every sandbox.

Two kernel mechanisms, because neither works everywhere:

``rlimit``
    ``RLIMIT_NPROC`` is counted per user *within a user namespace*. Set inside
    the sandbox's fresh user namespace (the command's bash does ``ulimit -u``
    before it runs the command), it counts only the command's own processes,
    not the caller's others. The kernel does not apply it to processes of the
    host's root user, so it holds only when memdir runs as an ordinary user.
``cgroup``
    A pids cgroup of the call's own (cgroup v2, or v1's ``pids`` hierarchy) with
    ``pids.max`` set; the command's first process joins it before it execs, so
    everything it starts is counted. This needs a writable cgroup file system,
    which in practice means root, where it is what holds.

:func:`process_cap` says which one a backend gets; :class:`PidsGroup` is one
call's cgroup, removed after the call.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

__all__ = ["MAX_PROCESSES", "PidsGroup", "ProcessCap", "open_group", "pids_parent",
           "process_cap"]

MAX_PROCESSES: Final = 256
"""Processes (and threads) one command may have at once."""

ProcessCap = Literal["rlimit", "cgroup"]

_PREFIX: Final = "memdir-shell-"
_COUNTER = itertools.count()
_REMOVE_SECONDS: Final = 5.0


def _unescape(field: str) -> str:
    r"""A mountinfo field with its octal escapes (``\040`` for a space) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _below(path: str, mount_root: str) -> str | None:
    """``path`` relative to a mount's root, or None when the mount does not show it."""
    if mount_root == "/":
        return path.lstrip("/")
    if path == mount_root:
        return ""
    if path.startswith(mount_root.rstrip("/") + "/"):
        return path[len(mount_root.rstrip("/")) + 1:]
    return None


def _controls_pids(folder: Path) -> bool:
    try:
        return "pids" in (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


def pids_parent(mountinfo: str, cgroups: str) -> Path | None:
    """The cgroup folder under which this process may make pids-limited groups.

    Args:
        mountinfo: The text of ``/proc/self/mountinfo``.
        cgroups: The text of ``/proc/self/cgroup``.

    Returns:
        With cgroup v2, the folder whose children get the pids controller: the
        hierarchy's root when this process sits in it, else the parent of its own
        group (v2 keeps processes out of groups that hand controllers down). With
        v1, this process's own group in the ``pids`` hierarchy. None if neither.
    """
    own: dict[str, str] = {}
    for line in cgroups.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                own[controller] = parts[2]
    v1: Path | None = None
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        mount_root, mount_point = _unescape(fields[3]), Path(_unescape(fields[4]))
        if tail[0] == "cgroup2" and "" in own:
            rel = _below(own[""], mount_root)
            if rel is None:
                continue
            candidate = (mount_point / rel).parent if rel else mount_point
            if _controls_pids(candidate):
                return candidate
        elif tail[0] == "cgroup" and "pids" in tail[2].split(",") and "pids" in own:
            rel = _below(own["pids"], mount_root)
            if rel is not None and v1 is None:
                v1 = mount_point / rel if rel else mount_point
    return v1


@dataclass
class PidsGroup:
    """One call's pids cgroup; its first process joins it with :meth:`join`."""

    path: Path
    procs_fd: int

    def join(self) -> None:  # pragma: no cover - runs in the child before exec
        """Move the calling process into the group (call it in the child, before exec)."""
        os.write(self.procs_fd, str(os.getpid()).encode())

    def close(self) -> None:
        """Kill whatever is left in the group and remove it."""
        with contextlib.suppress(OSError):
            os.close(self.procs_fd)
        deadline = time.monotonic() + _REMOVE_SECONDS
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
            self._kill_members()
            time.sleep(0.01)

    def _kill_members(self) -> None:
        try:
            members = (self.path / "cgroup.procs").read_text().split()
        except OSError:
            return
        for pid in members:
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pid), signal.SIGKILL)


def _sweep(parent: Path) -> None:
    """Remove groups that memdir processes which are gone left behind (empty ones only)."""
    for child in parent.glob(f"{_PREFIX}*"):
        match = re.fullmatch(rf"{_PREFIX}(\d+)-\d+", child.name)
        if match is None or int(match.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                child.rmdir()
        except OSError:
            continue


def _make_group(parent: Path, limit: int) -> PidsGroup:
    path = parent / f"{_PREFIX}{os.getpid()}-{next(_COUNTER)}"
    path.mkdir()
    try:
        (path / "pids.max").write_text(str(limit))
        fd = os.open(path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        path.rmdir()
        raise
    return PidsGroup(path, fd)


@functools.cache
def _parent() -> Path | None:
    """Where this process can make pids groups (probed once by making one), or None."""
    try:
        parent = pids_parent(Path("/proc/self/mountinfo").read_text(),
                             Path("/proc/self/cgroup").read_text())
    except OSError:
        return None
    if parent is None:
        return None
    try:
        _sweep(parent)
        _make_group(parent, 1).close()
    except OSError:
        return None
    return parent


def open_group(limit: int = MAX_PROCESSES) -> PidsGroup | None:
    """A fresh pids cgroup capped at ``limit``, or None where none can be made."""
    parent = _parent()
    if parent is None:
        return None
    try:
        return _make_group(parent, limit)
    except OSError:
        return None


def process_cap(confined: bool) -> ProcessCap | None:
    """How a command's process count is capped here, or None when it cannot be.

    Args:
        confined: The command runs in its own user namespace (bwrap, unshare).
    """
    if confined and os.getuid() != 0 and os.geteuid() != 0:
        return "rlimit"
    return "cgroup" if _parent() is not None else None
