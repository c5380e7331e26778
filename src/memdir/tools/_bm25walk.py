"""A store's file fingerprints, listed by ``find`` in a process of its own.

A new process that searches once must look at every file before it may trust
its saved index (an edit in place that keeps size and modification time still
moves the change time). Done in Python, that walk costs about a second of CPU
at 100,000 files, most of it creating one ``stat`` result per file, and it waits
for the imports before it can start. :func:`start` hands it to GNU ``find``
before anything heavy is imported, so it runs on another core while the
process loads numpy and the tool set; the index takes the listing with
:func:`take` when it first compares the files with its saved fingerprints.

The listing is a fast path only. It counts as proof that nothing changed only
when ``find`` finished cleanly, its output has exactly the expected form, and
every path and fingerprint equals the saved ones; anything else (no ``find``, a
folder it could not read, a file that changed) sends the index back to its own
walk (:func:`memdir.store._tree.memory_files`), which decides alone. ``find`` is
told to list what that walk lists: no hidden names at any depth, nothing
followed, regular files whose names end with one of the store's suffixes.

Once a listing has been paired with a saved index, :func:`write_proof` records
its digest (:func:`digest`) for that index file; a later listing of the same
bytes is then recognised (:func:`read_proof`) without being parsed.

Output goes to anonymous memory files (``memfd``), so ``find`` never waits for
a reader; where those do not exist (not Linux) nothing is started.
"""

from __future__ import annotations

import os
import stat
import threading
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["LISTED", "PROOF_FILE", "Listing", "Proof", "digest", "parse", "read_proof",
           "restore", "split_for", "start", "take", "write_proof"]

_VIRTUAL_ROOT = "/memories"

FIND_WAIT = 30.0
"""Seconds a search waits for its listing before it stops ``find`` and walks the store itself
(100,000 files take ``find`` under a second; only a stuck mount takes longer)."""
"""``memdir.store.ROOT`` (not imported here: this module loads before the store)."""
_NS = 1_000_000_000
_MAX_DIGITS = 18
"""Longest inode number or size accepted (fits an int64)."""
_FRACTION = 10
"""Digits of the fraction ``find`` prints for ``%T@`` (nanoseconds and a zero)."""

_pending: dict[str, Listing] = {}
_lock = threading.Lock()


