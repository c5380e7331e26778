"""A new process's ranked search answered from the saved index as it is, without numpy.

A ``memdir tool`` search lists the store with ``find`` while it imports
(:mod:`memdir.tools._bm25walk`). When that listing is byte for byte one whose
record beside the saved index (:func:`memdir.tools._bm25walk.read_proof`) says
where it differs from that index's files and fingerprints (usually nowhere),
the answer needs only the postings of the query's few terms, each file's
length, and the files at the paths the record names, walked and read again as
the index reads them (:mod:`memdir.tools._bm25changes`); of those files only
the counts of the query's terms are kept. The rest is read here from the mapped file
(:mod:`struct`, ``memoryview.cast``), and the scores are summed in Python, one
IEEE operation after another in the order :func:`memdir.tools._bm25matrix.score_terms`
does them in float64 (its element-wise products and quotients, then
``bincount``'s sum per slot in term order), so every score has the same bits;
the idf is :func:`memdir.tools._bm25terms.idf`, which the index uses too. The
top ``k`` are chosen as :func:`memdir.tools._bm25index._top` chooses them
(score, then path). The process then never imports numpy, which costs more
than the rest of its imports together.

Anything else is the index's (:func:`search` returns None and hands the
listing back for it to take): no listing, a listing that differs from the
recorded one, no saved index or one of another version, a file this reader
cannot check, a host that is not little-endian, terms whose postings are long
enough that numpy's arrays answer faster, a record naming a folder with many
saved files, or changes enough for the index to fold them into a new saved
file (it then does). The index then meets the same listing and decides as it always
has, including warning about a saved file it cannot use; nothing found wrong
here is answered from.

The global checks the index makes when it loads a saved file (every posting
offset in order, every path sorted) are not repeated here: the record names
the index file by device, inode, size and times, and only an index that had
loaded that very file, with those checks passed, writes a record for it. The
checks that concern the answer are made: the header against the file's size,
the vocabulary's count, and the query terms' postings (slots that exist,
counts of at least one), as the index checks them.

Cost: the listing's digest (a pass over its bytes), the vocabulary's text,
each file's length (summed for the mean), a count of the saved paths' NULs,
the postings of the query's terms, and the files the record names.
"""

from __future__ import annotations

import bisect
import heapq
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING, Final, Literal

from memdir.store import ROOT
from memdir.store._paths import to_virtual
from memdir.store._store import STATE_DIR
from memdir.tools._bm25changes import compact_at, memory_at, parts_of, read_text
from memdir.tools._bm25layout import (
    INDEX_FILE,
    ITEMSIZE,
    Mapped,
    SavedIndexError,
    SavedTerms,
    open_saved,
)
from memdir.tools._bm25terms import K1, B, Hit, LineMatch, Tokenizer, best_lines, idf, index_text
from memdir.tools._bm25walk import PROOF_FILE, read_proof, restore, take

if TYPE_CHECKING:
    from memdir.store import Store
    from memdir.tools._bm25walk import Listing

__all__ = ["MAX_POSTINGS", "Answer", "search"]

MAX_POSTINGS: Final = 150_000
"""Most postings (over the query's distinct terms) summed here; past that the index's
arrays answer sooner than a Python loop, numpy's import included."""
_CODES: Final[dict[str, Literal["q", "i", "H", "B"]]] = {
    "<i8": "q", "<i4": "i", "<u2": "H", "|u1": "B"}
"""Each saved dtype as a ``memoryview.cast`` format (native order: little-endian hosts only)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A search answered from the saved index: its hits and what shows their lines."""

    hits: list[Hit]
    tokenizer: Tokenizer
    weights: dict[str, float]
    """Each query term's idf (0 for a term no file holds), as the index gives it."""

    def best_lines(self, text: str, query: str, limit: int = 3) -> list[LineMatch]:
        """What :meth:`memdir.tools._bm25index.FileIndex.best_lines` gives for ``text``."""
        return best_lines(self.tokenizer, self.weights.__getitem__, text, query, limit)


