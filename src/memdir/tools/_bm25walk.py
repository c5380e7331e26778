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
    import subprocess

__all__ = ["Listing", "Proof", "digest", "parse", "read_proof", "start", "take", "write_proof"]

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
    """One ``find`` of a store root in flight.

    Args:
        root: The store root (a real path, as :class:`memdir.store.Store` keeps it).
        suffixes: The file name endings the store holds (e.g. ``(".md",)``).

    Raises:
        OSError: ``find`` or the memory files could not be made.
    """

    def __init__(self, root: str, suffixes: tuple[str, ...]) -> None:
        import subprocess

        self.root = root
        self.suffixes = suffixes
        self._paths_fd = os.memfd_create("memdir-find-paths", os.MFD_CLOEXEC)
        self._numbers_fd = os.memfd_create("memdir-find-numbers", os.MFD_CLOEXEC)
        names: list[str] = []
        for suffix in suffixes:
            names += [*(["-o"] if names else []), "-name", "*" + suffix]
        argv = ["find", "-P", root, "-mindepth", "1", "-name", ".*", "-prune", "-o",
                "-type", "f", "(", *names, ")",
                "-fprintf", f"/dev/fd/{self._paths_fd}", _VIRTUAL_ROOT + "/%P\\0",
                "-fprintf", f"/dev/fd/{self._numbers_fd}", _NUMBERS]
        try:
            self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, pass_fds=(self._paths_fd, self._numbers_fd),
                env={**os.environ, "LC_ALL": "C"})
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop ``find`` if it still runs and free its output."""
        process, self._process = getattr(self, "_process", None), None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        for name in ("_paths_fd", "_numbers_fd"):
            fd = getattr(self, name, -1)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def output(self) -> tuple[bytes, bytes] | None:
        """What ``find`` printed: the NUL-ended paths and the fixed-width number records.

        None when ``find`` failed, or ran past :data:`FIND_WAIT` seconds (it is
        then stopped). The listing is freed after; read it with :func:`parse`.
        """
        import subprocess

        process = self._process
        if process is None:
            return None
        try:
            try:
                code = process.wait(timeout=FIND_WAIT)
            except subprocess.TimeoutExpired:  # a stuck mount: the index's own walk decides
                return None
            if code != 0:
                return None
            self._process = None
            return _read_all(self._paths_fd), _read_all(self._numbers_fd)
        finally:
            self.close()

    def result(self) -> tuple[list[str], Any] | None:
        """The listed files (agent paths, in walk order) and their fingerprints.

        The fingerprints are an int64 array of one row per path: inode,
        modification and change times in nanoseconds, size (the columns of the
        index's fingerprint). None when :meth:`output` is None or does not have
        the expected form.
        """
        found = self.output()
        return None if found is None else parse(*found)


def start(root: str, suffixes: tuple[str, ...] | None) -> None:
    """Start listing ``root`` for the first index that compares its files (see :func:`take`).

    Does nothing where the listing cannot be made (no ``memfd``, no ``find``, a
    store that accepts any name), or when one is already pending for ``root``.
    """
    if not suffixes or not hasattr(os, "memfd_create") \
            or any(c in s for s in suffixes for c in "*?[]\\") or root in _pending:
        return
    try:
        listing = Listing(root, suffixes)
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


def digest(paths: bytes, numbers: bytes, suffixes: tuple[str, ...]) -> str:
    """A keyed hash of one listing (:meth:`Listing.output`) and the suffixes it was made for.

    Two listings have the same digest only when ``find`` printed the same bytes:
    the same paths in the same order, each with the same inode, times and size.
    """
    import hashlib

    h = hashlib.blake2b(digest_size=32, person=b"memdir-listing")
    h.update("\0".join(suffixes).encode("utf-8") + b"\n")
    h.update(len(paths).to_bytes(8, "little"))
    h.update(paths)
    h.update(numbers)
    return h.hexdigest()


class Proof(NamedTuple):
    """What a listing was once found to say about one saved index (:func:`write_proof`).

    ``digest`` is the listing's (:func:`digest`); ``changed`` the agent paths where
    the files it listed differ from that index's (empty: it holds exactly the
    index's files and fingerprints). Every other path is as the index saved it.
    """

    digest: str
    changed: tuple[str, ...] = ()


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
    head, newline, body = text.partition(b"\n")
    fields = head.split(b" ")
    if not newline or len(fields) != len(identity) + 2 \
            or fields[0] != _PROOF_MAGIC or fields[1:-1] != [str(x).encode() for x in identity]:
        return None
    found = fields[-1].decode("ascii", errors="replace")
    if len(found) != 64 or not all(c in "0123456789abcdef" for c in found):
        return None
    changed = _changed_paths(body)
    return None if changed is None else Proof(found, changed)


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

    body = json.dumps(list(proof.changed)).encode("ascii")
    head = b" ".join([_PROOF_MAGIC, *(str(x).encode() for x in identity),
                      proof.digest.encode()])
    record = head + b"\n" + body
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


def _changed_paths(body: bytes) -> tuple[str, ...] | None:
    """The ``changed`` paths of a record's body (a JSON list of strings), or None."""
    if body == b"[]":
        return ()  # the usual record: nothing to parse
    import json

    try:
        changed = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(changed, list) or not all(isinstance(v, str) for v in changed):
        return None
    return tuple(changed)


_PROOF_MAGIC = b"memdir-bm25-listing-2"
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
    digits, the times as ten digits of seconds, a point and ten digits of fraction.
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
        return ([], np.zeros((0, 4), dtype=np.int64)) if not text and not numbers else None
    virtuals = text[:-1].split("\0")
    n = len(virtuals)
    if len(numbers) != n * _WIDTH:
        return None
    raw = np.frombuffer(numbers, dtype=np.uint8).reshape(n, _WIDTH)
    # The form: nothing but digits, blanks, points and newlines; the separators
    # and points in their columns, room for a blank before the widest inode or
    # size, and digits in each fraction and the last column of every number. Each
    # field then ends in a digit and is set off by a separator, so it holds at
    # least one number, and six numbers per record means exactly one per field
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
    if len(values) != 6 * n:
        return None
    values = values.reshape(n, 6)  # inode, seconds, tenths of ns, seconds, tenths, size
    times = values[:, [1, 3]]
    tenths = values[:, [2, 4]]
    if int(times.max()) > _LAST_SECOND or bool(np.any(tenths % 10)):
        return None  # past 2262, or a digit past the nanoseconds: not a form this reads
    fp = np.empty((n, 4), dtype=np.int64)
    fp[:, 0] = values[:, 0]
    fp[:, 1:3] = times * _NS + tenths // 10
    fp[:, 3] = values[:, 5]
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
    for name in ("inode", "mtime", "ctime", "size"):
        if name in ("mtime", "ctime"):
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
_NUMBERS = f"%{_INT_WIDTH}i %{_TIME_WIDTH}T@ %{_TIME_WIDTH}C@ %{_INT_WIDTH}s\\n"
"""What ``find`` prints per file: inode, modification time, change time, size."""
_LAST_SECOND = (2**63 - 1) // _NS - 1
"""The last second whose nanoseconds fit an int64."""
_WIDTH, _FIXED, _DIGITS = _layout()
_REFUSED = b"x"
_SPACED = bytes(c if chr(c) in "0123456789 \n" else ord(" ") if c == ord(".") else _REFUSED[0]
                for c in range(256))
"""Points become blanks (fields apart for :func:`numpy.fromstring`), any byte a record
may not hold becomes :data:`_REFUSED`."""
