"""BM25 term weights as a sparse term-by-file matrix, built with numpy in one pass.

The scoring is bm25s's default variant (Lucene's): for a term t in file d,
``idf(t) * tf / (tf + k1 * (1 - b + b * len(d) / avglen))`` with
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``; a query's score for a file is
the sum over its distinct terms. The tests check the scores against bm25s.

Why not bm25s's own index: it builds from per-document Python loops, about 4 s
for 5,000 files (1.6 M tokens) on every rebuild, and the index must be rebuilt
whenever a file changes. Here each file's term counts are computed once and
cached by the caller; a rebuild concatenates the cached arrays and does the
arithmetic vectorised, in about a tenth of a second for 5,000 files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import coo_matrix

__all__ = ["DocTerms", "TermMatrix", "doc_terms"]

_Array = np.ndarray[Any, Any]


@dataclass(frozen=True, slots=True)
class DocTerms:
    """One file's distinct term ids (sorted), their counts, and its length in terms."""

    ids: _Array
    counts: _Array
    length: int


def doc_terms(tokens: Sequence[str], vocab: dict[str, int]) -> DocTerms:
    """Count a file's terms, adding unseen terms to ``vocab``."""
    raw = np.fromiter(
        (vocab.setdefault(t, len(vocab)) for t in tokens), dtype=np.int64, count=len(tokens)
    )
    ids, counts = np.unique(raw, return_counts=True)
    return DocTerms(ids, counts, len(tokens))


class TermMatrix:
    """BM25 weights of every (term, file) pair, stored by term for fast queries.

    Args:
        docs: Each file's terms, in file order.
        n_terms: The size of the vocabulary the ids come from.
        k1: Term-frequency saturation.
        b: Length normalisation.
    """

    def __init__(self, docs: Sequence[DocTerms], n_terms: int, k1: float, b: float) -> None:
        n = len(docs)
        self.n_docs = n
        sizes = np.fromiter((len(d.ids) for d in docs), dtype=np.int64, count=n)
        lengths = np.fromiter((d.length for d in docs), dtype=np.float64, count=n)
        empty = np.zeros(0, dtype=np.int64)
        term = np.concatenate([d.ids for d in docs]) if n else empty
        tf = (np.concatenate([d.counts for d in docs]) if n else empty).astype(np.float64)
        doc = np.repeat(np.arange(n, dtype=np.int64), sizes)
        self.df = np.bincount(term, minlength=n_terms)
        self.idf = np.log1p((n - self.df + 0.5) / (self.df + 0.5))
        avg = float(lengths.mean()) if n and lengths.sum() > 0 else 1.0
        norm = k1 * (1.0 - b + b * lengths / avg)
        weight = self.idf[term] * tf / (tf + norm[doc])
        # One row per term: scipy's conversion is a linear counting sort (an
        # argsort of the term ids would be several times slower).
        by_term = coo_matrix((weight, (term, doc)), shape=(n_terms, n)).tocsr()
        self._rows = by_term.indices
        self._data = by_term.data
        self._indptr = by_term.indptr

    def scores(self, term_ids: Sequence[int]) -> _Array:
        """Each file's score for a query made of these (distinct) term ids."""
        spans = [(self._indptr[t], self._indptr[t + 1]) for t in term_ids if t < len(self.df)]
        if not spans:
            return np.zeros(self.n_docs)
        rows = np.concatenate([self._rows[s:e] for s, e in spans])
        data = np.concatenate([self._data[s:e] for s, e in spans])
        return np.bincount(rows, weights=data, minlength=self.n_docs)