def search(store: Store, tokenizer: Tokenizer, query: str, k: int, under: str = ROOT
           ) -> Answer | None:
    """The ``k`` best files for ``query`` at or below ``under``, or None to ask the index.

    None unless this process's listing (:func:`memdir.tools._bm25walk.start`) is
    the one recorded for the saved index (the module's docstring says what else
    is left to the index); the listing is then handed back for the index to
    take. ``k`` and ``under`` are the caller's to check first, as the tool does.

    Args:
        store: The store searched.
        tokenizer: Turns the query into terms (an index saved with another stemmer
            is left to the index).
        query: The query text.
        k: How many files at most.
        under: A folder (virtual path) that limits the search.
    """
    root = str(store.root)
    listing = take(root, store.names.suffixes)
    if listing is None:
        return None
    try:
        answer = _answer(store, listing, tokenizer, query, k, under)
    except (OSError, SavedIndexError):
        # The index meets the same file next and reports what it finds, or rebuilds.
        answer = None
    if answer is None:
        restore(listing)
    else:
        listing.close()
    return answer


def _answer(store: Store, listing: Listing, tokenizer: Tokenizer, query: str, k: int,
            under: str) -> Answer | None:
    if sys.byteorder != "little":
        return None
    saved = store.root / STATE_DIR / INDEX_FILE
    mapped = open_saved(saved, tokenizer.stemmer)
    if mapped is None:
        return None
    try:
        proof = read_proof(str(saved.parent / PROOF_FILE), mapped.identity)
        if proof is None or proof.digest != listing.digest():
            return None
        return _Reader(mapped).answer(store, proof.changed, tokenizer, query, k, under)
    finally:
        mapped.buffer.close()


