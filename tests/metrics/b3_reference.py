"""Main's dense B3 kernel (before the bound), kept as a test oracle for ``memdir.metrics._b3``.

The same arithmetic as ``_b3`` in ``memdir/metrics/_taxonomy.py`` at e75ebb2: the
256 terms most groups hold through a dense product, the rest through a sparse
one, units in blocks; it returns arrays instead of ``Leak`` records.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

HEAD_TERMS = 256
ROWS_PER_BLOCK = 2048


def _head_terms(sums: sparse.csr_matrix, count: int) -> np.ndarray:
    held = np.bincount(sums.indices, minlength=sums.shape[1])
    count = min(count, int(np.count_nonzero(held)))
    return np.sort(np.argsort(-held, kind="stable")[:count])


def dense_nearest_other(matrix: sparse.csr_matrix, groups: np.ndarray, sums: sparse.csr_matrix,
                        chosen: np.ndarray, eps: float
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per chosen unit: own cosine, the nearest other group (argmax) and its cosine."""
    del eps  # every pair is computed
    count = sums.shape[0]
    lengths = np.sqrt(np.asarray(sums.multiply(sums).sum(axis=1)).ravel())
    scale = np.divide(1.0, lengths, out=np.zeros_like(lengths), where=lengths > 0)
    head = _head_terms(sums, HEAD_TERMS)
    dense_head = sums[:, head].toarray().T  # terms x groups
    in_head = np.zeros(sums.shape[1], bool)
    in_head[head] = True
    tail = sums.tocsc()
    tail = tail[:, np.flatnonzero(~in_head)].T.tocsr()  # tail terms x groups
    tail_terms = np.flatnonzero(~in_head)
    block_rows = max(1, min(ROWS_PER_BLOCK, 4_000_000 // count))
    own_all = np.empty(len(chosen))
    best_all = np.empty(len(chosen), np.int64)
    other_all = np.empty(len(chosen))
    for start in range(0, len(chosen), block_rows):
        picked = chosen[start : start + block_rows]
        rows = matrix[picked]
        block = rows[:, head].toarray() @ dense_head
        block += (rows[:, tail_terms] @ tail).toarray()
        block *= scale
        own_cols = groups[picked]
        at = np.arange(len(picked))
        own = block[at, own_cols]
        block[at, own_cols] = -np.inf
        best = block.argmax(axis=1)
        own_all[start : start + len(picked)] = own
        best_all[start : start + len(picked)] = best
        other_all[start : start + len(picked)] = block[at, best]
    return own_all, best_all, other_all
