"""B3's kernel: each chosen unit's cosine with its own centroid and with the nearest other one.

A centroid is a group's sum of unit rows scaled to unit length, so a unit's
cosine with group ``g`` is ``(u . s_g) * scale_g``. Groups are taken in blocks
(about :data:`CELLS` unit-group pairs at once) and every chosen unit is met in
each block, so no unit-by-group array of all groups is ever held.

The terms most groups hold (the head, 256 of them) make a dense product over
every pair expensive, so their part is first bounded instead of computed. The
head is cut into blocks of :data:`HEAD_BLOCK` terms; in each, both vectors are
split along ``q``, the block's mean centroid direction (unit length, no negative
weight), and by Cauchy-Schwarz on what is orthogonal to ``q``::

    u_b . s_b = (u_b . q)(s_b . q) + u_b' . s_b' <= (u_b . q)(s_b . q) + |u_b'| |s_b'|

Every pair's bound is then one small product (two numbers per block). The rest
of the terms (the tail) go through an exact sparse product. A pair whose tail
plus head bound, scaled, stays below the unit's own cosine by more than
:data:`MARGIN` (far above rounding error) cannot leak; the pairs left, few, get
their head part exactly. Own cosines and the survivors' cosines come from the
same code (:func:`_exact`), so equal centroids give equal floats.

Cost: a sparse product over the tail terms, a product of ``2 * 256 / 8``
numbers per unit-group pair and the survivors' head terms; memory: one block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

__all__ = ["CELLS", "HEAD_BLOCK", "HEAD_TERMS", "MARGIN", "NearestOther", "nearest_other"]

HEAD_TERMS = 256
"""Terms held by the most groups, whose part of each pair is bounded before it is computed."""
HEAD_BLOCK = 8
"""Head terms per bound block (the bound's cost per pair is two numbers per block)."""
MARGIN = 1e-9
"""How far below a unit's own cosine a bound must stay for its pair to be skipped."""
CELLS = 2_000_000
"""Unit-group pairs held at once."""


@dataclass(frozen=True, slots=True)
class NearestOther:
    """Per chosen unit: its own cosine and, where it may leak, the nearest other group.

    ``other[k]`` is exact (and ``best[k]`` its group) whenever some other group
    comes within :data:`MARGIN` of the unit's own cosine; otherwise ``best[k]`` is
    -1 and ``other[k]`` is -inf (every other cosine is then proven lower).
    """

    own: np.ndarray
    best: np.ndarray
    other: np.ndarray
    survivors: int
    """Unit-group pairs whose bound did not clear them (computed exactly)."""


def _head_order(sums: sparse.csr_matrix, count: int) -> np.ndarray:
    """The ``count`` terms held by the most groups, most held first (ties by term id)."""
    held = np.bincount(sums.indices[: sums.nnz], minlength=sums.shape[1])
    count = min(count, int(np.count_nonzero(held)))
    return np.argsort(-held, kind="stable")[:count]


def _dense_head(rows: sparse.csr_matrix, head: np.ndarray, width: int) -> np.ndarray:
    """Rows' head columns as a dense array, zero-padded to ``width`` columns."""
    out = np.zeros((rows.shape[0], width))
    out[:, : len(head)] = rows[:, head].toarray()
    return out


def _features(dense: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per row and head block: the part along ``q`` and the length of what is left."""
    blocks = dense.reshape(dense.shape[0], q.shape[0], q.shape[1])
    along = np.einsum("rbk,bk->rb", blocks, q)
    rest = blocks - along[:, :, None] * q[None, :, :]
    return np.concatenate([along, np.sqrt(np.einsum("rbk,rbk->rb", rest, rest))], axis=1)


def _scales(sums: sparse.csr_matrix, span: int) -> np.ndarray:
    """One over each group sum's length (0 for an empty sum), ``span`` groups at a time."""
    lengths = np.empty(sums.shape[0])
    for start in range(0, sums.shape[0], span):
        block = sums[start : start + span]
        lengths[start : start + span] = np.sqrt(np.asarray(block.multiply(block).sum(axis=1))
                                                .ravel())
    return np.divide(1.0, lengths, out=np.zeros_like(lengths), where=lengths > 0)


def _exact(head_u: np.ndarray, head_g: np.ndarray, tail: np.ndarray, scale: np.ndarray
           ) -> np.ndarray:
    """Cosines of pairs from their dense head rows, their exact tail part and group scale."""
    out: np.ndarray = ((head_u * head_g).sum(axis=1) + tail) * scale
    return out


def nearest_other(matrix: sparse.csr_matrix, groups: np.ndarray, sums: sparse.csr_matrix,
                  chosen: np.ndarray, eps: float, *, cells: int = CELLS) -> NearestOther:
    """Own cosine of each chosen unit and the nearest other centroid of those that may leak.

    Args:
        matrix: Unit rows (unit length, no negative weight).
        groups: Each unit's group (a row of ``sums``).
        sums: Each group's sum of unit rows.
        chosen: The units to compare, as rows of ``matrix``.
        eps: A unit leaks when another cosine beats its own by more than this;
            pairs that cannot are skipped.
        cells: About how many unit-group pairs to hold at once (groups per block:
            ``cells // len(chosen)``, at least one).
    """
    n, count = len(chosen), sums.shape[0]
    scale = _scales(sums, max(1, cells // max(n, 1)))
    head = _head_order(sums, HEAD_TERMS)
    width = -(-len(head) // HEAD_BLOCK) * HEAD_BLOCK
    mean = np.zeros(width)
    mean[: len(head)] = np.asarray(sums.T @ scale).ravel()[head]
    q = mean.reshape(-1, HEAD_BLOCK)
    norms = np.linalg.norm(q, axis=1, keepdims=True)
    q = np.divide(q, norms, out=np.zeros_like(q), where=norms > 0)

    rows = matrix[chosen]
    head_u = _dense_head(rows, head, width)
    feat_u = _features(head_u, q)
    in_head = np.zeros(matrix.shape[1], bool)
    in_head[head] = True
    rows.data[in_head[rows.indices]] = 0.0  # rows is a copy; keep only the tail terms
    rows.eliminate_zeros()
    tail_t = rows.T.tocsr()  # tail terms x units

    own_g = groups[chosen]
    own_rows = sums[own_g]
    own_rows.sort_indices()
    own_tail = np.asarray(rows.multiply(own_rows).sum(axis=1)).ravel()
    limit = _exact(head_u, _dense_head(own_rows, head, width), own_tail, scale[own_g]) \
        + eps - MARGIN  # own cosine, less the margin: a pair must exceed this to be kept
    del own_rows

    own = np.full(n, np.nan)
    best = np.full(n, -1, np.int64)
    other = np.full(n, -np.inf)
    survivors = 0
    span = max(1, cells // max(n, 1))
    for start in range(0, count, span):
        block = sums[start : start + span]
        block.sort_indices()
        head_g = _dense_head(block, head, width)
        tail = (block @ tail_t).toarray()  # groups x units, exact
        bound = _features(head_g, q) @ feat_u.T
        bound += tail
        bound *= scale[start : start + span, None]
        local = own_g - start
        here = np.flatnonzero((local >= 0) & (local < block.shape[0]))
        own[here] = _exact(head_u[here], head_g[local[here]], tail[local[here], here],
                           scale[own_g[here]])
        bound[local[here], here] = -np.inf
        g, u = np.divmod(np.flatnonzero(bound > limit), n)
        survivors += len(g)
        if not len(g):
            continue
        cos = _exact(head_u[u], head_g[g], tail[g, u], scale[start + g])
        top = np.full(n, -np.inf)
        np.maximum.at(top, u, cos)
        first = np.full(n, count, np.int64)
        at_top = cos == top[u]
        np.minimum.at(first, u[at_top], g[at_top] + start)
        better = top > other  # an earlier block keeps a tie: the lowest group wins
        other[better] = top[better]
        best[better] = first[better]
    return NearestOther(own, best, other, survivors)
