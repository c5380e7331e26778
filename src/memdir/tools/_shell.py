"""The Shell harness: one ``bash`` tool over the store, confined, with limits.

The command runs with bash in a confined workspace where the store is mounted
at ``/memories`` (the same paths every other tool uses) and is the working
directory. How it is confined is chosen at runtime, best first:

1. ``bwrap`` (bubblewrap): new user, mount, PID, network, IPC and UTS
   namespaces, no capabilities; only ``/usr``, a few ``/etc`` files (read-only),
   fresh ``/proc``, ``/dev`` and ``/tmp``, and the store (read-write) exist.
2. ``unshare`` (util-linux): the same namespaces and the same file system view,
   built by a setup script that pivots into a tmpfs root and drops every
   capability before running the command.
3. ``unconfined``: plain bash in the store root (working directory and HOME),
   no protection at all. Only with ``allow_unconfined=True``; otherwise
   :class:`SandboxUnavailableError` says how to install bubblewrap.

What confinement protects: the host file system (nothing outside the store is
visible or writable; writes elsewhere land in throwaway tmpfs mounts), the
network (an empty network namespace with only loopback), other processes (own
PID namespace), the store's own state (``.memdir`` and ``.git`` are hidden).
What it does not: the store itself (a command may delete or garble any file:
that is the harness), CPU and memory within the time limit (memory is capped
per process by an address-space limit, file size by ``RLIMIT_FSIZE``).

Limits on every call: a wall-clock time limit (the whole process group, and
with namespaces the whole PID namespace, is killed, and the result says so);
an output cap (merged stdout and stderr are cut with a note saying how much
was left out). After every call the store is checked against its contract and
the defects the command introduced are appended to the result so the model
can repair them: non-markdown, hidden or special files, symbolic links, and
every :func:`memdir.store.lint_store` finding (frontmatter, names,
descriptions, dangling cross-references).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Final

from memdir.store import Finding, Store, lint_store
from memdir.tools._pids import MAX_PROCESSES, PidsGroup, ProcessCap, open_group, process_cap
from memdir.tools._sandbox import (
    UNCONFINED_READ_ONLY,
    Backend,
    SandboxUnavailableError,
    available_backends,
    launch,
)
from memdir.tools._spec import ToolError, ToolSet, ToolSpec, tool_flags, tool_spec

__all__ = ["SandboxUnavailableError", "StoreCheck", "shell_read_set", "shell_set", "shell_spec"]

_HARD_OUTPUT_BYTES: Final = 16 * 1024 * 1024
_MAX_FILE_BYTES: Final = 64 * 1024 * 1024
_MAX_ADDRESS_SPACE: Final = 4 * 1024 * 1024 * 1024
_CHUNK: Final = 65536
_GRACE_SECONDS: Final = 2.0
_ROOT_STATE: Final = frozenset({".memdir", ".git"})
_MAX_LISTED: Final = 30

_Tree = dict[str, tuple[str, int, int]]
"""Entries under the root by relative path: kind, mtime (ns), size."""

_INSTALL_HINT: Final = (
    "No confined shell is available on this machine: bubblewrap (`bwrap`) is not "
    "installed and unprivileged namespaces via `unshare` do not work. Install it with "
    "`apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install bubblewrap`, or pass "
    "allow_unconfined=True to run commands unprotected in the store folder."
)


_NO_PROCESS_CAP: Final = (
    f"The shell cannot cap how many processes a command starts (at most {MAX_PROCESSES}), "
    "so a fork bomb would run until the time limit: memdir runs as root, where the kernel "
    "ignores RLIMIT_NPROC, and no pids cgroup can be made here. Run memdir as an ordinary "
    "user, or give it a writable cgroup file system with the pids controller (cgroup v2 "
    "with pids enabled, or v1's /sys/fs/cgroup/pids)."
)


def _lower(kind: int, wanted: int) -> None:  # pragma: no cover - runs in the child
    """Set ``kind`` to ``wanted``, or keep a tighter hard limit the caller already set.

    A process may never raise its hard limit: under ``ulimit -v 2000000`` asking for
    4 GiB would fail, and with it every command.
    """
    _, hard = resource.getrlimit(kind)
    value = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    resource.setrlimit(kind, (value, value))


def _limits(group: PidsGroup | None) -> None:  # pragma: no cover - runs in the child
    _lower(resource.RLIMIT_FSIZE, _MAX_FILE_BYTES)
    _lower(resource.RLIMIT_AS, _MAX_ADDRESS_SPACE)
    _lower(resource.RLIMIT_CORE, 0)
    if group is not None:
        group.join()


@dataclass
class _Output:
    kept: bytearray
    total: int = 0
    flooded: bool = False


async def _drain(
    stream: asyncio.StreamReader, keep: int, out: _Output, kill: asyncio.Event
) -> None:
    while chunk := await stream.read(_CHUNK):
        out.total += len(chunk)
        room = keep - len(out.kept)
        if room > 0:
            out.kept += chunk[:room]
        if out.total > _HARD_OUTPUT_BYTES and not out.flooded:
            out.flooded = True
            kill.set()


def _killpg(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _run(
    backend: Backend, root: Path, command: str, timeout: float, keep_bytes: int,
    read_only: bool, cap: ProcessCap | None,
) -> tuple[_Output, int | None, str | None]:
    """Run ``command``; return its output, exit status and why it was stopped (if it was)."""
    group = open_group() if cap == "cgroup" else None
    if cap == "cgroup" and group is None and backend != "unconfined":
        raise ToolError("The shell could not make the pids cgroup that caps a command's "
                        "processes (the cgroup file system refused it); nothing was run.")
    spec = launch(backend, root, command, read_only=read_only)
    out = _Output(bytearray())
    kill = asyncio.Event()
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *spec.argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, env=spec.env, cwd=spec.cwd,
                start_new_session=True, preexec_fn=partial(_limits, group),
                pass_fds=spec.fds,
            )
        finally:
            spec.release()
        try:
            assert proc.stdout is not None
            reader = asyncio.create_task(_drain(proc.stdout, keep_bytes, out, kill))
            waiter = asyncio.create_task(proc.wait())
            killer = asyncio.create_task(kill.wait())
            done, _ = await asyncio.wait(
                {waiter, killer}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            killer.cancel()
            stopped = None
            if waiter not in done:
                stopped = "output" if out.flooded else "time"
        finally:
            # Always, even when the caller is cancelled: this also ends anything the
            # command left running in the background.
            _killpg(proc.pid)
        status = await waiter
        try:
            await asyncio.wait_for(reader, _GRACE_SECONDS)
        except TimeoutError:
            reader.cancel()
    finally:
        for path in spec.cleanup:
            with contextlib.suppress(OSError):
                path.rmdir()
        if group is not None:
            group.close()
    return out, (None if stopped else status), stopped


# -- the contract check ------------------------------------------------------


def _tree(store: Store) -> _Tree:
    """Every entry of the store (hidden ones too, its own state not): kind, mtime, size."""
    kinds = {"dir": "dir", "link": "link", "special": "special"}
    return {
        "/".join(n.parts): (kinds.get(n.kind, "file"), n.mtime_ns, n.size)
        for n in store.tree(hidden=True)
    }


def _shape_findings(tree: _Tree) -> list[Finding]:
    """Defects ``lint_store`` does not see: links, special files, hidden entries."""
    found = []
    for rel, (kind, _, _) in sorted(tree.items()):
        path = f"/memories/{rel}"
        if kind == "link":
            found.append(Finding(path, "symlink", "Symbolic links are not allowed in the "
                                 "store; remove it and copy the content into a .md file."))
        elif kind == "special":
            found.append(Finding(path, "special-file", "Only folders and .md files belong "
                                 "in the store; remove this."))
        elif any(part.startswith(".") for part in rel.split("/")) and kind == "file":
            found.append(Finding(path, "hidden-file", "Hidden names (starting with '.') are "
                                 "not allowed; rename it without the dot, or remove it."))
    return found


class StoreCheck:
    """The store's contract defects, remembered so each call reports only new ones."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._tree: _Tree | None = None
        self._findings: set[Finding] = set()

    def _findings_now(self, tree: _Tree) -> set[Finding]:
        return set(lint_store(self.store)) | set(_shape_findings(tree))

    def before(self) -> _Tree:
        """Take the state before a command (re-linting only if the store changed)."""
        tree = _tree(self.store)
        if tree != self._tree:
            self._tree, self._findings = tree, self._findings_now(tree)
        return tree

    def after(self, before: _Tree, cleaned: list[tuple[str, str]]) -> str:
        """Say what the command changed and broke, once the store was made plain.

        Args:
            before: The state :meth:`before` returned.
            cleaned: What :meth:`Store.make_plain` did after the command.
        """
        tree = _tree(self.store)
        if tree == before and not cleaned:
            return ""
        findings = self._findings_now(tree)
        new = sorted(findings - self._findings, key=lambda f: (f.path, f.line or 0, f.code))
        self._tree, self._findings = tree, findings
        lines = [_changes(before, tree)]
        if cleaned:
            lines.append("Made plain (only files and folders may stay in the store):")
            lines += [f"- {path}: {what}" for path, what in cleaned[:_MAX_LISTED]]
            if len(cleaned) > _MAX_LISTED:
                lines.append(f"- ... and {len(cleaned) - _MAX_LISTED} more")
        if new:
            lines.append(f"Store check: {len(new)} new problem(s); fix them:")
            lines += [f"- {f}" for f in new[:_MAX_LISTED]]
            if len(new) > _MAX_LISTED:
                lines.append(f"- ... and {len(new) - _MAX_LISTED} more")
        else:
            lines.append("Store check: no new problems.")
        return "\n".join(lines)


