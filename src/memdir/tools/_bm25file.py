"""The saved BM25 index: one file of raw arrays, mapped into memory, checked before use.

Layout: a magic line, a little-endian header length, a JSON header (format,
tokenizer, and each array's dtype, length and offset), then the arrays, each
aligned to 64 bytes. The vocabulary and the paths are NUL-separated UTF-8
blobs (neither a term nor a path can hold a NUL). Loading maps the file and
views the arrays in place, so a new process has the index of a large store in
well under a second and pages it in as queries touch it; nothing is
decompressed, so a crafted file cannot inflate.

Everything read is checked before it is trusted: sizes against the file,
array lengths against each other, postings against the slot and term counts,
and each file's length against its postings. A file that fails any check is
reported as :class:`SavedIndexError` and ignored by the caller.
"""

from __future__ import annotations

import itertools
import json
import mmap
import operator
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from memdir.tools._bm25matrix import Segment

__all__ = ["FORMAT", "Saved", "SavedIndexError", "SavedTerms", "check_order", "check_postings",
           "read_saved", "write_saved"]

FORMAT: Final = 2
"""Version of the layout and of what is indexed; bump on change."""
_MAGIC: Final = b"memdir-bm25\n"
_ALIGN: Final = 64
_MAX_HEADER: Final = 1 << 20
_DTYPES: Final = frozenset({"<i8", "<i4", "<u2", "|u1"})
_ARRAYS: Final = ("indptr", "slots", "tf", "lengths", "ino", "mtime_ns", "ctime_ns",
                  "size", "vocab", "paths")

_Array = np.ndarray[Any, Any]


class SavedIndexError(ValueError):
    """A saved index that cannot be used (damaged, crafted or from another version)."""


class SavedTerms:
    """The vocabulary of a saved index, looked up in place: a term's id is its position.

    A query needs the ids of a few terms, not a mapping of every term, so a new
    process finds each one in the NUL-separated text (a search in C) and builds the
    whole mapping only when it must add terms (:meth:`as_dict`).

    Args:
        text: The terms, NUL-separated, in id order.
        count: How many there are (checked against ``text``).

    Raises:
        SavedIndexError: ``text`` does not hold ``count`` terms.
    """

    def __init__(self, text: str, count: int) -> None:
        found = text.count("\0") + 1 if text else 0
        if found != count:
            raise SavedIndexError(f"it lists {found} names where its header says {count}")
        self._text = "\0" + text + "\0"
        self._count = count

    def __len__(self) -> int:
        return self._count

    def get(self, term: str) -> int | None:
        """The id of ``term``, or None if the vocabulary lacks it."""
        if not term or "\0" in term:
            return None
        at = self._text.find("\0" + term + "\0")
        return None if at < 0 else self._text.count("\0", 0, at)

    def as_dict(self) -> dict[str, int]:
        """Every term with its id.

        Raises:
            SavedIndexError: A term is listed twice.
        """
        if not self._count:
            return {}
        terms = {term: i for i, term in enumerate(self._text[1:-1].split("\0"))}
        if len(terms) != self._count:
            raise SavedIndexError("it lists a term twice")
        return terms


@dataclass(frozen=True, slots=True)
class Saved:
    """A compacted index as saved: the segment, each slot's file and fingerprint."""

    stemmer: str
    vocab: list[str] | SavedTerms
    paths: list[str]
    """Sorted: slot i is ``paths[i]``."""
    segment: Segment
    lengths: _Array
    ino: _Array
    mtime_ns: _Array
    ctime_ns: _Array
    size: _Array
    identity: tuple[int, ...] = ()
    """The file it was read from, as its device, inode, size and modification and change
    times (empty for an index not read from a file)."""


