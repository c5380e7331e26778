"""A BM25 index over a store's files: derived state, kept in step through a change feed.

The files are the truth; the index is a cache of them. Each search first asks
the store's change feed (:mod:`memdir.store._feed`, inotify on Linux) what
changed since the last one, re-reads just those files, and answers: a change
finished before a query is seen by it, whoever made it and whatever it did to
sizes and times, and a query at 100,000 files costs milliseconds. Where the
feed is not live (no inotify), every refresh walks the files and compares each
one's path, inode, size and modification and change times (the change time
cannot be set back), so it is just as exact, only slower.

The compacted index is saved beside the store, in its hidden state folder
(``.memdir/bm25-index.bin``, never visible under ``/memories``; see
:mod:`memdir.tools._bm25file`), written whole and renamed into place after each
compaction; a new process maps it and re-reads only the files whose
fingerprint changed since. A saved file that is damaged, crafted or from
another version is ignored with a logged warning and replaced. A ``memdir
tool`` process lists the store's fingerprints with ``find`` while it imports
(:mod:`memdir.tools._bm25walk`); when that listing equals the saved files
exactly, the index takes it as its first walk, and otherwise walks itself.

What a file's terms are, a term's idf, and which lines a hit shows are
:mod:`memdir.tools._bm25terms`'s (no numpy there), so a search answered without
this index (:mod:`memdir.tools._bm25light`) counts as this one does.

Costs: a refresh grows with the changes since the last one (a walk of every
file without a live feed, and for the first two refreshes: the feed starts
watching at the second, so a process that searches once, one ``memdir tool``
call, pays no watch per folder); a query with the postings of its terms; a
compaction, when changed files pass a twentieth of the store, with the whole
index.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from memdir.store import ROOT, Store
from memdir.store._feed import ChangeFeed
from memdir.store._paths import open_root, to_virtual
from memdir.store._store import STATE_DIR
from memdir.store._tree import memory_files
from memdir.tools._bm25changes import COMPACT_MIN, compact_at, memory_at, parts_of, read_text
from memdir.tools._bm25file import (
    INDEX_FILE,
    Saved,
    SavedIndexError,
    SavedTerms,
    check_order,
    check_postings,
    read_saved,
    write_saved,
)
from memdir.tools._bm25matrix import DocTerms, Segment, doc_terms, merge, score_terms
from memdir.tools._bm25terms import K1, B, Hit, LineMatch, Tokenizer, best_lines, index_text
from memdir.tools._bm25terms import idf as term_idf
from memdir.tools._bm25walk import LISTED, PROOF_FILE, Proof, read_proof, split_for, write_proof
from memdir.tools._bm25walk import parse as parse_listing
from memdir.tools._bm25walk import take as take_listing

if TYPE_CHECKING:
    import logging

__all__ = [
    "INDEX_FILE",
    "PROOF_FILE",
    "FileIndex",
    "Hit",
    "LineMatch",
    "Tokenizer",
    "index_for",
    "index_text",
]

_CACHED_STORES: Final = 8


def _log() -> logging.Logger:
    """This module's logger; ``logging`` is loaded when there is first something to say."""
    import logging

    return logging.getLogger(__name__)


_Key = tuple[int, int, int, int]
"""What says a file is unchanged: inode, modification and change times, size (an edit
moves the change time on, and it cannot be set back)."""
_FP_COLUMNS: Final = 4


