"""A change feed: which parts of a store changed since its reader last asked.

Derived state (a search index, a cache of file contents) keeps in step with the
files through a feed instead of walking the whole tree on every request. On
Linux the feed is inotify: one watch per folder, and the kernel queues an event
for every change as it happens, so a change that finished before a request is
seen by that request, whoever made it (memdir, ``bash``, an editor, another
process) and whatever it did to the file's size and times (an edit in place
with the modification time put back still raises one).

Where inotify cannot be had (another system, the per-user limit on watches or
instances reached, a folder that cannot be watched), the feed is not *live*:
every poll answers "everything", and its reader walks the files as before.
The same answer comes after the kernel's queue overflowed. A reader is
therefore never wrong, only slower.

Hidden entries (names starting with a dot: the store's ``.git`` and
``.memdir``, the temporary files of atomic writes) are not reported; a hidden
folder renamed to a visible name is reported under its new name, with its tree.
A feed made with ``hidden=True`` (for a history, which records hidden files too)
reports them as well, all but the store's own state at the root and the
temporary files of atomic writes.

Cost: starting a feed walks the folders once (not the files); a poll costs in
proportion to the changes since the last one.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import os
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from memdir.store._paths import is_temp_name, open_dir, open_root
from memdir.store._tree import STATE_NAMES

if TYPE_CHECKING:
    import logging

__all__ = ["Changes", "ChangeFeed", "in_one_call", "one_call"]


def _log() -> logging.Logger:
    """This module's logger; ``logging`` is loaded when there is first something to say."""
    import logging

    return logging.getLogger(__name__)


Parts = tuple[str, ...]

_ONE_CALL: Final[ContextVar[bool]] = ContextVar("memdir_one_call", default=False)


@contextlib.contextmanager
def one_call() -> Iterator[None]:
    """Within it runs the one call this process makes before it exits (``memdir tool``).

    A lazy feed polled inside watches nothing (its reader walks instead), and
    the tools keep no file text for later (see
    :func:`memdir.tools._textcache.single_use`). The mark lives in the running
    context, which a tool call carries onto the thread that runs it
    (:func:`memdir.tools._limits.run_bounded` copies it), so it reaches the call
    made inside the block and nothing outside it: a server never enters it.
    """
    token = _ONE_CALL.set(True)
    try:
        yield
    finally:
        _ONE_CALL.reset(token)


def in_one_call() -> bool:
    """Whether this runs inside :func:`one_call`."""
    return _ONE_CALL.get()

# The inotify binding is imported at the first feed that starts watching, not with
# this module: a process that reads once (one grep, one search) never loads it.
_AVAILABLE: Final = importlib.util.find_spec("inotify_simple") is not None
"""Linux with the binding installed; elsewhere every feed is a walking one."""
_inotify: Any = None
_WATCH = _ISDIR = _NEW_DIR = _OUT_DIR = _GONE_SELF = _IGNORED = _OVERFLOW = 0
"""The event masks, set by :func:`_load_inotify`."""


def _load_inotify() -> Any:
    """The inotify binding, imported on first use (None where it cannot be)."""
    global _inotify, _WATCH, _ISDIR, _NEW_DIR, _OUT_DIR, _GONE_SELF, _IGNORED, _OVERFLOW
    if _inotify is None and _AVAILABLE:
        try:
            import inotify_simple
        except ImportError:  # pragma: no cover - a broken installation
            return None
        flags = inotify_simple.flags
        _WATCH = int(flags.CREATE | flags.DELETE | flags.MODIFY | flags.CLOSE_WRITE
                     | flags.ATTRIB | flags.MOVED_FROM | flags.MOVED_TO | flags.DELETE_SELF
                     | flags.MOVE_SELF | flags.ONLYDIR | flags.EXCL_UNLINK)
        _ISDIR = int(flags.ISDIR)
        _NEW_DIR = int(flags.CREATE | flags.MOVED_TO)
        _OUT_DIR = int(flags.DELETE | flags.MOVED_FROM)
        _GONE_SELF = int(flags.DELETE_SELF | flags.MOVE_SELF)
        _IGNORED = int(flags.IGNORED)
        _OVERFLOW = int(flags.Q_OVERFLOW)
        _inotify = inotify_simple
    return _inotify


@dataclass(frozen=True, slots=True)
class Changes:
    """What a reader must recheck.

    ``everything`` means the whole tree (the first poll, a feed that is not live,
    a lost event). Otherwise ``paths`` holds the components (below the root) of
    each entry that changed: a file, or a folder whose whole tree is to be
    rechecked (made, removed or moved in or out).
    """

    everything: bool
    paths: frozenset[Parts] = frozenset()

    @property
    def none(self) -> bool:
        """Nothing changed."""
        return not self.everything and not self.paths


EVERYTHING: Final = Changes(True)
NOTHING: Final = Changes(False)


