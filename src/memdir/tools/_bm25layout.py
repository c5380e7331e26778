"""The saved BM25 index's layout: where each array lies in the file, read without numpy.

Layout: a magic line, a little-endian header length, a JSON header (format,
tokenizer, and each array's dtype, length and offset), then the arrays, each
aligned to 64 bytes. The vocabulary and the paths are NUL-separated UTF-8
blobs (neither a term nor a path can hold a NUL).

:func:`open_saved` maps a saved file and checks what the header says against
the file's size; :meth:`Mapped.extent` gives one array's place in it. The
index views the arrays with numpy (:mod:`memdir.tools._bm25file`); a search
answered without numpy (:mod:`memdir.tools._bm25light`) reads the few values
it needs with :mod:`struct` and ``memoryview.cast``.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["ALIGN", "ARRAYS", "FORMAT", "INDEX_FILE", "ITEMSIZE", "MAGIC", "Mapped",
           "SavedIndexError", "SavedTerms", "aligned", "open_saved"]

INDEX_FILE: Final = "bm25-index.bin"
"""The saved index, in the store's state folder."""
FORMAT: Final = 2
"""Version of the layout and of what is indexed; bump on change."""
MAGIC: Final = b"memdir-bm25\n"
ALIGN: Final = 64
_MAX_HEADER: Final = 1 << 20
ITEMSIZE: Final = {"<i8": 8, "<i4": 4, "<u2": 2, "|u1": 1}
"""The dtypes an array may have, with their sizes in bytes."""
ARRAYS: Final = ("indptr", "slots", "tf", "lengths", "ino", "mtime_ns", "ctime_ns",
                 "size", "vocab", "paths")


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


def aligned(offset: int) -> int:
    """``offset`` rounded up to the next multiple of :data:`ALIGN`."""
    return -(-offset // ALIGN) * ALIGN


@dataclass(frozen=True, slots=True)
class Mapped:
    """A saved index file mapped into memory, its header read and found to be this version's."""

    buffer: mmap.mmap
    header: dict[str, Any]
    start: int
    """Where the arrays begin (their offsets count from here)."""
    identity: tuple[int, ...]
    """The file as it was opened: device, inode, size, modification and change times."""

    def extent(self, name: str) -> tuple[str, int, int]:
        """The dtype, length and absolute byte offset of the array ``name``.

        Raises:
            SavedIndexError: The header does not describe it, or it runs past the file.
        """
        try:
            dtype, count, offset = self.header["arrays"][name]
            count, offset = int(count), int(offset)
        except (KeyError, TypeError, ValueError):
            raise SavedIndexError(f"its header does not describe {name!r}") from None
        if dtype not in ITEMSIZE or count < 0 or offset < 0:
            raise SavedIndexError(f"its {name!r} array is described wrongly")
        if self.start + offset + count * ITEMSIZE[dtype] > len(self.buffer):
            raise SavedIndexError(f"its {name!r} array runs past the end of the file")
        return dtype, count, self.start + offset


def open_saved(source: Path | str, stemmer: str) -> Mapped | None:
    """The index file ``source`` mapped, or None when there is none or it is another version's.

    Another version's file (another format, or made with another stemmer) is
    rebuilt and replaced by the next index that saves.

    Raises:
        SavedIndexError: The file does not start as a saved index, or its header is broken.
        OSError: It could not be read.
    """
    import json

    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        if size < len(MAGIC) + 8:
            raise SavedIndexError(f"it is too short ({size} bytes)")
        buffer = mmap.mmap(fd, size, prot=mmap.PROT_READ)
    finally:
        os.close(fd)
    if buffer[: len(MAGIC)] != MAGIC:
        raise SavedIndexError("it does not start as a memdir search index")
    length = int.from_bytes(buffer[len(MAGIC) : len(MAGIC) + 8], "little")
    if length > min(_MAX_HEADER, size):
        raise SavedIndexError(f"its header claims {length} bytes")
    try:
        header = json.loads(bytes(buffer[len(MAGIC) + 8 : len(MAGIC) + 8 + length]))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SavedIndexError(f"its header is not JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT \
            or header.get("stemmer") != stemmer:
        return None
    return Mapped(buffer, header, aligned(len(MAGIC) + 8 + length),
                  (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