class FileIndex:
    """BM25 over every markdown file of one store, kept in step with the files.

    Thread-safe: searches may run in worker threads.

    Args:
        store: The store to index.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        saved: Where to keep the index between processes (None: memory only).
        feed: Learn of changes from the store's change feed (False: walk the files
            on every refresh, as happens anyway where the feed is not live).
        compact_min: Fold changed files into the compacted index once at least this
            many (and a twentieth of the store) changed since the last time.
    """

    def __init__(
        self,
        store: Store,
        *,
        k1: float = K1,
        b: float = B,
        saved: Path | None = None,
        feed: bool = True,
        compact_min: int = COMPACT_MIN,
    ) -> None:
        self.store = store
        self.tokenizer = Tokenizer()
        self.saved = saved
        self._k1 = k1
        self._b = b
        self._compact_min = compact_min
        self._lock = threading.Lock()
        self._feed = ChangeFeed(store.root, lazy=True) if feed else None
        self._reset()
        self._loaded = False
        self.builds = 0
        """Refreshes that changed the index."""
        self.compactions = 0
        self.tokenized = 0
        """Files tokenized by this index (the rest came from the saved file)."""

    def _reset(self) -> None:
        """Forget every file (the next refresh reads them all)."""
        self._vocab: dict[str, int] | SavedTerms = {}
        """Term -> id; as read from the saved file until a term must be added."""
        self._main: Segment | None = None
        self._n_main = 0
        """Slots below this are the compacted segment's, in path order."""
        self._paths: list[str] = []
        self._fp = np.zeros((0, _FP_COLUMNS), dtype=np.int64)
        """Each slot's fingerprint (a :data:`_Key` per row)."""
        self._lengths = np.zeros(0, dtype=np.int64)
        self._alive = np.zeros(0, dtype=bool)
        self._slots: dict[str, int] | None = {}
        """Path -> slot of each live file; None right after a compacted index was installed
        (slot i is then ``paths[i]``, and the mapping is built on first need)."""
        self._order_checked = True
        """Whether the compacted paths are known to be sorted and distinct."""
        self._delta: dict[int, DocTerms] = {}
        self._delta_postings: dict[int, tuple[list[int], list[int]]] | None = {}
        """Term -> slots and counts of delta files, dead ones included (the mask drops
        them); None until rebuilt, after many files were added at once."""
        self._total_length = 0
        self._from_file = False
        """Whether the segment was read from the saved file (its postings are checked)."""
        self._checked: set[int] = set()
        """Terms whose saved postings passed :func:`check_postings` (each is checked once)."""
        self._idf_memo: dict[str, float] = {}
        """Each term's idf as of the last change (a search shows lines for ten hits)."""
        self._identity: tuple[int, ...] = ()
        """The saved file the compacted segment was read from (empty: not read, or changed)."""
        self._record: Proof | None = None
        """What this refresh's listing proved of the saved file, recorded once it is done."""

    def __len__(self) -> int:
        return self._n_live()

    @property
    def _slot_of(self) -> dict[str, int]:
        if self._slots is None:
            self._slots = {p: i for i, p in enumerate(self._paths)}
        return self._slots

    def _n_live(self) -> int:
        return self._n_main if self._slots is None else len(self._slots)

    def _vocab_dict(self) -> dict[str, int]:
        """The vocabulary as a mapping that terms can be added to (built from the file once)."""
        if isinstance(self._vocab, SavedTerms):
            self._vocab = self._vocab.as_dict()
        return self._vocab

    def _term(self, term: str) -> int | None:
        return self._vocab.get(term)

    @property
    def live(self) -> bool:
        """Whether changes come from a live feed (False: each refresh walks the files)."""
        return self._feed is not None and self._feed.live

    @property
    def paths(self) -> list[str]:
        """The indexed files, in path order (as of the last refresh)."""
        return sorted(self._slot_of)

    def close(self) -> None:
        """Stop following the files (the index keeps answering as of now)."""
        if self._feed is not None:
            self._feed.close()

    def refresh(self) -> bool:
        """Bring the index in step with the files; return whether anything changed."""
        with self._lock:
            try:
                return self._refresh()
            except SavedIndexError as exc:  # found while taking up the saved index
                self._distrust(exc)
                return True

    # -- keeping in step -----------------------------------------------------------

    def _refresh(self) -> bool:
        self._record = None  # (one left by a refresh that raised is not this one's)
        first = not self._loaded
        if first:
            self._loaded = True
            if self.saved is not None:
                self._load(self.saved)
        changes = self._feed.poll() if self._feed is not None else None
        if changes is not None and changes.none:
            return False
        if changes is None or changes.everything:
            todo, gone = self._compare_all()
        else:
            todo, gone = self._compare_at(changes.paths)
        changed = first and self._main is not None  # a saved index was taken up
        for virtual in gone:
            self._drop(virtual)
            changed = True
        # Many files at once (a first build, a big change): they are folded into the
        # compacted index right away, so per-term lists for the delta are not kept.
        bulk = len(todo) >= self._compact_at()
        if bulk:
            self._delta_postings = None
        for virtual, key in todo:
            self._add(virtual, key)
            changed = True
        if changed:
            self.builds += 1
            self._idf_memo.clear()
            if self._main is None or self._churn() >= self._compact_at():
                self._compact()
        record, self._record = self._record, None
        if record is not None and self._identity:  # still the saved index, changed or not
            self._write_proof(record)
        return changed or first

    def _compact_at(self) -> float:
        return compact_at(self._n_live(), self._compact_min)

    def _churn(self) -> int:
        """Slots past the compacted ones, and compacted slots whose file changed or went."""
        live_main = self._n_live() - len(self._delta)
        return len(self._paths) - live_main

    def _walk(self, parts: tuple[str, ...]) -> dict[str, _Key]:
        """The memory files at or under ``parts`` now, with their fingerprints."""
        return memory_at(self.store, parts)

    def _compare_at(self, changed: Iterable[tuple[str, ...]]
                    ) -> tuple[list[tuple[str, _Key]], list[str]]:
        """Walk only these paths (files, or folders and all below them).

        Returns:
            The memory files found there to (re)read, with their fingerprints, and
            the indexed files at or below them that are gone.
        """
        self._check_order()
        found: dict[str, _Key] = {}
        stale: set[str] = set()
        for parts in changed:
            found.update(self._walk(parts))
            stale.update(self._indexed_under(to_virtual(parts)))
        gone = list(stale - found.keys())
        fp = self._fp
        todo = [(v, key) for v, key in found.items()
                if (slot := self._slot_of.get(v)) is None
                or tuple(fp[slot].tolist()) != key]
        return todo, gone

    def _compare_all(self) -> tuple[list[tuple[str, _Key]], list[str]]:
        """Walk every file: the ones to (re)read with their fingerprints, and the ones gone.

        The walk is sorted by path; where it finds exactly the compacted files (a
        new process over an unchanged set of files, the usual case), slot i is walked
        file i and the fingerprints are compared as two arrays, with no lookup per
        file. Otherwise each walked path is looked up. Either way the only work per
        unchanged file is its ``lstat`` and its part of the comparison. A listing
        started with the process (:meth:`_check_listing`) can stand in for the
        walk when it proves which files changed (none, usually).
        """
        listed = self._check_listing()
        if isinstance(listed, tuple):
            # Only the files the proof names can differ from the saved ones.
            return self._compare_at(p for v in listed if (p := parts_of(v)) is not None)
        try:
            root_fd = open_root(self.store.root)
        except OSError:
            return [], list(self._slot_of)
        try:
            walked = memory_files(root_fd, self.store.names)
        except OSError:
            walked = []
        finally:
            os.close(root_fd)
        walked.sort(key=_first)
        n = len(walked)
        virtuals = [v for v, _ in walked]
        fp = np.array([x for _, st in walked
                       for x in (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)],
                      dtype=np.int64).reshape(n, _FP_COLUMNS)
        if n == self._n_main == len(self._paths) == self._n_live() and not self._delta \
                and virtuals == self._paths:
            self._order_checked = True  # the walk, sorted, holds the same distinct paths
            changed = np.flatnonzero((self._fp[:n] != fp).any(axis=1)).tolist()
            todo = [(virtuals[i], _key(fp[i])) for i in changed]
            gone: list[str] = []
        else:
            self._check_order()
            get = self._slot_of.get
            slots = np.fromiter((get(v, -1) for v in virtuals), dtype=np.int64, count=n)
            known = np.flatnonzero(slots >= 0)
            same = np.zeros(n, dtype=bool)
            same[known] = (self._fp[slots[known]] == fp[known]).all(axis=1)
            todo = [(virtuals[i], _key(fp[i])) for i in np.flatnonzero(~same).tolist()]
            seen = np.zeros(len(self._paths), dtype=bool)
            seen[slots[known]] = True
            gone = [self._paths[s] for s in
                    np.flatnonzero(self._alive[: len(self._paths)] & ~seen).tolist()]
        if listed is not None and _same_files(listed.parsed, virtuals, fp):
            # The walk found what the listing lists: that listing, wherever it is made
            # again, means these changes to the saved index and no other.
            differ = tuple(sorted({v for v, _ in todo}.union(gone)))
            self._record = Proof(listed.digest, differ, listed.split)
        return todo, gone

    def _check_listing(self) -> tuple[str, ...] | _Listed | None:
        """What a listing started with the process (:mod:`._bm25walk`) proves, if anything.

        Returns:
            The paths that may differ from the saved index (none: the store is
            unchanged) when the listing is proof of it: it is byte for byte one
            recorded for this very saved file (:func:`._bm25walk.read_proof`), or
            it holds exactly the compacted files with their saved fingerprints
            (the saved paths are then also checked to be in order, and the
            listing's digest is recorded). Otherwise the parsed listing, for the
            caller to compare with its own walk (None when there is no listing,
            it failed, or it is not in the expected form). A listing is used once.
        """
        suffixes = self.store.names.suffixes
        listing = take_listing(str(self.store.root), suffixes)
        if listing is None:
            return None
        output = listing.output()
        n = self._n_main
        if output is None or self._delta or not self._identity \
                or not n == len(self._paths) == self._n_live():
            return None
        # A listing byte for byte the same as one already checked against this very
        # saved file proves what that check proved, without reading a number of it.
        listed = listing.digest()
        if listed is None:
            return None
        proof = read_proof(self._proof_file, self._identity)
        if proof is not None and proof.digest == listed:
            self._order_checked = True  # checked before that record was written
            return proof.changed
        found = parse_listing(*output)
        if found is None:
            return None
        virtuals, fp = found
        if len(virtuals) == n:
            # Pair each listed file with the saved slot of the same inode (both sides
            # sorted by inode), then ask that every pair agree on path and fingerprint.
            # Files that share an inode (hard links) may pair up crosswise; their paths
            # then differ and the caller's own walk decides.
            listed_order = np.argsort(fp[:, 0], kind="stable")
            saved = np.argsort(self._fp[:n, 0], kind="stable")
            paths = self._paths
            if np.array_equal(self._fp[saved][:, LISTED], fp[listed_order]) \
                    and list(map(virtuals.__getitem__, listed_order.tolist())) \
                    == list(map(paths.__getitem__, saved.tolist())):
                self._check_order()
                # The next listing is split as suits this index; until one is made so,
                # its digest differs from this one and it is paired again, once.
                self._record = Proof(listed, (), split_for(paths, listing.split))
                return ()
        return _Listed(listed, found, listing.split)

    @property
    def _proof_file(self) -> str:
        return str(self.saved.parent / PROOF_FILE) if self.saved is not None else ""

    def _write_proof(self, record: Proof) -> None:
        """Record what this process's listing proved of the saved index, for the next one."""
        if not self._proof_file or len(record.changed) >= self._compact_at():
            return  # a change that big is compacted into a new saved index instead
        try:
            write_proof(self._proof_file, self._identity, record)
        except (OSError, ValueError) as exc:  # a read-only state folder: each process checks
            _log().debug("could not record the listing's digest in %s (%s)",
                       self._proof_file, exc)

    def _indexed_under(self, virtual: str) -> list[str]:
        """Indexed paths equal to ``virtual`` or below it."""
        found = [virtual] if virtual in self._slot_of else []
        prefix = virtual.rstrip("/") + "/"
        lo, hi = self._main_range(prefix)
        found += [p for p in self._paths[lo:hi] if self._slot_of.get(p) is not None]
        found += [self._paths[s] for s in self._delta if self._paths[s].startswith(prefix)]
        return found

    def _drop(self, virtual: str) -> None:
        slot = self._slot_of.pop(virtual)
        self._alive[slot] = False
        self._total_length -= int(self._lengths[slot])
        self._delta.pop(slot, None)

    def _add(self, virtual: str, key: _Key) -> None:
        if virtual in self._slot_of:
            self._drop(virtual)
        text = read_text(self.store, virtual)
        terms = doc_terms(*self.tokenizer.counts(index_text(virtual, text)), self._vocab_dict())
        self.tokenized += 1
        slot = len(self._paths)
        self._paths.append(virtual)
        if slot >= len(self._alive):
            grow = max(64, len(self._alive))
            self._alive = np.concatenate([self._alive, np.zeros(grow, dtype=bool)])
            self._lengths = np.concatenate([self._lengths, np.zeros(grow, dtype=np.int64)])
            self._fp = np.concatenate([self._fp, np.zeros((grow, _FP_COLUMNS), dtype=np.int64)])
        self._fp[slot] = key
        self._alive[slot] = True
        self._lengths[slot] = terms.length
        self._total_length += terms.length
        self._slot_of[virtual] = slot
        self._delta[slot] = terms
        if self._delta_postings is not None:
            _extend(self._delta_postings, slot, terms)

    def _compact(self) -> None:
        """Fold the delta into the segment: live files only, slots renumbered in path order."""
        order = sorted(self._slot_of)
        renumber = np.full(max(self._n_main, 1), -1, dtype=np.int32)
        added: list[tuple[int, DocTerms]] = []
        for new, virtual in enumerate(order):
            old = self._slot_of[virtual]
            if old < self._n_main:
                renumber[old] = new
            else:
                added.append((new, self._delta[old]))
        segment = merge(self._main, renumber[: self._n_main], added, len(self._vocab),
                        len(order))
        old_slots = np.array([self._slot_of[v] for v in order], dtype=np.int64)
        self._install(order, self._fp[old_slots], self._lengths[old_slots], segment)
        self._from_file = False
        self.compactions += 1
        if self.saved is not None:
            self._save(self.saved)

    def _install(self, paths: list[str], fp: Any, lengths: Any, segment: Segment) -> None:
        n = len(paths)
        self._main = segment
        self._n_main = n
        self._paths = list(paths)
        self._fp = np.array(fp, dtype=np.int64).reshape(n, _FP_COLUMNS)
        self._lengths = np.array(lengths, dtype=np.int64)
        self._alive = np.ones(n, dtype=bool)
        self._slots = None
        self._order_checked = True
        self._delta = {}
        self._delta_postings = {}
        self._total_length = int(self._lengths.sum())
        self._checked = set()
        self._idf_memo = {}
        self._identity = ()

    # -- saving --------------------------------------------------------------------

    def _save(self, target: Path) -> None:
        """Write the compacted index to ``target`` whole (temporary file, then rename)."""
        if self._main is None or self._delta:
            return
        fp = self._fp[: len(self._paths)]
        saved = Saved(
            stemmer=self.tokenizer.stemmer,
            vocab=list(self._vocab_dict()),
            paths=self._paths,
            segment=self._main,
            lengths=self._lengths,
            ino=fp[:, 0],
            mtime_ns=fp[:, 1],
            ctime_ns=fp[:, 2],
            size=fp[:, 3],
        )
        try:
            write_saved(target, saved)
        except OSError as exc:
            _log().warning("could not save the search index to %s (%s); it is rebuilt "
                         "in memory on each start", target, exc)

    def _load(self, source: Path) -> None:
        """Take the index saved in ``source``, or ignore it (with a warning) if unusable."""
        try:
            saved = read_saved(source, self.tokenizer.stemmer)
        except (OSError, SavedIndexError) as exc:
            _log().warning("ignoring the saved search index %s (%s); rebuilding it", source, exc)
            return
        if saved is None:
            return
        fp = np.stack([saved.ino, saved.mtime_ns, saved.ctime_ns, saved.size], axis=1)
        self._install(saved.paths, fp, saved.lengths, saved.segment)
        self._vocab = saved.vocab if isinstance(saved.vocab, SavedTerms) \
            else {term: i for i, term in enumerate(saved.vocab)}
        self._from_file = True
        self._order_checked = False  # checked by the first walk, or by check_order
        self._identity = saved.identity

    def _check_order(self) -> None:
        if not self._order_checked:
            check_order(self._paths[: self._n_main])
            self._order_checked = True

    # -- answering -----------------------------------------------------------------

    def _main_range(self, prefix: str) -> tuple[int, int]:
        """The compacted slots whose paths start with ``prefix`` (which ends in '/')."""
        paths = self._paths
        lo = bisect.bisect_left(paths, prefix, 0, self._n_main)
        hi = bisect.bisect_left(paths, prefix[:-1] + chr(ord("/") + 1), lo, self._n_main)
        return lo, hi

    def _postings(self, term: int) -> tuple[Any, Any]:
        """The live slots holding ``term`` and its counts there (segment, then delta)."""
        slots, counts = self._main.postings(term) if self._main is not None else (_NONE, _NONE)
        if self._from_file and term not in self._checked:
            check_postings(slots, counts, self._n_main)
            self._checked.add(term)
        if len(slots) and self._n_main > self._n_live() - len(self._delta):
            keep = self._alive[slots]  # some compacted files were changed or removed
            slots, counts = slots[keep], counts[keep]
        if self._delta_postings is None:
            self._delta_postings = {}
            for slot, terms in self._delta.items():
                _extend(self._delta_postings, slot, terms)
        extra = self._delta_postings.get(term)
        if extra is not None:
            more = np.array(extra[0], dtype=np.int32)
            more_counts = np.array(extra[1], dtype=np.int32)
            keep = self._alive[more]
            slots = np.concatenate([slots, more[keep]])
            counts = np.concatenate([counts.astype(np.int32), more_counts[keep]])
        return slots, counts

    def search(self, query: str | Sequence[str], k: int, under: str = ROOT) -> list[Hit]:
        """The ``k`` best files for ``query`` at or below ``under``, best first.

        Files that share no term with the query are never returned. Ties keep
        path order. Call :meth:`refresh` first for results that reflect the files
        as they are now (the tools do).

        Args:
            query: The query text, or its terms already tokenized.
            k: How many files at most.
            under: A folder (virtual path) that limits the search.
        """
        with self._lock:
            try:
                return self._search(query, k, under)
            except SavedIndexError as exc:
                self._distrust(exc)
                return self._search(query, k, under)

    def _distrust(self, problem: SavedIndexError) -> None:
        """Drop an index read from a damaged file and build it again from the files."""
        _log().warning("ignoring the saved search index %s (%s); rebuilding it",
                     self.saved, problem)
        self._reset()
        if self._feed is not None:  # a new feed: its first poll says "everything"
            self._feed.close()
            self._feed = ChangeFeed(self.store.root)
        self._refresh()

    def _search(self, query: str | Sequence[str], k: int, under: str) -> list[Hit]:
        n_live = self._n_live()
        if not n_live:
            return []
        terms = self.tokenizer(query) if isinstance(query, str) else list(query)
        ids = [i for t in dict.fromkeys(terms) if (i := self._term(t)) is not None]
        n_slots = len(self._paths)
        avg = self._total_length / n_live if self._total_length > 0 else 1.0
        scores = score_terms([self._postings(t) for t in ids], self._lengths, n_live,
                             avg, n_slots, self._k1, self._b)
        if under != ROOT:
            prefix = under.rstrip("/") + "/"
            mask = np.zeros(n_slots, dtype=bool)
            lo, hi = self._main_range(prefix)
            mask[lo:hi] = True
            for slot in self._delta:
                mask[slot] = self._paths[slot].startswith(prefix)
            scores = np.where(mask, scores, 0.0)
        return _top(scores, self._paths, k)

    def idf(self, term: str) -> float:
        """A term's inverse document frequency (0 for a term no file contains)."""
        with self._lock:
            try:
                return self._idf(term)
            except SavedIndexError as exc:
                self._distrust(exc)
                return self._idf(term)

    def _idf(self, term: str) -> float:
        found = self._idf_memo.get(term)
        if found is not None:
            return found
        i = self._term(term)
        if i is None:
            return 0.0
        df = len(self._postings(i)[0])
        found = self._idf_memo[term] = term_idf(self._n_live(), df) if df else 0.0
        return found

    def best_lines(self, text: str, query: str, limit: int = 3) -> list[LineMatch]:
        """The lines of ``text`` that share the most (rarest) terms with ``query``.

        Args:
            text: A whole file.
            query: The query text.
            limit: How many lines at most, returned in file order.
        """
        return best_lines(self.tokenizer, self.idf, text, query, limit)


