"""What the last snapshot saw of each file, kept so a new process stages only what changed.

git's index keeps each file's size and times, but git 2.39 compares them in
whole seconds: an edit in place that keeps the size and puts the modification
time back, made in the second of the entry's last change, passes its check. So
a snapshot keeps its own record in ``.memdir/snapshot-record``: for every file
and link it recorded, the size, the modification and inode-change times in
nanoseconds, the inode and the mode. The inode-change time cannot be set from
user space and any write moves it, so a file whose record still matches has not
changed since it was recorded, with one exception handled as git handles it
("racy" entries): a file whose last change was not before the walk began could
change again without its times moving (the file system's clock moves in ticks),
so such an entry is recorded as unknown and hashed again by the next snapshot.
"Before the walk" is read on the file system's own clock: the walk starts by
writing a marker file in the state folder and takes its change time, as git
takes its index file's.

The record is trusted only while git's index is the one the snapshot that wrote
it left (same HEAD, same index file: inode, size and times); any other git
command that writes the index (a person's ``git add``, a replica's sync) makes
the next snapshot stage the whole tree with ``git add`` and write a new record.

Cost: a new process walks the store's folders and takes one ``lstat`` per
entry (no file is read), then hashes only the files whose record differs.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memdir.store._paths import is_temp_name

__all__ = ["Record", "Walk", "changed", "clock", "index_stamp", "load_record", "refresh",
           "save_record", "walk_tree"]

_NAME: Final = "snapshot-record"
_VERSION: Final = b"memdir snapshot record 1"
_CLOCK: Final = "snapshot-record.clock"
_UNKNOWN: Final = b"?"

Record = dict[bytes, bytes]
"""Path from the store root (bytes) -> the key of what was recorded there."""


@dataclass(frozen=True, slots=True)
class Walk:
    """One walk of the store: each file and link (and FIFO, socket, device) with its key."""

    keys: Record


def walk_tree(root: Path, state: str, top: bytes = b"", *,
              started: int | None = None) -> Walk | None:
    """Every file and link under ``root`` that a snapshot records, with its key.

    Left out as a snapshot leaves them out: ``.git`` and ``state`` at the root,
    temporary files of atomic writes anywhere. With ``top``, only the folder at
    that path (from the root) is walked, or the one entry there when it is not a
    folder (nothing when it is gone). ``started`` is the file system's time the
    walk began at (default: read now, see :func:`clock`). Returns None when the tree holds
    something only ``git add`` knows how to record (a ``.git`` below the root):
    the caller stages the whole tree then.
    """
    if started is None:
        started = clock(root / state)
    keys: Record = {}
    skip_top = {b".git", os.fsencode(state)}
    stack: list[bytes] = [top]
    base = os.fsencode(root)
    if top:
        try:
            st = os.lstat(base + b"/" + top)
        except (FileNotFoundError, NotADirectoryError):
            return Walk({})
        if not stat.S_ISDIR(st.st_mode):
            return Walk({top: _key(st, started)})
    while stack:
        folder = stack.pop()
        with os.scandir(base + b"/" + folder if folder else base) as entries:
            for entry in entries:
                name = entry.name
                if not folder and name in skip_top:
                    continue
                if name.lower() == b".git":
                    return None  # a repository inside the store: git add decides
                if is_temp_name(os.fsdecode(name)):
                    continue
                path = folder + b"/" + name if folder else name
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    stack.append(path)
                    continue
                # A link is keyed as a file is, and so is a FIFO, socket or device:
                # staged once it appears (where git add decides, as for the whole
                # tree), passed over while unchanged.
                keys[path] = _key(st, started)
    return Walk(keys)


def clock(state_dir: Path) -> int:
    """The file system's time now: the change time of a marker written in ``state_dir``.

    Falls back to the system clock, less a second, where the marker cannot be written.
    """
    marker = state_dir / _CLOCK
    try:
        state_dir.mkdir(exist_ok=True)
        _write(marker, b"0")
        return os.stat(marker, follow_symlinks=False).st_ctime_ns
    except OSError:
        return time.time_ns() - 10**9


def _key(st: os.stat_result, started: int) -> bytes:
    if st.st_ctime_ns >= started:  # any write moves it, none can set it back
        return _UNKNOWN
    return b"%x.%x.%x.%x.%o" % (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
                                st.st_mode)


def changed(record: Record, walk: Walk) -> tuple[list[bytes], list[bytes]]:
    """(paths new or changed since ``record``, paths ``record`` has that are gone)."""
    new = [p for p, key in walk.keys.items() if key == _UNKNOWN or record.get(p) != key]
    gone = [p for p in record if p not in walk.keys]
    return new, gone


def refresh(walk: Walk, root: Path, state: str, paths: list[bytes]) -> Walk | None:
    """``walk`` brought up to date, in place, at ``paths`` (each a file or a folder's tree).

    None when one of them holds what only ``git add`` records (see :func:`walk_tree`).
    """
    started = clock(root / state)
    keys = walk.keys
    folders: set[bytes] = set()
    for path in paths:
        if path in keys:
            del keys[path]
        else:
            folders.add(path)  # a folder, or gone: whatever was recorded below it goes
    if folders:
        below = tuple(f + b"/" for f in folders)
        for old in [p for p in keys if p.startswith(below)]:
            del keys[old]
    for path in paths:
        found = walk_tree(root, state, path, started=started)
        if found is None:
            return None
        keys.update(found.keys)
    return walk


def index_stamp(git_dir: Path, head: str) -> bytes:
    """What must still hold for a record to be trusted: HEAD and git's index file, as now."""
    try:
        st = os.stat(git_dir / "index")
    except FileNotFoundError:
        return b"%s none" % head.encode()
    return b"%s %x.%x.%x.%x" % (head.encode(), st.st_ino, st.st_size, st.st_mtime_ns,
                                st.st_ctime_ns)


def load_record(state_dir: Path, stamp: bytes) -> Record | None:
    """The saved record, if one was saved with ``stamp`` (None: absent, stale or unreadable)."""
    try:
        data = (state_dir / _NAME).read_bytes()
    except OSError:
        return None
    head, _, body = data.partition(b"\n")
    if head != _VERSION + b" " + stamp:
        return None
    fields = body.split(b"\0")
    if len(fields) % 2 != 1 or fields[-1] != b"":
        return None  # cut short: not written whole
    return dict(zip(fields[:-1:2], fields[1::2], strict=True))


def save_record(state_dir: Path, keys: Record, stamp: bytes) -> None:
    """Save ``keys`` with ``stamp`` atomically (a failure leaves no record, never a wrong one)."""
    body = b"".join(p + b"\0" + k + b"\0" for p, k in keys.items())
    target = state_dir / _NAME
    temp = state_dir / f".{_NAME}.{os.getpid()}.part"
    try:
        state_dir.mkdir(exist_ok=True)
        _write(temp, _VERSION + b" " + stamp + b"\n" + body)
        os.replace(temp, target)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink()
        with contextlib.suppress(OSError):
            target.unlink()


def _write(path: Path, data: bytes) -> None:
    """Write ``path`` whole, never through a link planted at its name."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
