"""The saved BM25 index: one file of raw arrays, mapped into memory, checked before use.

The layout is :mod:`memdir.tools._bm25layout`'s. Loading maps the file and
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
import operator
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memdir.tools._bm25layout import (
    ARRAYS,
    FORMAT,
    INDEX_FILE,
    MAGIC,
    Mapped,
    SavedIndexError,
    SavedTerms,
    aligned,
    open_saved,
)
from memdir.tools._bm25matrix import Segment

__all__ = ["FORMAT", "INDEX_FILE", "Saved", "SavedIndexError", "SavedTerms", "check_order",
           "check_postings", "read_saved", "write_saved"]

_Array = np.ndarray[Any, Any]


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
        offset = aligned(offset + array.nbytes)
    header = json.dumps({"format": FORMAT, "stemmer": saved.stemmer, "arrays": layout,
                         "terms": len(saved.vocab), "files": len(saved.paths)}).encode()
    start = aligned(len(MAGIC) + 8 + len(header))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".bm25-", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(MAGIC + len(header).to_bytes(8, "little") + header)
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
    mapped = open_saved(source, stemmer)
    if mapped is None:
        return None
    header = mapped.header
    arrays = {name: _view(mapped, name) for name in ARRAYS}
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
        identity=mapped.identity,
    )
    _check(saved)
    return saved


def _view(mapped: Mapped, name: str) -> _Array:
    dtype, count, offset = mapped.extent(name)
    return np.frombuffer(mapped.buffer, dtype=dtype, count=count, offset=offset)


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