def _changes(before: _Tree, after: _Tree) -> str:
    def files(tree: _Tree) -> set[str]:
        return {p for p, v in tree.items() if v[0] != "dir"}

    created = sorted(files(after) - files(before))
    deleted = sorted(files(before) - files(after))
    changed = sorted(p for p in files(after) & files(before) if after[p] != before[p])
    parts = []
    for label, paths in (("created", created), ("modified", changed), ("deleted", deleted)):
        if paths:
            shown = ", ".join(f"/memories/{p}" for p in paths[:10])
            more = f" and {len(paths) - 10} more" if len(paths) > 10 else ""
            parts.append(f"{label}: {shown}{more}")
    return "Store changes: " + ("; ".join(parts) if parts else "folders only") + "."


# -- the tool ----------------------------------------------------------------


def _choose(backend: Backend | None, allow_unconfined: bool, read_only: bool) -> Backend:
    if backend == "unconfined" or (backend is None and not available_backends()):
        if read_only:
            hint = "" if backend == "unconfined" else f" {_INSTALL_HINT}"
            raise SandboxUnavailableError(UNCONFINED_READ_ONLY + hint)
        if not allow_unconfined:
            raise SandboxUnavailableError(
                "Running commands unconfined needs allow_unconfined=True."
                if backend == "unconfined" else _INSTALL_HINT
            )
        return "unconfined"
    if backend is None:
        return available_backends()[0]
    if backend not in available_backends():
        raise SandboxUnavailableError(f"The {backend} sandbox does not work here. {_INSTALL_HINT}")
    return backend