_NONE: Final = np.zeros(0, dtype=np.int32)


@dataclass(frozen=True, slots=True)
class _Listed:
    """A listing that proved nothing by itself: its digest and what it lists."""

    digest: str
    parsed: tuple[list[str], np.ndarray[Any, Any]]
    split: tuple[str, ...]
    """How it was made (:attr:`memdir.tools._bm25walk.Listing.split`)."""


def _same_files(listed: tuple[list[str], np.ndarray[Any, Any]], virtuals: list[str],
                fp: np.ndarray[Any, Any]) -> bool:
    """Whether a listing holds exactly the walked files (``virtuals``, distinct) and fingerprints.

    Each listed path is looked up among the walked ones; the listing holds them
    all when every one is found and no two are the same walked file. A listing's
    fingerprints have the columns :data:`._bm25walk.LISTED` of the walk's.
    """
    paths, rows = listed
    n = len(virtuals)
    if len(paths) != n:
        return False
    at = dict(zip(virtuals, range(n), strict=True))
    where = np.fromiter((at.get(p, -1) for p in paths), dtype=np.int64, count=n)
    if n and (int(where.min()) < 0 or int(np.bincount(where, minlength=n).max()) != 1):
        return False
    return bool(np.array_equal(fp[where][:, LISTED], rows))