class _Reader:
    """The arrays of a mapped index that a search reads, as ``memoryview`` casts.

    Its views are released by :meth:`answer`, so the map can be closed after.
    """

    def __init__(self, mapped: Mapped) -> None:
        self._mapped = mapped
        header = mapped.header
        self.n_files = _count(header, "files")
        self.n_terms = _count(header, "terms")

    def _array(self, name: str) -> memoryview[int]:
        dtype, count, offset = self._mapped.extent(name)
        size = count * ITEMSIZE[dtype]
        return memoryview(self._mapped.buffer)[offset: offset + size].cast(_CODES[dtype])

    def _blob(self, name: str) -> bytes:
        dtype, count, offset = self._mapped.extent(name)
        if dtype != "|u1":
            raise SavedIndexError(f"its {name!r} array is described wrongly")
        return self._mapped.buffer[offset: offset + count]

    def answer(self, store: Store, changed: tuple[str, ...], tokenizer: Tokenizer, query: str,
               k: int, under: str) -> Answer | None:
        """The search's answer, or None where the index answers sooner or must compact.

        ``changed`` are the paths the record names: they are walked and their
        files read as the index walks and reads them (:mod:`._bm25changes`).
        """
        views = [self._array(name) for name in (
            "indptr", "slots", "tf", "lengths", "ino", "mtime_ns", "ctime_ns", "size")]
        indptr, slots, tf, lengths = views[:4]
        try:
            if len(indptr) != self.n_terms + 1 or len(slots) != len(tf) \
                    or any(len(view) != self.n_files for view in views[3:]):
                raise SavedIndexError("its arrays do not fit its vocabulary and files")
            if indptr[0] != 0 or indptr[-1] != len(slots):
                raise SavedIndexError("its posting offsets are out of order")
            try:
                vocab = SavedTerms(self._blob("vocab").decode("utf-8"), self.n_terms)
            except UnicodeDecodeError:
                raise SavedIndexError("its names are not UTF-8") from None
            where: dict[str, tuple[int, int]] = {}
            for term in dict.fromkeys(tokenizer(query)):
                i = vocab.get(term)
                where[term] = (0, 0) if i is None else (indptr[i], indptr[i + 1])
            if sum(end - start for start, end in where.values()) > MAX_POSTINGS:
                return None
            postings = {t: self._postings(slots, tf, start, end)
                        for t, (start, end) in where.items()}
            length = lengths.tolist()
            paths = _Paths(self._blob("paths"), self.n_files)
            delta = _Delta.of(store, changed, paths, views[4:], tokenizer) if changed else _NO_DELTA
        finally:
            for view in views:
                view.release()
        if delta is None:
            return None
        return self._scored(postings, length, paths, delta, tokenizer, k, under)

    def _scored(self, postings: dict[str, tuple[list[int], list[int]]], length: list[int],
                paths: _Paths, delta: _Delta, tokenizer: Tokenizer, k: int, under: str
                ) -> Answer | None:
        """The answer from the query terms' saved postings and the files read again."""
        if length and min(length) < 0:
            raise SavedIndexError("it gives a file a negative length")
        n = self.n_files
        live = n - len(delta.dead) + len(delta.names)
        if delta.names or delta.dead:
            if len(delta.names) + len(delta.dead) >= compact_at(live):
                return None  # the index folds these changes into a new saved file
        total = sum(length) - sum(length[slot] for slot in delta.dead) + sum(delta.lengths)
        length += delta.lengths  # the new files' slots follow the saved ones, as the index's
        tables: dict[str, dict[int, int]] = {}
        for t, (found, counts) in postings.items():
            table = dict(zip(found, counts, strict=True))
            if len(table) != len(found):
                raise SavedIndexError("its postings name a file twice for one term")
            for slot in [slot for slot in delta.dead if slot in table]:
                del table[slot]
            for j, held in enumerate(delta.counts):
                if count := held.get(t, 0):
                    table[n + j] = count
            tables[t] = table
        weights = {t: idf(live, len(table)) if table else 0.0 for t, table in tables.items()}
        scorer = _Scorer(length, total / live if total > 0 else 1.0,
                         [(weights[t], table) for t, table in tables.items() if table])
        name = _Names(paths, delta.names)
        if under == ROOT:
            scores = scorer.best(k)
        else:
            # The saved paths are sorted (the record's index checked them), so a folder
            # is a range of slots; UTF-8 bytes sort as the strings do.
            prefix = (under.rstrip("/") + "/").encode("utf-8")
            lo = bisect.bisect_left(paths, prefix)
            scope = _Scope(range(lo, bisect.bisect_left(paths, prefix[:-1] + b"0", lo)),
                           {n + j for j, v in enumerate(delta.names)
                            if v.startswith(prefix.decode("utf-8"))})
            scores = scorer.best(k, scope)
        return Answer(_top(scores, name, k), tokenizer, weights)

    def _postings(self, slots: memoryview[int], tf: memoryview[int], start: int, end: int
                  ) -> tuple[list[int], list[int]]:
        """One term's slots and counts, checked as the index checks them."""
        if not 0 <= start <= end <= len(slots):
            raise SavedIndexError("its posting offsets are out of order")
        found, counts = slots[start:end].tolist(), tf[start:end].tolist()
        if found and (min(found) < 0 or max(found) >= self.n_files or min(counts) < 1):
            raise SavedIndexError("its postings name files or counts that do not exist")
        return found, counts