def _render(out: _Output, status: int | None, stopped: str | None,
            output_chars: int, timeout: float) -> str:
    text = out.kept.decode("utf-8", errors="replace")
    parts = []
    if len(text) > output_chars or out.total > len(out.kept):
        parts.append(text[:output_chars])
        parts.append(
            f"[output cut: the command printed {out.total:,} bytes; only the first "
            f"{output_chars:,} characters are shown. Narrow it with grep, head, tail or sed -n.]"
        )
    elif text:
        parts.append(text.rstrip("\n"))
    if stopped == "time":
        parts.append(f"[stopped: the command ran past the {timeout:g} s time limit and was "
                     "killed with everything it started. Make it smaller or faster.]")
    elif stopped == "output":
        parts.append(f"[stopped: the command printed more than {_HARD_OUTPUT_BYTES:,} bytes "
                     "and was killed.]")
    else:
        parts.append(f"[exit status {status}]")
    return "\n".join(parts)


def shell_spec(
    store: Store,
    timeout: float = 10.0,
    output_chars: int = 20_000,
    *,
    backend: Backend | None = None,
    allow_unconfined: bool = False,
    read_only: bool = False,
) -> ToolSpec:
    """The ``bash`` tool over ``store``; see :func:`shell_set` for the arguments."""
    if timeout <= 0 or output_chars <= 0:
        raise ValueError("timeout and output_chars must be positive")
    chosen = _choose(backend, allow_unconfined, read_only)
    cap = process_cap(chosen != "unconfined")
    if cap is None and chosen != "unconfined":
        raise SandboxUnavailableError(_NO_PROCESS_CAP)
    check = StoreCheck(store)

    async def bash(command: str) -> str:
        """Run a bash command over the memory store (mounted at /memories).

        The store is the folder /memories, which is also the working directory;
        read, search and edit its markdown files with ordinary commands (ls, cat,
        grep -rn, sed -n '10,20p', find, awk, python3, sed -i, cat > file <<'EOF').
        Every memory file must stay a .md file that opens with frontmatter (a
        line ---, then name: <file stem>, description: <one line>, then ---).
        Limits: {timeout} s per command (then it is killed), {chars} characters of
        output (the rest is cut), no network, nothing outside /memories is kept
        (/tmp is emptied after each command), no interactive programs. After each
        command that changes the store, the result lists what changed and any
        problems it introduced; fix those.

        Args:
            command: The bash command line or script to run, e.g. "grep -rn 'Alice' /memories".
        """
        if not command.strip():
            raise ToolError("The command is empty; send a bash command such as `ls -R /memories`.")
        if "\x00" in command:
            raise ToolError("The command contains a NUL byte; remove it.")
        keep = output_chars * 4 + 4
        if read_only:  # the mount keeps it from changing anything: writers need not wait
            out, status, stopped = await _run(chosen, store.root, command, timeout, keep,
                                              True, cap)
            return _render(out, status, stopped, output_chars, timeout)
        with store.locked():
            before = check.before()
            had_git = (store.root / ".git").is_dir() and not (store.root / ".git").is_symlink()
            try:
                out, status, stopped = await _run(chosen, store.root, command, timeout, keep,
                                                  False, cap)
            finally:
                # Even when the call is cancelled or fails: links, special files and a
                # .git the command planted go before the lock is released, so no git
                # call or tool of memdir's ever meets them.
                cleaned = store.make_plain(keep_git=had_git)
            report = check.after(before, cleaned)
            if report:  # the command changed files behind the store's back
                store.note_change()
        result = _render(out, status, stopped, output_chars, timeout)
        return f"{result}\n{report}" if report else result

    description = (bash.__doc__ or "").replace("{timeout}", f"{timeout:g}")
    description = description.replace("{chars}", f"{output_chars:,}")
    if chosen == "unconfined":
        description = _unconfined_doc(description)
    if read_only:
        description = _read_only_doc(description)
    bash.__doc__ = description
    return tool_spec(tool_flags(read_only=read_only, destructive=not read_only)(bash))