class Listing:
    """One ``find`` of a store root in flight (two, when it is split).

    Args:
        root: The store root (a real path, as :class:`memdir.store.Store` keeps it).
        suffixes: The file name endings the store holds (e.g. ``(".md",)``).
        split: Top-level folders listed by a second ``find`` beside the first, which
            lists everything else (see :func:`split_for`); empty for one ``find``.
            Names that are not plain (:func:`_plain`) are left to the first.

    Raises:
        OSError: ``find`` or the memory files could not be made.
    """

    def __init__(self, root: str, suffixes: tuple[str, ...],
                 split: tuple[str, ...] = ()) -> None:
        self.root = root
        self.suffixes = suffixes
        self.split = tuple(name for name in split if _plain(name))
        self._parts: list[tuple[Any, int, int]] = []
        """Each ``find`` running, with the memory files of its paths and numbers."""
        self._clean: bool | None = None
        """Whether every ``find`` ended cleanly (None: not waited for yet)."""
        self._read = False
        self._output: tuple[bytes, bytes] | None = None
        self._digest: str | None = None
        names: list[str] = []
        for suffix in suffixes:
            names += [*(["-o"] if names else []), "-name", "*" + suffix]
        select = ["-type", "f", "(", *names, ")"]
        try:
            if not self.split:
                self._run(["find", "-P", root, "-mindepth", "1", "-name", ".*", "-prune",
                           "-o", *select], "%P", None)
                return
            # The first lists the root's own files and the folders not split off; the
            # second the split folders, named from the root (so %p is the path below it).
            pruned: list[str] = []
            for name in self.split:
                pruned += ["-o", "-path", "./" + name]
            self._run(["find", "-P", ".", "-mindepth", "1", "(", "-name", ".*", *pruned, ")",
                       "-prune", "-o", *select], "%P", root)
            self._run(["find", "-P", *self.split, "-name", ".*", "-prune", "-o", *select],
                      "%p", root)
        except BaseException:
            self.close()
            raise

    def _run(self, argv: list[str], path: str, cwd: str | None) -> None:
        import subprocess

        paths_fd = os.memfd_create("memdir-find-paths", os.MFD_CLOEXEC)
        try:
            numbers_fd = os.memfd_create("memdir-find-numbers", os.MFD_CLOEXEC)
        except BaseException:
            os.close(paths_fd)
            raise
        self._parts.append((None, paths_fd, numbers_fd))
        argv = [*argv, "-fprintf", f"/dev/fd/{paths_fd}", f"{_VIRTUAL_ROOT}/{path}\\0",
                "-fprintf", f"/dev/fd/{numbers_fd}", _NUMBERS]
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, pass_fds=(paths_fd, numbers_fd),
                                   cwd=cwd, env={**os.environ, "LC_ALL": "C"})
        self._parts[-1] = (process, paths_fd, numbers_fd)

    def processes(self) -> list[Any]:
        """The ``find`` processes not yet waited for (:class:`subprocess.Popen`)."""
        return [process for process, _, _ in self._parts if process is not None]

    def close(self) -> None:
        """Stop ``find`` if it still runs and free its memory files.

        A listing closed before its output was read has none (:meth:`output` is None).
        """
        self._read = True
        parts, self._parts = getattr(self, "_parts", []), []
        for process, paths_fd, numbers_fd in parts:
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
            os.close(paths_fd)
            os.close(numbers_fd)

    def output(self) -> tuple[bytes, bytes] | None:
        """What ``find`` printed: the NUL-ended paths and the fixed-width number records.

        None when a ``find`` failed, or ran past :data:`FIND_WAIT` seconds (it is
        then stopped). The processes and memory files are freed after, the bytes
        kept: a later call returns the same (a search that could not answer
        from the listing hands it on, :func:`restore`). Read it with :func:`parse`.
        A split listing is the first ``find``'s records, then the second's.
        """
        if not self._read:
            self._read = True
            try:
                if self._ended():
                    self._output = (
                        b"".join(_read_all(paths_fd) for _, paths_fd, _ in self._parts),
                        b"".join(_read_all(numbers_fd) for _, _, numbers_fd in self._parts))
            finally:
                self.close()
        return self._output

    def digest(self) -> str | None:
        """:func:`digest` of :meth:`output` (None where that is None), computed once.

        Before :meth:`output` is read, the memory files are hashed where they lie
        (mapped, not copied): a search that answers from the digest alone never
        copies the listing.
        """
        if self._digest is None:
            if self._read or not self._ended():
                found = self.output()
                if found is None:
                    return None
                self._digest = digest(*found, self.suffixes)
            else:
                self._digest = _digest([fd for _, fd, _ in self._parts],
                                       [fd for _, _, fd in self._parts], self.suffixes)
        return self._digest

    def _ended(self) -> bool:
        """Whether every ``find`` ended cleanly, waited for once (a failed listing is freed)."""
        if self._clean is None:
            self._clean = self._wait()
            if not self._clean:
                self.close()
        return self._clean

    def _wait(self) -> bool:
        import subprocess
        import time

        if not self._parts or any(process is None for process, _, _ in self._parts):
            return False
        until = time.monotonic() + FIND_WAIT
        for process, _, _ in self._parts:
            try:
                code = process.wait(timeout=_exited(process, max(0.0, until - time.monotonic())))
            except subprocess.TimeoutExpired:  # a stuck mount: the index's own walk decides
                return False
            if code != 0:
                return False
        return True

    def result(self) -> tuple[list[str], Any] | None:
        """The listed files (agent paths, in walk order) and their fingerprints.

        The fingerprints are an int64 array of one row per path: inode, change
        time in nanoseconds, size (the columns :data:`LISTED` of the index's
        fingerprint). None when :meth:`output` is None or does not have the
        expected form.
        """
        found = self.output()
        return None if found is None else parse(*found)