class _Scorer:
    """The scores of the files that can be among a query's best, each to the index's last bit.

    A file's score is :func:`memdir.tools._bm25matrix.score_terms`'s arithmetic,
    one value at a time: each of its terms weighs ``idf * tf / (tf + k1 * (1 - b
    + b * length / avg))``, the float64 operations numpy makes element by element
    in that order, and the weights are summed in the query's term order, as
    ``bincount`` sums them.

    Only files that can reach the best ``k`` are scored (max-score pruning): a
    term's weight is below ``idf * top / (top + k1 * (1 - b))`` for its largest
    count ``top`` (a length is never negative). The files of the term with the
    highest such bound are scored first; the ``k``-th best of them is a floor
    for the final ``k``-th. The terms whose bounds, summed from the smallest,
    stay under that floor cannot lift a file to it on their own, so only files
    holding one of the other terms are scored. Every file left out scores below
    the ``k``-th best, so the best ``k``, and every file tied with the ``k``-th,
    are among those scored.

    Args:
        lengths: Each slot's length in terms.
        avg: The mean length of the live files.
        terms: Each query term holding any file, in query order: its idf and its
            live slots with their counts.
    """

    _MARGIN: Final = 1e-9
    """Relative room left above a sum of bounds for the rounding of the sums themselves."""

    def __init__(self, lengths: list[int], avg: float,
                 terms: list[tuple[float, dict[int, int]]]) -> None:
        self._lengths = lengths
        self._avg = avg
        self._terms = terms
        self._bounds = [weight * top / (top + K1 * (1.0 - B))
                        for weight, table in terms for top in (max(table.values()),)]

    def best(self, k: int, within: _Scope | None = None) -> dict[int, float]:
        """The scores of a set of slots holding the ``k`` best (``within`` a range) and ties."""
        if not self._terms:
            return {}
        tables = [table for _, table in self._terms]
        if len(tables) == 1 and within is None:
            return self._score(set(), tables[0])  # one term: every file holding it
        seed = max(range(len(tables)), key=self._bounds.__getitem__)
        first = _among(tables[seed].keys(), within)
        scores = self._score(first, tables[seed] if within is None else None)
        if len(scores) < k:
            return self._score(_among(set().union(*tables), within))
        floor = heapq.nlargest(k, scores.values())[-1]
        reach = 0.0
        rest: list[dict[int, int]] = []
        for i in sorted(range(len(tables)), key=self._bounds.__getitem__):
            reach += self._bounds[i]
            if reach * (1.0 + self._MARGIN) >= floor and i != seed:
                rest.append(tables[i])
        if rest:
            scores.update(self._score(_among(set().union(*rest), within) - first))
        return scores

    def _score(self, slots: set[int], whole: dict[int, int] | None = None) -> dict[int, float]:
        """The scores of ``slots``, each summed over the query's terms in order.

        ``whole``, if given, is a term's table whose slots are all of ``slots``
        and more (its items are then read as they are, not looked up one by one);
        ``slots`` may then be empty, for the only term.
        """
        length, avg, keep = self._lengths, self._avg, 1.0 - B
        scores: dict[int, float] = {}
        for weight, table in self._terms:
            pairs = table.items() if table is whole else \
                [(slot, table[slot]) for slot in table.keys() & slots]
            term = dict(zip([slot for slot, _ in pairs], [
                weight * count / (count + K1 * (keep + B * length[slot] / avg))
                for slot, count in pairs], strict=True))
            if scores:
                for slot in scores.keys() & term.keys():
                    term[slot] = scores[slot] + term[slot]
            scores.update(term)
        return scores


def _among(slots: Iterable[int], within: _Scope | None) -> set[int]:
    """``slots`` as a set, only those ``within`` the range when one is given."""
    if within is None:
        return set(slots)
    return {slot for slot in slots if slot in within}


def _top(scores: dict[int, float], paths: _Names, k: int) -> list[Hit]:
    """The best ``k`` slots, ties in path order, as :func:`memdir.tools._bm25index._top` picks."""
    # Every slot tied with the k-th best is kept, so that ties break by path below.
    # (The k-th of all scores is the k-th positive one whenever it is positive.)
    if len(scores) > k:
        kth = heapq.nlargest(k, scores.values())[-1]
        kept = list(compress(scores.keys(), map(kth.__le__, scores.values())))  # (in C)
    else:
        kept = list(scores)
    try:
        named = [(-v, paths[s], v) for s in kept if (v := scores[s]) > 0]
    except UnicodeDecodeError:
        raise SavedIndexError("its names are not UTF-8") from None
    return [Hit(path, score) for _, path, score in sorted(named)[:k]]


class _Paths:
    """The saved paths (a NUL-separated blob), each found by its slot without splitting all.

    The blob is cut at a NUL every :data:`_CHUNK` bytes and the NULs of each piece
    are counted (both in C); a path is then looked up in its piece, which is split
    on first use. A search needs the paths of its hits, and of a few more where
    scores tie or a folder's range of slots is searched for by bisection.

    Raises:
        SavedIndexError: The blob does not hold ``count`` paths.
    """

    def __init__(self, blob: bytes, count: int) -> None:
        self._blob = blob
        self._starts = [0]
        """Where each piece begins in the blob."""
        self._firsts = [0]
        """The slot of each piece's first path."""
        at = 0
        while (cut := blob.find(b"\0", at + _CHUNK)) >= 0:
            self._firsts.append(self._firsts[-1] + blob.count(b"\0", at, cut + 1))
            self._starts.append(cut + 1)
            at = cut + 1
        found = self._firsts[-1] + blob.count(b"\0", at) + 1 if blob else 0
        if found != count:
            raise SavedIndexError(f"it lists {found} names where its header says {count}")
        self._count = count
        self._pieces: dict[int, list[bytes]] = {}

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, slot: int) -> bytes:
        if not 0 <= slot < self._count:
            raise IndexError(slot)
        piece = bisect.bisect_right(self._firsts, slot) - 1
        names = self._pieces.get(piece)
        if names is None:
            end = self._starts[piece + 1] - 1 if piece + 1 < len(self._starts) else len(self._blob)
            names = self._pieces[piece] = self._blob[self._starts[piece]: end].split(b"\0")
        return names[slot - self._firsts[piece]]