def _first(item: tuple[str, os.stat_result]) -> str:
    return item[0]


def _key(row: np.ndarray[Any, Any]) -> _Key:
    a, b, c, d = row.tolist()
    return int(a), int(b), int(c), int(d)


def _extend(postings: dict[int, tuple[list[int], list[int]]], slot: int, terms: DocTerms) -> None:
    for term, count in zip(terms.ids.tolist(), terms.counts.tolist(), strict=True):
        entry = postings.setdefault(term, ([], []))
        entry[0].append(slot)
        entry[1].append(count)


def _top(scores: np.ndarray[Any, Any], paths: list[str], k: int) -> list[Hit]:
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return []
    if positive.size > k:
        # Keep every file tied with the k-th best, so ties break by path below.
        kth = -np.partition(-scores[positive], k - 1)[k - 1]
        positive = positive[scores[positive] >= kth]
    order = sorted(positive.tolist(), key=lambda i: (-float(scores[i]), paths[i]))[:k]
    return [Hit(paths[i], float(scores[i])) for i in order]


_INDEXES: OrderedDict[Path, FileIndex] = OrderedDict()
_INDEXES_LOCK = threading.Lock()


def index_for(store: Store) -> FileIndex:
    """The shared index of a store's root (one per root, the last few roots kept)."""
    with _INDEXES_LOCK:
        index = _INDEXES.get(store.root)
        if index is None:
            index = FileIndex(store, saved=store.root / STATE_DIR / INDEX_FILE)
            _INDEXES[store.root] = index
            while len(_INDEXES) > _CACHED_STORES:
                _INDEXES.popitem(last=False)[1].close()
        _INDEXES.move_to_end(store.root)
        return index