def write_saved(target: Path, saved: Saved) -> None:
    """Write ``saved`` to ``target`` whole: a temporary file, then one rename.

    Raises:
        OSError: The file could not be written.
    """
    import tempfile  # (with shutil and random: not loaded by a process that only searches)

    arrays: dict[str, _Array] = {
        "indptr": saved.segment.indptr.astype("<i8"),
        "slots": saved.segment.slots.astype("<i4"),
        "tf": saved.segment.tf.astype(saved.segment.tf.dtype.newbyteorder("<")),
        "lengths": saved.lengths.astype("<i8"),
        "ino": saved.ino.astype("<i8"),
        "mtime_ns": saved.mtime_ns.astype("<i8"),
        "ctime_ns": saved.ctime_ns.astype("<i8"),
        "size": saved.size.astype("<i8"),
        "vocab": np.frombuffer("\0".join(_terms(saved.vocab)).encode("utf-8"), dtype="|u1"),
        "paths": np.frombuffer("\0".join(saved.paths).encode("utf-8"), dtype="|u1"),
    }
    layout: dict[str, list[Any]] = {}
    offset = 0
    for name, array in arrays.items():
        layout[name] = [array.dtype.str, int(array.size), offset]
        offset = _aligned(offset + array.nbytes)
    header = json.dumps({"format": FORMAT, "stemmer": saved.stemmer, "arrays": layout,
                         "terms": len(saved.vocab), "files": len(saved.paths)}).encode()
    start = _aligned(len(_MAGIC) + 8 + len(header))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".bm25-", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_MAGIC + len(header).to_bytes(8, "little") + header)
            for name, array in arrays.items():
                out.seek(start + layout[name][2])
                out.write(array.tobytes())
            out.truncate(start + offset)
        os.replace(temp, target)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def read_saved(source: Path, stemmer: str) -> Saved | None:
    """The index saved in ``source``; None when there is none or it is from another version.

    Raises:
        SavedIndexError: The file is damaged or does not hold together.
        OSError: It could not be read.
    """
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        if size < len(_MAGIC) + 8:
            raise SavedIndexError(f"it is too short ({size} bytes)")
        buffer = mmap.mmap(fd, size, prot=mmap.PROT_READ)
    finally:
        os.close(fd)
    if buffer[: len(_MAGIC)] != _MAGIC:
        raise SavedIndexError("it does not start as a memdir search index")
    length = int.from_bytes(buffer[len(_MAGIC) : len(_MAGIC) + 8], "little")
    if length > min(_MAX_HEADER, size):
        raise SavedIndexError(f"its header claims {length} bytes")
    try:
        header = json.loads(bytes(buffer[len(_MAGIC) + 8 : len(_MAGIC) + 8 + length]))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SavedIndexError(f"its header is not JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT \
            or header.get("stemmer") != stemmer:
        return None  # another version or tokenizer: rebuilt and replaced at the next save
    start = _aligned(len(_MAGIC) + 8 + length)
    arrays = {name: _view(buffer, start, header, name) for name in _ARRAYS}
    saved = Saved(
        stemmer=stemmer,
        vocab=SavedTerms(_text(arrays["vocab"]), int(header.get("terms", -1))),
        paths=_strings(arrays["paths"], int(header.get("files", -1))),
        segment=Segment(arrays["indptr"], arrays["slots"], arrays["tf"]),
        lengths=arrays["lengths"],
        ino=arrays["ino"],
        mtime_ns=arrays["mtime_ns"],
        ctime_ns=arrays["ctime_ns"],
        size=arrays["size"],
        identity=(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns),
    )
    _check(saved)
    return saved


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _view(buffer: mmap.mmap, start: int, header: dict[str, Any], name: str) -> _Array:
    try:
        dtype, count, offset = header["arrays"][name]
        count, offset = int(count), int(offset)
    except (KeyError, TypeError, ValueError):
        raise SavedIndexError(f"its header does not describe {name!r}") from None
    if dtype not in _DTYPES or count < 0 or offset < 0:
        raise SavedIndexError(f"its {name!r} array is described wrongly")
    itemsize = np.dtype(dtype).itemsize
    if start + offset + count * itemsize > len(buffer):
        raise SavedIndexError(f"its {name!r} array runs past the end of the file")
    return np.frombuffer(buffer, dtype=dtype, count=count, offset=start + offset)


def _terms(vocab: list[str] | SavedTerms) -> list[str]:
    return list(vocab.as_dict()) if isinstance(vocab, SavedTerms) else vocab


def _text(blob: _Array) -> str:
    try:
        return blob.tobytes().decode("utf-8")
    except UnicodeDecodeError:
        raise SavedIndexError("its names are not UTF-8") from None


def _strings(blob: _Array, expected: int) -> list[str]:
    text = _text(blob)
    found = text.split("\0") if text else []
    if len(found) != expected:
        raise SavedIndexError(f"it lists {len(found)} names where its header says {expected}")
    return found


def _check(saved: Saved) -> None:
    """Check what costs no more than the files and terms to check (not every posting).

    The order of the paths is the caller's to check (:func:`check_order`). The
    postings themselves are checked as queries read them
    (:meth:`Segment.postings` callers use :func:`check_postings`), so a new process
    does not read the whole file before its first answer.
    """
    seg = saved.segment
    n_files, n_terms = len(saved.paths), len(saved.vocab)
    per_file = (saved.lengths, saved.ino, saved.mtime_ns, saved.ctime_ns, saved.size)
    if any(len(a) != n_files for a in per_file):
        raise SavedIndexError("its per-file arrays differ in length")
    if len(seg.indptr) != n_terms + 1 or len(seg.slots) != len(seg.tf):
        raise SavedIndexError("its postings do not fit its vocabulary")
    if int(seg.indptr[0]) != 0 or int(seg.indptr[-1]) != len(seg.slots) \
            or bool(np.any(np.diff(seg.indptr) < 0)):
        raise SavedIndexError("its posting offsets are out of order")
    if n_files and int(saved.lengths.min()) < 0:
        raise SavedIndexError("it gives a file a negative length")


def check_order(paths: list[str]) -> None:
    """Raise :class:`SavedIndexError` unless ``paths`` are sorted and distinct.

    Not part of :func:`read_saved`: a reader that finds the same paths on disk,
    walked and sorted, has its proof without this pass over them.
    """
    if not all(map(operator.lt, paths, itertools.islice(paths, 1, None))):
        raise SavedIndexError("its paths are not sorted and distinct")


def check_postings(slots: _Array, counts: _Array, n_slots: int) -> None:
    """Raise :class:`SavedIndexError` unless these postings name real slots with counts."""
    if len(slots) and (int(slots.min()) < 0 or int(slots.max()) >= n_slots
                       or int(counts.min()) < 1):
        raise SavedIndexError("its postings name files or counts that do not exist")