_CHUNK: Final = 1 << 16


class _Names:
    """Each slot's path: the saved ones, then those of the files read again."""

    def __init__(self, saved: _Paths, added: list[str]) -> None:
        self._saved = saved
        self._added = added

    def __getitem__(self, slot: int) -> str:
        if slot >= len(self._saved):
            return self._added[slot - len(self._saved)]
        return self._saved[slot].decode("utf-8")


class _Scope:
    """The slots of the files under one folder: a range of saved ones and some read again."""

    def __init__(self, saved: range, added: set[int]) -> None:
        self._saved = saved
        self._added = added

    def __contains__(self, slot: object) -> bool:
        return slot in self._saved or slot in self._added


@dataclass(frozen=True, slots=True)
class _Delta:
    """What the paths a record names hold now, against the saved index.

    ``dead`` are the saved slots of files gone or changed; ``names``, ``counts``
    and ``lengths`` describe the files to read again (new or changed), in the
    order the index reads them, each with its term counts and length.
    """

    dead: frozenset[int]
    names: list[str]
    counts: list[dict[str, int]]
    lengths: list[int]

    @classmethod
    def of(cls, store: Store, changed: tuple[str, ...], paths: _Paths,
           fingerprints: list[memoryview[int]], tokenizer: Tokenizer) -> _Delta | None:
        """Walk and read the ``changed`` paths as the index does; None if that is too much.

        As :meth:`memdir.tools._bm25index.FileIndex._compare_at`: every memory
        file at or under a named path is walked; one that is new, or whose
        fingerprint differs from the saved one, is read again; a saved file at
        or under a named path that the walk did not find is gone.
        """
        found: dict[str, tuple[int, int, int, int]] = {}
        stale: set[int] = set()
        for virtual in changed:
            parts = parts_of(virtual)
            if parts is None:
                continue
            found.update(memory_at(store, parts))
            named = to_virtual(parts).encode("utf-8")
            at = bisect.bisect_left(paths, named)
            if at < len(paths) and paths[at] == named:
                stale.add(at)
            prefix = named.rstrip(b"/") + b"/"
            lo = bisect.bisect_left(paths, prefix)
            hi = bisect.bisect_left(paths, prefix[:-1] + b"0", lo)
            if hi - lo > _MAX_STALE:
                return None  # a big folder: the index's arrays compare it sooner
            stale.update(range(lo, hi))
        try:
            dead = {slot for slot in stale if paths[slot].decode("utf-8") not in found}
        except UnicodeDecodeError:
            raise SavedIndexError("its names are not UTF-8") from None
        names: list[str] = []
        for virtual, key in found.items():
            encoded = virtual.encode("utf-8")
            at = bisect.bisect_left(paths, encoded)
            slot = at if at < len(paths) and paths[at] == encoded else None
            if slot is None or tuple(view[slot] for view in fingerprints) != key:
                names.append(virtual)
                if slot is not None:
                    dead.add(slot)
        counted = [tokenizer.counts(index_text(v, read_text(store, v))) for v in names]
        return cls(frozenset(dead), names, [counts for counts, _ in counted],
                   [total for _, total in counted])


_NO_DELTA: Final = _Delta(frozenset(), [], [], [])
_MAX_STALE: Final = 4096
"""Most saved files under one path a record names that are compared here, one by one."""


def _count(header: dict[str, object], key: str) -> int:
    value = header.get(key)
    if type(value) is not int or value < 0:
        raise SavedIndexError(f"its header gives no count of {key}")
    return value