def _exited(process: Any, timeout: float) -> float:
    """Wait up to ``timeout`` seconds for ``process`` to end, woken the moment it does.

    (``Popen.wait`` with a timeout polls, at last every 50 ms: up to that long
    after ``find`` is done, on the path of every answer.)

    Returns:
        How long the caller's own wait may still take: 0 once this one waited,
        ``timeout`` where no process handle could be had (before Linux 5.3).
    """
    import select

    try:
        fd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        return timeout
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    return 0.0


def _plain(name: str) -> bool:
    """Whether a top-level folder can be handed to a second ``find`` by name as it is.

    Not hidden, not read as an option, and nothing ``-path`` would take as a pattern.
    """
    return bool(name) and name.isprintable() and name[0] not in ".-" \
        and not any(c in name for c in "/*?[]\\")


def split_for(paths: Sequence[str], current: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Top-level folders for a second ``find`` to list, so each lists about half the files.

    ``paths`` are a saved index's agent paths, sorted. Folders are dealt, largest
    first, to the side with fewer files so far (the root's own files count for
    the first side). Empty when the other side would list under a quarter of the
    files: one folder holding most of them, or too few files to be worth a process.
    A ``current`` split that still gives the second side between 30 and 70 % of
    the files is kept (a listing split otherwise would be paired once more).
    """
    import bisect

    prefix = _VIRTUAL_ROOT + "/"
    folders: list[tuple[int, str]] = []
    loose = 0
    at = 0
    while at < len(paths):
        rest = paths[at][len(prefix):] if paths[at].startswith(prefix) else ""
        name, slash, _ = rest.partition("/")
        if not slash:
            loose += 1
            at += 1
            continue
        end = bisect.bisect_left(paths, prefix + name + "0", at)  # "0" sorts after "/"
        folders.append((end - at, name))
        at = max(end, at + 1)
    if len(paths) < _SPLIT_MIN:
        return ()
    kept = sum(count for count, name in folders if name in current)
    if current and all(_plain(name) for name in current) \
            and 0.3 * len(paths) <= kept <= 0.7 * len(paths):
        return current
    sides = [loose, 0]
    second: list[str] = []
    for count, name in sorted(folders, key=lambda f: (-f[0], f[1])):
        side = 1 if sides[1] < sides[0] and _plain(name) else 0
        sides[side] += count
        if side:
            second.append(name)
    return tuple(sorted(second)) if sides[1] * 4 >= len(paths) else ()


_SPLIT_MIN = 2000
"""Fewer files than this are listed by one ``find`` (a second process costs more than it saves)."""


def start(root: str, suffixes: tuple[str, ...] | None) -> None:
    """Start listing ``root`` for the first index that compares its files (see :func:`take`).

    Does nothing where the listing cannot be made (no ``memfd``, no ``find``, a
    store that accepts any name), or when one is already pending for ``root``.
    The listing is split as the record beside the saved index says
    (:attr:`Proof.split`), leaving out folders no longer there.
    """
    if not suffixes or not hasattr(os, "memfd_create") \
            or any(c in s for s in suffixes for c in "*?[]\\") or root in _pending:
        return
    split = tuple(name for name in _recorded_split(root) if _is_folder(root, name))
    try:
        listing = Listing(root, suffixes, split)
    except OSError:
        return
    with _lock:
        stale = _pending.pop(root, None)
        _pending[root] = listing
    if stale is not None:
        stale.close()
    if len(_pending) == 1:
        import atexit

        atexit.register(_close_all)


def take(root: str, suffixes: tuple[str, ...] | None) -> Listing | None:
    """The listing started for ``root`` with these suffixes, once; None if there is none."""
    with _lock:
        listing = _pending.pop(root, None)
    if listing is not None and listing.suffixes != suffixes:
        listing.close()
        return None
    return listing


def restore(listing: Listing) -> None:
    """Hand back a listing :func:`take` gave, for the next index of its root to take.

    For a reader that took it and could not use it (:mod:`memdir.tools._bm25light`):
    what it read stays (:meth:`Listing.output`), so the index that takes it next
    reads the same bytes. Closed instead if another listing of that root is pending.
    """
    with _lock:
        kept = _pending.setdefault(listing.root, listing) is listing
    if not kept:
        listing.close()


def digest(paths: bytes, numbers: bytes, suffixes: tuple[str, ...]) -> str:
    """A SHA-256 of one listing (:meth:`Listing.output`) and the suffixes it was made for.

    Two listings have the same digest only when ``find`` printed the same bytes:
    the same paths in the same order, each with the same inode, times and size.
    (SHA-256 rather than BLAKE2b: with the processor's SHA instructions it hashes
    the 13 MB of a 100,000-file listing in a third of the time.)
    """
    import hashlib

    h = hashlib.sha256(b"memdir-listing\n")
    h.update("\0".join(suffixes).encode("utf-8") + b"\n")
    h.update(len(paths).to_bytes(8, "little"))
    h.update(paths)
    h.update(numbers)
    return h.hexdigest()


def _digest(paths: list[int], numbers: list[int], suffixes: tuple[str, ...]) -> str:
    """:func:`digest` of the listing held in these memory files (each ``find``'s, in order).

    Each file is mapped and hashed in place; the hash is that of their bytes
    joined, as :meth:`Listing.output` joins them.
    """
    import hashlib
    import mmap

    h = hashlib.sha256(b"memdir-listing\n")
    h.update("\0".join(suffixes).encode("utf-8") + b"\n")
    h.update(sum(os.fstat(fd).st_size for fd in paths).to_bytes(8, "little"))
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    for fd in [*paths, *numbers]:
        size = os.fstat(fd).st_size
        if size:
            with mmap.mmap(fd, size, flags=flags, prot=mmap.PROT_READ) as mapped:
                h.update(mapped)
    return h.hexdigest()


class Proof(NamedTuple):
    """What a listing was once found to say about one saved index (:func:`write_proof`).

    ``digest`` is the listing's (:func:`digest`); ``changed`` the agent paths where
    the files it listed differ from that index's (empty: it holds exactly the
    index's files and fingerprints). Every other path is as the index saved it.
    """

    digest: str
    changed: tuple[str, ...] = ()
    split: tuple[str, ...] = ()
    """How to list the store next time (:class:`Listing`): a hint only, since a listing
    made otherwise has other bytes, and its digest then proves nothing."""


def read_proof(path: str, identity: tuple[int, ...]) -> Proof | None:
    """The record in ``path`` for the saved index named by ``identity``, if any.

    The record (:func:`write_proof`) says that a listing with its digest was
    once read, parsed and checked, file by file, against that index and against
    the store's own walk: outside its ``changed`` paths, every listed file is the
    one the index saved, with the same fingerprint. It is ignored (None) when it
    is missing, unreadable, not of the expected form, or made for another saved
    index: ``identity`` is the device, inode, size and modification and change
    times of the index file as it was read, and the index is only ever replaced
    whole, by a rename.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None  # no record (or none readable): the listing is parsed and paired
    try:
        st = os.fstat(fd)
        text = os.pread(fd, st.st_size, 0) \
            if stat.S_ISREG(st.st_mode) and 0 < st.st_size <= _PROOF_MAX else b""
    finally:
        os.close(fd)
    lines = text.split(b"\n")
    fields = lines[0].split(b" ")
    if len(lines) != 3 or len(fields) != len(identity) + 2 \
            or fields[0] != _PROOF_MAGIC or fields[1:-1] != [str(x).encode() for x in identity]:
        return None
    found = fields[-1].decode("ascii", errors="replace")
    if len(found) != 64 or not all(c in "0123456789abcdef" for c in found):
        return None
    split, changed = _names(lines[1]), _names(lines[2])
    return None if split is None or changed is None else Proof(found, changed, split)


def write_proof(path: str, identity: tuple[int, ...], proof: Proof) -> None:
    """Record ``proof`` of a listing for the saved index ``identity``.

    Written to a temporary file beside ``path`` and renamed into place, so a
    reader sees one whole record or another: processes that record at once
    each write a record that is true of the listing it read, and a reader takes
    only the one made for its own index file and its own listing's digest.

    Raises:
        OSError: The record could not be written.
        ValueError: The record would be too long to be read back.
    """
    import json
    import tempfile

    head = b" ".join([_PROOF_MAGIC, *(str(x).encode() for x in identity),
                      proof.digest.encode()])
    record = b"\n".join([head, json.dumps(list(proof.split)).encode("ascii"),
                         json.dumps(list(proof.changed)).encode("ascii")])
    if len(record) > _PROOF_MAX:
        raise ValueError(f"a record of {len(record):,} bytes is past {_PROOF_MAX:,}")
    fd, temp = tempfile.mkstemp(prefix=".bm25-listing-", suffix=".part",
                                dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(record)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _is_folder(root: str, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(os.path.join(root, name)).st_mode)
    except (OSError, ValueError):
        return False


def _names(line: bytes) -> tuple[str, ...] | None:
    """The names on one line of a record (a JSON list of strings), or None."""
    if line == b"[]":
        return ()  # the usual line: nothing to parse
    import json

    try:
        names = json.loads(line)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(names, list) or not all(isinstance(v, str) for v in names):
        return None
    return tuple(names)


def _recorded_split(root: str) -> tuple[str, ...]:
    """The split the record beside ``root``'s saved index asks for (:attr:`Proof.split`).

    Read before the index is, so not checked against it: a stale hint only lists
    the store another way, which the digest then tells apart.
    """
    try:
        fd = os.open(os.path.join(root, _STATE_DIR, PROOF_FILE),
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ()
    try:
        st = os.fstat(fd)
        text = os.pread(fd, min(st.st_size, _HEAD_MAX), 0) if stat.S_ISREG(st.st_mode) else b""
    finally:
        os.close(fd)
    lines = text.split(b"\n", 2)
    found = _names(lines[1]) if len(lines) == 3 and lines[0].startswith(_PROOF_MAGIC) else None
    return found or ()


PROOF_FILE = "bm25-listing-3.proof"
"""Beside the saved index: the record of a listing checked against it (:class:`Proof`).
Named for the listing's form, so versions that list otherwise (``bm25-listing.proof``,
``bm25-listing-2.proof``: modification times too) keep their own records when they
search the same store, and none replaces another's."""
_STATE_DIR = ".memdir"
"""``memdir.store._store.STATE_DIR`` (not imported here: this module loads before the store)."""
_HEAD_MAX = 1 << 16
"""Bytes read for the split: a record's first two lines (a few folder names)."""
_PROOF_MAGIC = b"memdir-bm25-listing-3"
_PROOF_MAX = 64 << 20
"""Longest record read (a record lists at most the files changed since the last compaction)."""


def _close_all() -> None:
    with _lock:
        listings = list(_pending.values())
        _pending.clear()
    for listing in listings:
        listing.close()


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    return os.pread(fd, size, 0) if size else b""


def parse(paths: bytes, numbers: bytes) -> tuple[list[str], Any] | None:
    """The agent paths and fingerprints ``find`` printed, or None if not in the expected form.

    ``numbers`` holds one record of :data:`_WIDTH` bytes per file (see
    :data:`_NUMBERS`): each field right-aligned in its columns, blanks before the
    digits, the change time as ten digits of seconds, a point and ten digits of
    fraction. The fingerprints have the columns :data:`LISTED`.
    Every byte is checked (in bulk) before a number is read, so a record that
    does not have this form exactly is refused, never guessed at: a number too
    wide for its columns, a time before 1970 or past 2262, a name with a newline.
    """
    import numpy as np

    try:
        text = paths.decode("utf-8")
    except UnicodeDecodeError:
        return None  # a name the store's own walk would not list either
    if not text or not text.endswith("\0"):
        return ([], np.zeros((0, len(LISTED)), dtype=np.int64)) \
            if not text and not numbers else None
    virtuals = text[:-1].split("\0")
    n = len(virtuals)
    if len(numbers) != n * _WIDTH:
        return None
    raw = np.frombuffer(numbers, dtype=np.uint8).reshape(n, _WIDTH)
    # The form: nothing but digits, blanks, points and newlines; the separators
    # and points in their columns, room for a blank before the widest inode or
    # size, and digits in each fraction and the last column of every number. Each
    # field then ends in a digit and is set off by a separator, so it holds at
    # least one number, and four numbers per record means exactly one per field
    # (no separator between two of its digits: blanks, if any, come first).
    spaced = numbers.translate(_SPACED)
    if _REFUSED in spaced:
        return None
    for column, byte in _FIXED:
        if not bool(np.all(raw[:, column] == byte)):
            return None
    for begin, end in _DIGITS:
        if not bool(np.all(raw[:, begin:end] >= ord("0"))):
            return None
    values = np.fromstring(spaced, dtype=np.int64, sep=" ")
    if len(values) != 4 * n:
        return None
    values = values.reshape(n, 4)  # inode, seconds, tenths of ns, size
    seconds, tenths = values[:, 1], values[:, 2]
    if n and (int(seconds.max()) > _LAST_SECOND or bool(np.any(tenths % 10))):
        return None  # past 2262, or a digit past the nanoseconds: not a form this reads
    fp = np.empty((n, len(LISTED)), dtype=np.int64)
    fp[:, 0] = values[:, 0]
    fp[:, 1] = seconds * _NS + tenths // 10
    fp[:, 2] = values[:, 3]
    return virtuals, fp


def _layout() -> tuple[int, list[tuple[int, int]], list[tuple[int, int]]]:
    """Columns of :data:`_NUMBERS`'s records.

    Returns:
        The record's width; each column that holds one given byte (separators,
        points, the blank before an inode or size), with that byte; each run of
        columns that must hold digits (the last of each number, a fraction).
    """
    fixed: list[tuple[int, int]] = []
    digits: list[tuple[int, int]] = []
    at = 0
    for name in ("inode", "ctime", "size"):
        if name == "ctime":
            point = at + _SECONDS
            fixed.append((point, ord(".")))
            digits += [(point - 1, point), (point + 1, point + 1 + _FRACTION)]
            at += _TIME_WIDTH
        else:
            fixed += [(column, ord(" ")) for column in range(at, at + _INT_WIDTH - _MAX_DIGITS)]
            at += _INT_WIDTH
            digits.append((at - 1, at))
        fixed.append((at, ord("\n" if name == "size" else " ")))
        at += 1
    return at, fixed, digits


_INT_WIDTH = 19
"""Columns of an inode number or a size (at most :data:`_MAX_DIGITS` digits used)."""
_SECONDS = 10
_TIME_WIDTH = _SECONDS + 1 + _FRACTION
_NUMBERS = f"%{_INT_WIDTH}i %{_TIME_WIDTH}C@ %{_INT_WIDTH}s\\n"
"""What ``find`` prints per file: inode, change time, size (see :data:`LISTED`)."""
LISTED = (0, 2, 3)
"""The columns of the index's fingerprint (inode, modification and change times, size)
a listing holds. Not the modification time: every change to a file's data or times
(a write, a truncation, ``utime``) also sets its change time to the present, which
cannot be set back, so a file whose inode, change time and size are as saved has the
saved modification time too, and formatting a second time costs ``find`` about a
tenth of its time. (Linux since 6.13 gives a change right after a ``stat`` a change
time finer than the clock tick, so even an edit in the tick the index read the file
in moves it.)"""
_LAST_SECOND = (2**63 - 1) // _NS - 1
"""The last second whose nanoseconds fit an int64."""
_WIDTH, _FIXED, _DIGITS = _layout()
_REFUSED = b"x"
_SPACED = bytes(c if chr(c) in "0123456789 \n" else ord(" ") if c == ord(".") else _REFUSED[0]
                for c in range(256))
"""Points become blanks (fields apart for :func:`numpy.fromstring`), any byte a record
may not hold becomes :data:`_REFUSED`."""
