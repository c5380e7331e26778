"""Confinement for the shell tool: how a command is started over a store.

Three ways, tried in this order (see ``docs/shell.md`` for what each protects):

``bwrap``
    bubblewrap (Debian package ``bubblewrap``). The command runs in new user,
    mount, PID, network, IPC and UTS namespaces with all capabilities dropped.
    Its file system is built from nothing: ``/usr`` (and the ``/bin``, ``/lib``
    links) and a few ``/etc`` files read-only, a fresh ``/proc``, a minimal
    ``/dev``, an empty ``/tmp``, and the store bound at ``/memories`` (read-write,
    or with ``read_only`` read-only, ``--ro-bind``) with its ``.memdir`` and
    ``.git`` folders hidden under empty tmpfs mounts.
    The network namespace holds only a loopback device.

``unshare``
    util-linux ``unshare`` with new user, mount, PID, network, IPC and UTS
    namespaces. A setup script mounts a tmpfs as a new root, binds the same
    things into it (a read-only store is its bind mount remounted read-only,
    as ``/usr`` is), ``pivot_root``s into it, detaches the old root, and starts
    the command through ``setpriv`` with every capability dropped.

``unconfined``
    No confinement at all: ``bash`` runs on the host with the store root as
    its working directory and ``HOME``. Paths must be relative (``/memories``
    does not exist), and nothing stops the network or writes elsewhere. Only
    used when the caller opts in with ``allow_unconfined=True``, and never for
    a read-only shell: nothing unconfined can keep a command from writing.

Each way is probed once per process by running ``true`` in it.

In both confined ways the command's bash first lowers ``RLIMIT_NPROC`` to
:data:`~memdir.tools._pids.MAX_PROCESSES` inside the new user namespace (see
:mod:`memdir.tools._pids` for when that holds and what does where it does not),
and nothing inside names the store's place on the host: bubblewrap reads its
arguments from a memory file descriptor (``--args``) instead of its command line,
which would show as ``/proc/1/cmdline``, and the unshare setup script execs the
command, so no process inside keeps the paths it was given.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from memdir.tools._pids import MAX_PROCESSES

__all__ = [
    "BACKENDS",
    "UNCONFINED_READ_ONLY",
    "Backend",
    "Launch",
    "SandboxUnavailableError",
    "available_backends",
    "launch",
]

Backend = Literal["bwrap", "unshare", "unconfined"]
BACKENDS: Final[tuple[Backend, ...]] = ("bwrap", "unshare", "unconfined")

MOUNT_POINT: Final = "/memories"
HIDDEN_STATE: Final = (".memdir", ".git")
_PATH: Final = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
_ENV: Final = {"PATH": _PATH, "HOME": "/tmp", "LANG": "C.UTF-8", "TERM": "dumb"}
_TOP_LINKS: Final = ("bin", "lib", "lib32", "lib64", "libx32", "sbin")
_ETC: Final = (
    "alternatives", "passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf",
    "ld.so.conf.d", "localtime", "mime.types", "magic",
)
_DEVICES: Final = ("null", "zero", "full", "random", "urandom", "tty")
_BASH: Final = ("bash", "--noprofile", "--norc", "-c")
# The command's bash, after lowering the process cap (only ever lowered, so a
# stricter limit already in force stays; ``$1`` is the command).
_CAPPED: Final = (*_BASH, f'ulimit -u {MAX_PROCESSES} 2>/dev/null; exec bash --noprofile '
                  '--norc -c "$1"', "bash")


UNCONFINED_READ_ONLY: Final = (
    "A read-only shell needs bubblewrap (`bwrap`) or working `unshare` namespaces: "
    "unconfined bash cannot be kept from writing to the store. Install bubblewrap "
    "(`apt-get install bubblewrap`) or give the role a writable or non-shell tool set."
)


class SandboxUnavailableError(RuntimeError):
    """No way to confine shell commands works here, and running unconfined was not allowed."""


@dataclass(frozen=True)
class Launch:
    """How to start one command: the argv, its environment and working directory."""

    backend: Backend
    argv: list[str]
    env: dict[str, str]
    cwd: str
    cleanup: list[Path] = field(default_factory=list)
    fds: tuple[int, ...] = ()
    """File descriptors the child must inherit (bubblewrap's arguments)."""

    def release(self) -> None:
        """Close the inherited descriptors; call it once the child has started (or failed to)."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _top_level() -> list[tuple[str, str | None]]:
    """Host entries to mirror at the top: (name, link target or None for a directory)."""
    out: list[tuple[str, str | None]] = []
    for name in _TOP_LINKS:
        host = Path("/") / name
        if host.is_symlink():
            out.append((name, os.readlink(host)))
        elif host.is_dir():
            out.append((name, None))
    return out


def _bwrap_options(root: Path, read_only: bool) -> list[str]:
    """The options for bwrap (everything before the command); they name host paths."""
    argv = ["--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
    argv += ["--ro-bind", "/usr", "/usr"]
    for name, target in _top_level():
        if target is None:
            argv += ["--ro-bind", f"/{name}", f"/{name}"]
        else:
            argv += ["--symlink", target, f"/{name}"]
    for name in _ETC:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    argv += ["--ro-bind" if read_only else "--bind", str(root), MOUNT_POINT]
    for hidden in HIDDEN_STATE:
        if (root / hidden).is_dir():
            argv += ["--tmpfs", f"{MOUNT_POINT}/{hidden}"]
    argv += ["--chdir", MOUNT_POINT, "--clearenv"]
    for key, value in _ENV.items():
        argv += ["--setenv", key, value]
    argv += ["--hostname", "memdir"]
    return argv


def _args_fd(argv: list[str]) -> int:
    """A memory file holding ``argv`` NUL-separated, rewound, for ``bwrap --args``."""
    fd = os.memfd_create("memdir-bwrap-args", os.MFD_CLOEXEC)
    try:
        os.write(fd, b"".join(os.fsencode(a) + b"\0" for a in argv))
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


# Runs as root inside the new namespaces; $1 = new root (empty dir), $2 = store, $3 = command.
_UNSHARE_SETUP: Final = r"""
set -eu
R=$1; S=$2
mount -t tmpfs -o mode=755 memdir-root "$R"
mkdir -p "$R/usr" "$R/memories" "$R/tmp" "$R/proc" "$R/dev" "$R/etc" "$R/.old"
mount --rbind /usr "$R/usr"; mount -o remount,bind,ro "$R/usr"
mount --bind "$S" "$R/memories"%(store_ro)s
for h in .memdir .git; do
  if [ -d "$S/$h" ]; then mount -t tmpfs -o mode=700 hidden "$R/memories/$h"; fi
done
mount -t proc proc "$R/proc"
for d in %(devices)s; do
  if [ -e "/dev/$d" ]; then touch "$R/dev/$d"; mount --bind "/dev/$d" "$R/dev/$d"; fi
done
for e in %(etc)s; do
  if [ -d "/etc/$e" ]; then mkdir -p "$R/etc/$e";
  elif [ -e "/etc/$e" ]; then touch "$R/etc/$e"; else continue; fi
  mount --bind "/etc/$e" "$R/etc/$e"; mount -o remount,bind,ro "$R/etc/$e"
done
%(links)s
mount -t tmpfs -o mode=1777 tmp "$R/tmp"
cd "$R"
pivot_root . .old
umount -l /.old
rmdir /.old
cd /memories
exec setpriv --inh-caps=-all --bounding-set=-all \
  /usr/bin/env -i %(env)s %(bash)s "$3"
"""


def _unshare_argv(root: Path, command: str, read_only: bool) -> tuple[list[str], Path]:
    new_root = Path(tempfile.mkdtemp(prefix="memdir-shell-"))
    links = "\n".join(
        f'mkdir -p "$R/{n}"; mount --rbind /{n} "$R/{n}"' if t is None
        else f'ln -s {shlex.quote(t)} "$R/{n}"'
        for n, t in _top_level()
    )
    setup = _UNSHARE_SETUP % {
        "devices": " ".join(_DEVICES),
        "etc": " ".join(_ETC),
        "links": links,
        "env": " ".join(shlex.quote(f"{k}={v}") for k, v in _ENV.items()),
        "store_ro": '; mount -o remount,bind,ro "$R/memories"' if read_only else "",
        "bash": " ".join(shlex.quote(a) for a in _CAPPED),
    }
    argv = [
        "unshare", "--user", "--map-root-user", "--mount", "--net", "--pid", "--ipc", "--uts",
        "--fork", "--kill-child", "--propagation", "private",
        "/bin/sh", "-c", setup, "memdir-setup", str(new_root), str(root), command,
    ]
    return argv, new_root


def launch(backend: Backend, root: Path, command: str, *, read_only: bool = False) -> Launch:
    """The way to start ``command`` over the store at ``root`` with ``backend``.

    Raises:
        SandboxUnavailableError: A read-only store is asked of the unconfined way.
    """
    if backend == "bwrap":
        # The options go through a descriptor (bwrap takes only options that way): its
        # command line, which the sandbox sees as /proc/1/cmdline, names no host path.
        fd = _args_fd(_bwrap_options(root, read_only))
        return Launch(backend, ["bwrap", "--args", str(fd), *_CAPPED, command], dict(_ENV),
                      str(root), fds=(fd,))
    if backend == "unshare":
        argv, new_root = _unshare_argv(root, command, read_only)
        return Launch(backend, argv, dict(_ENV), str(root), [new_root])
    if read_only:
        raise SandboxUnavailableError(UNCONFINED_READ_ONLY)
    env = {**_ENV, "HOME": str(root), "PWD": str(root)}
    return Launch(backend, ["bash", "--noprofile", "--norc", "-c", command], env, str(root))


@functools.cache
def _works(backend: Backend) -> bool:
    if backend == "unconfined":
        return True
    with tempfile.TemporaryDirectory(prefix="memdir-probe-") as tmp:
        probe = launch(backend, Path(tmp), "test -d /memories && test ! -e /work")
        try:
            done = subprocess.run(
                probe.argv, env=probe.env, cwd=probe.cwd, stdin=subprocess.DEVNULL,
                capture_output=True, timeout=20, check=False, pass_fds=probe.fds,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        finally:
            probe.release()
            for path in probe.cleanup:
                _remove_empty(path)
    return done.returncode == 0


def _remove_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass  # not empty or already gone: leave it for a person to inspect


def available_backends() -> list[Backend]:
    """The confined ways that work on this machine, best first (probed once)."""
    return [b for b in BACKENDS if b != "unconfined" and _works(b)]
