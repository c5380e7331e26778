"""BM25 over postings that change: a compacted segment plus a small delta, scored on demand.

The scoring is bm25s's default variant (Lucene's): for a term t in file d,
``idf(t) * tf / (tf + k1 * (1 - b + b * len(d) / avglen))`` with
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``; a query's score for a file is
the sum over its distinct terms. The tests check the scores against bm25s.

Files live in *slots*. The compacted segment holds, for each term, the slots
containing it and their term counts (a CSR matrix by term, kept in memory or
mapped from the saved index); its slots are in path order, so a folder is a
contiguous range of them. A file added or changed since the last compaction
gets a new slot in the delta (its term counts kept per file), and its old slot
is marked dead. Nothing global is precomputed: ``df``, ``N`` and the mean
length are taken from the live slots when a query is scored, so an edit costs
in proportion to the edited file, and a query in proportion to the postings of
its own terms. Compaction (when the delta grows past a share of the store)
rewrites the segment in one vectorised pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memdir.tools._bm25terms import idf as term_idf

__all__ = ["DocTerms", "Segment", "doc_terms", "merge", "score_terms"]

_Array = np.ndarray[Any, Any]


@dataclass(frozen=True, slots=True)
class DocTerms:
    """One file's distinct term ids (sorted), their counts, and its length in terms."""

    ids: _Array
    counts: _Array
    length: int


def doc_terms(counts: Mapping[str, int], length: int, vocab: dict[str, int]) -> DocTerms:
    """A file's terms from their counts, adding unseen terms to ``vocab``."""
    ids = np.fromiter((vocab.setdefault(t, len(vocab)) for t in counts), dtype=np.int32,
                      count=len(counts))
    tf = np.fromiter(counts.values(), dtype=np.int32, count=len(counts))
    order = np.argsort(ids)
    return DocTerms(ids[order], tf[order], length)


@dataclass(frozen=True, slots=True)
class Segment:
    """Postings by term: the slots of term ``t`` are ``slots[indptr[t]:indptr[t + 1]]``."""

    indptr: _Array
    """int64, one more than the terms it covers."""
    slots: _Array
    """int32 slot numbers."""
    tf: _Array
    """Term counts (uint16 when they all fit, else int32)."""

    @property
    def n_terms(self) -> int:
        """How many terms the segment covers (later terms have no postings here)."""
        return len(self.indptr) - 1

    def postings(self, term: int) -> tuple[_Array, _Array]:
        """The slots holding ``term`` and its counts there."""
        if term >= self.n_terms:
            return _EMPTY_I, _EMPTY_I
        start, end = int(self.indptr[term]), int(self.indptr[term + 1])
        return self.slots[start:end], self.tf[start:end]


_EMPTY_I: _Array = np.zeros(0, dtype=np.int32)


def build(
    terms: _Array, slots: _Array, tf: _Array, n_terms: int, n_slots: int
) -> Segment:
    """A segment from (term, slot, count) triplets, in one counting sort."""
    from scipy.sparse import coo_matrix  # only a compaction needs it: not loaded to search

    matrix = coo_matrix(
        (tf.astype(np.int64), (terms.astype(np.int64), slots.astype(np.int64))),
        shape=(max(n_terms, 0), max(n_slots, 0)),
    ).tocsr()
    counts = matrix.data
    dtype = np.uint16 if counts.size == 0 or int(counts.max()) <= 0xFFFF else np.int32
    return Segment(matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32),
                   counts.astype(dtype))


def merge(
    main: Segment | None,
    renumber: _Array,
    added: Sequence[tuple[int, DocTerms]],
    n_terms: int,
    n_slots: int,
) -> Segment:
    """The segment holding ``main``'s live postings and the ``added`` files.

    Args:
        main: The current segment (None: none yet).
        renumber: For each slot of ``main``, its new slot, or -1 if it is dead.
        added: (new slot, terms) of each file from the delta.
        n_terms: The vocabulary size.
        n_slots: How many slots the new segment has.
    """
    parts_t: list[_Array] = []
    parts_s: list[_Array] = []
    parts_c: list[_Array] = []
    if main is not None and len(main.slots):
        term_of = np.repeat(np.arange(main.n_terms, dtype=np.int32), np.diff(main.indptr))
        new = renumber[main.slots]
        keep = new >= 0
        parts_t.append(term_of[keep])
        parts_s.append(new[keep].astype(np.int32))
        parts_c.append(main.tf[keep].astype(np.int32))
    for slot, doc in added:
        parts_t.append(doc.ids)
        parts_s.append(np.full(len(doc.ids), slot, dtype=np.int32))
        parts_c.append(doc.counts)
    if not parts_t:
        return build(_EMPTY_I, _EMPTY_I, _EMPTY_I, n_terms, n_slots)
    return build(np.concatenate(parts_t), np.concatenate(parts_s), np.concatenate(parts_c),
                 n_terms, n_slots)


def score_terms(
    term_postings: Sequence[tuple[_Array, _Array]],
    lengths: _Array,
    n_live: int,
    avg_length: float,
    n_slots: int,
    k1: float,
    b: float,
) -> _Array:
    """Each slot's BM25 score for a query, from each query term's live postings.

    Args:
        term_postings: For each distinct query term, the live slots holding it and
            their counts (main and delta together).
        lengths: Each slot's length in terms.
        n_live: How many files are live (N).
        avg_length: Their mean length.
        n_slots: The size of the score vector.
        k1: Term-frequency saturation.
        b: Length normalisation.
    """
    rows: list[_Array] = []
    weights: list[_Array] = []
    for slots, counts in term_postings:
        if not len(slots):
            continue
        df = len(slots)
        idf = term_idf(n_live, df)  # a Python float: the bits every other caller gets
        tf = counts.astype(np.float64)
        norm = k1 * (1.0 - b + b * lengths[slots] / avg_length)
        rows.append(slots)
        weights.append(idf * tf / (tf + norm))
    if not rows:
        return np.zeros(n_slots)
    return np.bincount(np.concatenate(rows), weights=np.concatenate(weights),
                       minlength=n_slots)
