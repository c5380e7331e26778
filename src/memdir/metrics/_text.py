"""Lexical TF-IDF vectors, identical to scikit-learn's ``TfidfVectorizer`` defaults.

Each text is tokenised once (scikit-learn's own analyzer: lowercase, words of two
or more word characters) and its term counts are cached, so measuring many
snapshots that share most of their text re-weights cached counts instead of
re-reading every text. Weights are those of ``TfidfVectorizer()`` fitted on the
texts given: smoothed idf ``ln((1 + n) / (1 + df)) + 1``, raw term frequency,
rows scaled to unit length. There is no learned component.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy import sparse

__all__ = ["TfidfCache", "cosine_rows"]


class TfidfCache:
    """Term counts per text, kept across calls; builds TF-IDF matrices over any text set.

    Args:
        stop_words: ``"english"`` drops scikit-learn's English stop words (used where
            a check compares a few words, e.g. a description); None keeps every word.
    """

    def __init__(self, stop_words: str | None = None) -> None:
        from sklearn.feature_extraction.text import CountVectorizer  # slow import, deferred

        self._analyze = CountVectorizer(stop_words=stop_words).build_analyzer()
        self._vocab: dict[str, int] = {}
        self._rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _row(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        row = self._rows.get(text)
        if row is None:
            counts = Counter(self._analyze(text))
            columns = sorted(self._vocab.setdefault(t, len(self._vocab)) for t in counts)
            inverse = {self._vocab[t]: c for t, c in counts.items()}
            row = (  # 4-byte columns and counts: the cache holds one row per text it saw
                np.array(columns, dtype=np.int32),
                np.array([inverse[c] for c in columns], dtype=np.float32),
            )
            self._rows[text] = row
        return row

    def matrix(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """Unit-length TF-IDF rows for ``texts`` (idf fitted on these texts only)."""
        rows = [self._row(t) for t in texts]
        n = len(rows)
        indptr = np.zeros(n + 1, dtype=np.int64)
        if n:
            indptr[1:] = np.cumsum([len(r[0]) for r in rows])
        indices = np.concatenate([r[0] for r in rows]) if n else np.zeros(0, np.int32)
        data = np.concatenate([r[1] for r in rows]).astype(np.float64) if n else np.zeros(0)
        width = max(len(self._vocab), 1)
        df = np.bincount(indices, minlength=width)
        idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        data = data * idf[indices]
        row_of = np.repeat(np.arange(n), np.diff(indptr))
        lengths = np.sqrt(np.bincount(row_of, weights=data * data, minlength=n))
        lengths[lengths == 0] = 1.0
        data = data / lengths[row_of]
        return sparse.csr_matrix((data, indices, indptr), shape=(n, width))


def cosine_rows(matrix: sparse.csr_matrix, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Cosine of row pairs ``(left[k], right[k])`` of a unit-row matrix."""
    if len(left) == 0:
        return np.zeros(0)
    products = matrix[left].multiply(matrix[right])
    return np.asarray(products.sum(axis=1)).ravel()