class ChangeFeed:
    """The changes under one store root, for one reader.

    Thread-safe. Close it when done (it holds a kernel object); a feed that is
    dropped is closed when collected.

    Args:
        root: The store root.
        hidden: Report hidden entries too (not ``.git`` or ``.memdir`` at the root,
            nor temporary files).
        lazy: Watch nothing until the first poll made outside :func:`one_call`.
            A process that answers one call (``memdir tool``) then never pays for
            a watch per folder: its polls all answer "everything". Any other
            reader (a server, an agent's loop) starts watching at its first poll,
            before it walks the files, so its second poll already costs only the
            changes.
    """

    def __init__(self, root: Path, *, hidden: bool = False, lazy: bool = False) -> None:
        self.root = root
        self.hidden = hidden
        self._lock = threading.Lock()
        self._pending: set[Parts] = set()
        self._everything = True  # the first poll: the reader has seen nothing yet
        self._dirs: dict[int, Parts] = {}
        self._wds: dict[Parts, int] = {}
        self._notify: Any = None
        self._waiting = lazy and _AVAILABLE
        """Lazy and not watching yet: the watches start at a poll outside :func:`one_call`."""
        if not self._waiting:
            self._start()

    def _start(self) -> None:
        binding = _load_inotify()
        if binding is None:
            return
        try:
            self._notify = binding.INotify(nonblocking=True)
        except OSError as exc:
            _log().info("no inotify for %s (%s): searches walk the files", self.root, exc)
            return
        self._watch_tree(())

    @property
    def live(self) -> bool:
        """Whether the kernel reports changes, or will once a lazy feed starts watching.

        False: every poll says everything.
        """
        return self._notify is not None or self._waiting

    def close(self) -> None:
        """Release the kernel's watches; later polls say everything."""
        with self._lock:
            self._waiting = False
            self._stop()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stop()

    def poll(self) -> Changes:
        """The changes since the last poll (every change that finished before this call)."""
        with self._lock:
            if self._waiting:
                if in_one_call():
                    return EVERYTHING
                self._waiting = False
                self._everything = True  # nothing was watched till now
                self._start()
            if self._notify is not None:
                self._drain()
            if self._notify is None or self._everything:
                self._everything = False
                self._pending.clear()
                return EVERYTHING
            if not self._pending:
                return NOTHING
            found = frozenset(self._pending)
            self._pending.clear()
            return Changes(False, found)

    # -- inside ------------------------------------------------------------------

    def _stop(self) -> None:
        notify, self._notify = self._notify, None
        if notify is not None:
            notify.close()
        self._dirs.clear()
        self._wds.clear()

    def _give_up(self, why: object) -> None:
        _log().info("the change feed of %s stops (%s): searches walk the files", self.root, why)
        self._stop()

    def _watch_tree(self, top: Parts) -> None:
        """Watch the folder ``top`` and every visible folder below it."""
        try:
            root_fd = open_root(self.root)
        except OSError as exc:
            self._give_up(exc)
            return
        try:
            stack = [top]
            while stack and self._notify is not None:
                parts = stack.pop()
                try:
                    fd = open_dir(root_fd, parts)
                except OSError:
                    continue  # gone or replaced meanwhile: its parent's event says so
                try:
                    self._add_watch(parts, fd)
                    with os.scandir(fd) as entries:
                        stack.extend(
                            (*parts, e.name) for e in entries
                            if not self._skip(parts, e.name) and e.is_dir(follow_symlinks=False)
                        )
                finally:
                    os.close(fd)
        finally:
            os.close(root_fd)

    def _add_watch(self, parts: Parts, fd: int) -> None:
        assert self._notify is not None
        try:
            # Through the folder's handle (opened without following links): any depth,
            # and no link swapped in on the way can redirect the watch.
            wd = self._notify.add_watch(f"/proc/self/fd/{fd}", _WATCH)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.ENOMEM):
                self._give_up(f"the inotify watch limit is reached: {exc}")
            else:
                self._give_up(exc)
            return
        old = self._dirs.get(wd)
        if old is not None and old != parts:
            self._wds.pop(old, None)
        self._dirs[wd] = parts
        self._wds[parts] = wd

    def _skip(self, folder: Parts, name: str) -> bool:
        """Whether an entry named ``name`` in ``folder`` is left out of the feed."""
        if not self.hidden:
            return name.startswith(".")
        return (not folder and name in STATE_NAMES) or is_temp_name(name)

    def _forget(self, top: Parts) -> None:
        """Drop the names of the watches at and below ``top`` (moved or removed)."""
        n = len(top)
        for parts in [p for p in self._wds if p[:n] == top]:
            wd = self._wds.pop(parts)
            if self._dirs.get(wd) == parts:
                del self._dirs[wd]

    def _drain(self) -> None:
        assert self._notify is not None
        try:
            events = self._notify.read(timeout=0)
        except OSError as exc:
            self._give_up(exc)
            return
        for event in events:
            self._take(event.wd, int(event.mask), event.name)
            if self._notify is None:
                return

    def _take(self, wd: int, mask: int, name: str) -> None:
        if mask & _OVERFLOW:
            self._everything = True
            self._watch_tree(())  # folders made while events were lost get watches
            return
        folder = self._dirs.get(wd)
        if folder is None:
            return  # a watch already forgotten (its folder moved or went)
        if mask & _IGNORED:
            if self._wds.get(folder) == wd:
                del self._wds[folder]
            del self._dirs[wd]
            return
        if mask & _GONE_SELF:
            if not folder:
                self._everything = True  # the root itself went
            else:
                self._pending.add(folder)
            return
        if not name or self._skip(folder, name):
            return
        parts = (*folder, name)
        self._pending.add(parts)
        if mask & _ISDIR:
            if mask & _NEW_DIR:
                self._watch_tree(parts)
            elif mask & _OUT_DIR:
                self._forget(parts)
            # else a change to the folder itself (its mode, say): its watch stays