def _read_only_doc(doc: str) -> str:
    """The description of the read-only bash: the store can be read, never changed."""
    doc = doc.replace("(mounted at /memories)", "(mounted read-only at /memories)")
    doc = doc.replace(
        "read, search and edit its markdown files with ordinary commands (ls, cat,\n"
        "        grep -rn, sed -n '10,20p', find, awk, python3, sed -i, cat > file <<'EOF').\n"
        "        Every memory file must stay a .md file that opens with frontmatter (a\n"
        "        line ---, then name: <file stem>, description: <one line>, then ---).",
        "read and search its markdown files with ordinary commands (ls -R, find,\n"
        "        cat -n, grep -rn, sed -n '10,20p', head, awk, python3). The store is\n"
        "        read-only: a command that writes, deletes, moves or changes the mode of\n"
        "        anything under /memories fails.")
    return doc.replace(
        " After each\n        command that changes the store, the result lists what changed "
        "and any\n        problems it introduced; fix those.", "")


def _unconfined_doc(doc: str) -> str:
    doc = doc.replace(" (mounted at /memories)", "")
    doc = doc.replace(
        "The store is the folder /memories, which is also the working directory;",
        "The working directory is the store's root; use relative paths only (a file "
        "the other tools call /memories/a/b.md is a/b.md here), /memories does not exist;",
    )
    doc = doc.replace("no network, nothing outside /memories is kept\n        (/tmp is emptied "
                      "after each command),", "stay inside the working directory,")
    return doc.replace('"grep -rn \'Alice\' /memories"', '"grep -rn \'Alice\' ."')


def shell_set(
    store: Store,
    timeout: float = 10.0,
    output_chars: int = 20_000,
    *,
    backend: Backend | None = None,
    allow_unconfined: bool = False,
    read_only: bool = False,
) -> ToolSet:
    """The Shell harness: one ``bash`` tool over ``store`` (``shell``, or ``shell-read``).

    Args:
        store: The store the commands work on.
        timeout: Wall-clock seconds a command may run before it is killed.
        output_chars: Characters of output shown to the model per call.
        backend: Force a confinement (``bwrap``, ``unshare``, ``unconfined``);
            by default the best that works here is used.
        allow_unconfined: Run unconfined when no confinement works, instead of
            raising :class:`SandboxUnavailableError` (never for a read-only shell).
        read_only: Mount the store read-only, so no command can change it (the
            searchers' shell); the tool is then declared read-only and the set
            is named ``shell-read``.

    Raises:
        SandboxUnavailableError: No confinement works and unconfined was not allowed,
            or a read-only shell was asked for where only unconfined bash is possible.
    """
    spec = shell_spec(store, timeout, output_chars, backend=backend,
                      allow_unconfined=allow_unconfined, read_only=read_only)
    return ToolSet("shell-read" if read_only else "shell", [spec])


def shell_read_set(store: Store) -> ToolSet:
    """The searchers' Shell harness: one ``bash`` tool over ``store`` mounted read-only."""
    return shell_set(store, read_only=True)
