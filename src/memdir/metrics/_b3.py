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

The group sums need not be held: :class:`GroupSums` makes any groups' sums from
the unit rows when asked, with the floats and the entry order of the whole
product's rows, so :func:`nearest_other` given one reads the groups twice (their
lengths, head terms and directions, then the scan), a block at a time, and
finds what it finds given the whole matrix of sums.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from scipy import sparse

from memdir.metrics._text import column_counts, row_runs

__all__ = ["CELLS", "HEAD_BLOCK", "HEAD_TERMS", "MARGIN", "GroupSums", "NearestOther",
           "Sums", "nearest_other"]

HEAD_TERMS = 256
"""Terms held by the most groups, whose part of each pair is bounded before it is computed."""
HEAD_BLOCK = 8
"""Head terms per bound block (the bound's cost per pair is two numbers per block)."""
MARGIN = 1e-9
"""How far below a unit's own cosine a bound must stay for its pair to be skipped."""
CELLS = 2_000_000
"""Unit-group pairs held at once."""


class GroupSums:
    """Each group's sum of unit rows, made for the groups asked for, never held whole.

    The units are ordered by group once (row order within a group); the sums of
    any groups are then one product of an indicator over those groups' units
    with their rows, which adds each group's rows in the same order as the
    product over every unit, so each row is the whole product's row, floats and
    entry order alike. Memory: the unit order and the groups' offsets into it
    (16 bytes per unit and group), besides the rows asked for.

    Args:
        matrix: Unit rows (CSR).
        groups: Each unit's group, ``0 <= groups < count``.
        count: How many groups.
    """

    def __init__(self, matrix: sparse.csr_matrix, groups: np.ndarray, count: int) -> None:
        self.matrix, self.groups = matrix, groups
        self.shape: tuple[int, int] = (count, matrix.shape[1])
        self._order = np.argsort(groups, kind="stable")
        self._starts = np.searchsorted(groups[self._order], np.arange(count + 1))
        """Group ``g``'s units are ``_order[_starts[g] : _starts[g + 1]]``."""

    def rows(self, picked: np.ndarray) -> sparse.csr_matrix:
        """The sums of groups ``picked`` (any order, repeats allowed), one row each."""
        picked = np.asarray(picked, np.int64)
        unique, inverse = np.unique(picked, return_inverse=True)
        first, sizes = self._starts[unique], np.diff(self._starts)[unique]
        total = int(sizes.sum())
        before = np.cumsum(sizes) - sizes
        at = np.repeat(first - before, sizes) + np.arange(total)
        indicator = sparse.csr_matrix(
            (np.ones(total), (np.repeat(np.arange(len(unique)), sizes), np.arange(total))),
            shape=(len(unique), total))
        block = (indicator @ self.matrix[self._order[at]]).tocsr()
        if len(unique) == len(picked) and np.array_equal(unique, picked):
            return block
        return block[inverse]

    def ranges(self, entries: int) -> list[tuple[int, int]]:
        """Consecutive ranges of groups ``[lo, hi)`` covering every group once.

        Each range's units hold about ``entries`` entries (a range has one group at least).
        """
        sizes = np.diff(self.matrix.indptr)[self._order]
        held = np.zeros(len(sizes) + 1, np.int64)
        np.cumsum(sizes, out=held[1:])
        at = held[self._starts]  # entries before each group's units, and the total
        return row_runs(at, entries)  # groups in runs, as a CSR matrix's rows are

    def whole(self) -> sparse.csr_matrix:
        """Every group's sum at once: the one product over every unit."""
        n = self.matrix.shape[0]
        indicator = sparse.csr_matrix((np.ones(n), (self.groups, np.arange(n))),
                                      shape=(self.shape[0], n))
        return (indicator @ self.matrix).tocsr()


Sums: TypeAlias = sparse.csr_matrix | GroupSums
"""The group sums B3 reads: the whole matrix, or made a block at a time."""


def _sum_rows(sums: Sums, picked: np.ndarray) -> sparse.csr_matrix:
    """Rows ``picked`` of the group sums."""
    return sums.rows(picked) if isinstance(sums, GroupSums) else sums[picked]


def _sum_blocks(sums: Sums, span: int) -> Iterator[tuple[int, sparse.csr_matrix]]:
    """The group sums ``span`` rows at a time, each with its first row's number."""
    for start in range(0, sums.shape[0], span):
        if isinstance(sums, GroupSums):
            yield start, sums.rows(np.arange(start, min(start + span, sums.shape[0])))
        else:
            yield start, sums[start : start + span]


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
    return _most_held(column_counts(sums.indices[: sums.nnz], sums.shape[1]), count)


def _most_held(held: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` terms of most groups given each term's groups, most first (ties by id)."""
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
        lengths[start : start + span] = _lengths(sums[start : start + span])
    return _inverse(lengths)


def _lengths(block: sparse.csr_matrix) -> np.ndarray:
    """Each row's length, as scipy's elementwise product and row sum give it."""
    out: np.ndarray = np.sqrt(np.asarray(block.multiply(block).sum(axis=1)).ravel())
    return out


def _inverse(lengths: np.ndarray) -> np.ndarray:
    """One over each length, 0 for a length of 0."""
    out: np.ndarray = np.divide(1.0, lengths, out=np.zeros_like(lengths), where=lengths > 0)
    return out


def _mean_step(mean: np.ndarray, block: sparse.csr_matrix, scale: np.ndarray) -> np.ndarray:
    """``mean`` plus the block's rows scaled, added as one product over every row would.

    ``sums.T @ scale`` adds the groups' scaled entries into each term's total in
    group order, starting from zero; the running total is put first as one more
    row of scale 1 (a term without a total yet has no entry), so the blocks one
    after the other give that product's floats.
    """
    ahead = sparse.csr_matrix(mean[None, :])
    both = sparse.vstack([ahead, block], format="csr")
    return np.asarray(both.T @ np.concatenate([[1.0], scale])).ravel()


def _exact(head_u: np.ndarray, head_g: np.ndarray, tail: np.ndarray, scale: np.ndarray
           ) -> np.ndarray:
    """Cosines of pairs from their dense head rows, their exact tail part and group scale."""
    out: np.ndarray = ((head_u * head_g).sum(axis=1) + tail) * scale
    return out


def _directions(sums: sparse.csr_matrix, scale: np.ndarray, head: np.ndarray) -> np.ndarray:
    """Each head block's mean centroid direction (unit length, or zero), one row per block."""
    return _head_directions(np.asarray(sums.T @ scale).ravel(), head)


def _head_directions(total: np.ndarray, head: np.ndarray) -> np.ndarray:
    """:func:`_directions` from every term's total of scaled group sums."""
    width = -(-len(head) // HEAD_BLOCK) * HEAD_BLOCK
    mean = np.zeros(width)
    mean[: len(head)] = total[head]
    q = mean.reshape(-1, HEAD_BLOCK)
    norms = np.linalg.norm(q, axis=1, keepdims=True)
    out: np.ndarray = np.divide(q, norms, out=np.zeros_like(q), where=norms > 0)
    return out


@dataclass(frozen=True, slots=True)
class _Units:
    """The units a scan compares: their head terms dense, bound features and tail terms."""

    head_u: np.ndarray
    feat_u: np.ndarray
    tail: sparse.csr_matrix
    """Units x terms, the head terms left out."""
    tail_t: sparse.csr_matrix
    """The same, terms x units."""

    @classmethod
    def of(cls, matrix: sparse.csr_matrix, chosen: np.ndarray, head: np.ndarray,
           q: np.ndarray) -> _Units:
        rows = matrix[chosen]
        head_u = _dense_head(rows, head, q.size)
        in_head = np.zeros(matrix.shape[1], bool)
        in_head[head] = True
        rows.data[in_head[rows.indices]] = 0.0  # rows is a copy; keep only the tail terms
        rows.eliminate_zeros()
        return cls(head_u, _features(head_u, q), rows, rows.T.tocsr())


def _limits(units: _Units, sums: Sums, own_g: np.ndarray, scale: np.ndarray,
            head: np.ndarray, eps: float) -> np.ndarray:
    """Each unit's own cosine (the tail by an elementwise product) plus ``eps``, less the margin.

    A pair must exceed this to be kept: it is the bound's threshold, not the own
    cosine reported (the scan computes that one as it computes the others).
    """
    own_rows = _sum_rows(sums, own_g)
    own_rows.sort_indices()
    own_tail = np.asarray(units.tail.multiply(own_rows).sum(axis=1)).ravel()
    width = units.head_u.shape[1]
    out: np.ndarray = _exact(units.head_u, _dense_head(own_rows, head, width), own_tail,
                             scale[own_g]) + eps - MARGIN
    return out


@dataclass(frozen=True, slots=True)
class _Found:
    """What a scan found: own cosines where the own group was scanned, and the kept pairs."""

    own: np.ndarray
    """NaN where the unit's own group was not among the targets."""
    unit: np.ndarray
    group: np.ndarray
    cosine: np.ndarray


class _Side:
    """The group side of a scan, made block by block from the sums as it is asked."""

    def __init__(self, sums: Sums, head: np.ndarray, q: np.ndarray) -> None:
        self.sums, self.head, self.q = sums, head, q

    def block(self, picked: np.ndarray) -> tuple[sparse.csr_matrix, np.ndarray, np.ndarray]:
        """The picked groups' sums (terms sorted), their head terms dense, and their features."""
        block = _sum_rows(self.sums, picked)
        block.sort_indices()
        head_g = _dense_head(block, self.head, self.q.size)
        return block, head_g, _features(head_g, self.q)


def _scan(units: _Units, side: _Side, scale: np.ndarray, own_g: np.ndarray, limit: np.ndarray,
          targets: np.ndarray, span: int) -> _Found:
    """Compare units with the target groups (ascending), ``span`` groups at a time.

    Every pair whose bound exceeds its unit's ``limit`` is computed exactly and
    kept; the own group's cosine is computed where it is a target. A pair's
    cosine depends on its unit row, its group row, the head and the group's
    scale alone, so any subset of units and targets gives the same floats.
    """
    n = len(own_g)
    own = np.full(n, np.nan)
    found_u, found_g, found_c = [], [], []
    for start in range(0, len(targets), span):
        picked = targets[start : start + span]
        block, head_g, feat_g = side.block(picked)
        tail = (block @ units.tail_t).toarray()  # groups x units, exact
        bound = feat_g @ units.feat_u.T
        bound += tail
        bound *= scale[picked, None]
        local = np.searchsorted(picked, own_g)
        here = np.flatnonzero(local < len(picked))
        here = here[picked[local[here]] == own_g[here]]
        own[here] = _exact(units.head_u[here], head_g[local[here]], tail[local[here], here],
                           scale[own_g[here]])
        bound[local[here], here] = -np.inf
        g, u = np.divmod(np.flatnonzero(bound > limit), n)
        if len(g):
            found_u.append(u)
            found_g.append(picked[g])
            found_c.append(_exact(units.head_u[u], head_g[g], tail[g, u], scale[picked[g]]))
    if not found_u:
        empty = np.zeros(0, np.int64)
        return _Found(own, empty, empty, np.zeros(0))
    return _Found(own, np.concatenate(found_u), np.concatenate(found_g),
                  np.concatenate(found_c))


def _nearest(n: int, count: int, unit: np.ndarray, group: np.ndarray, cosine: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Per unit, the highest of its pairs' cosines (-inf: none) and its lowest group (-1)."""
    other = np.full(n, -np.inf)
    np.maximum.at(other, unit, cosine)
    first = np.full(n, count, np.int64)
    at_top = cosine == other[unit]
    np.minimum.at(first, unit[at_top], group[at_top])
    best = np.where(first < count, first, -1)
    return other, best


def _group_side(sums: Sums, span: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each group's scale, the head terms and their directions, from one read of the sums.

    The same floats as :func:`_scales`, :func:`_head_order` and :func:`_directions`
    give over the whole matrix (lengths ``span`` groups at a time, as there).
    """
    if not isinstance(sums, GroupSums):
        scale = _scales(sums, span)
        head = _head_order(sums, HEAD_TERMS)
        return scale, head, _directions(sums, scale, head)
    count, width = sums.shape
    scale = np.empty(count)
    held = np.zeros(width, np.int64)
    total = np.zeros(width)
    for start, block in _sum_blocks(sums, span):
        scale[start : start + block.shape[0]] = _inverse(_lengths(block))
        held += column_counts(block.indices[: block.nnz], width)
        total = _mean_step(total, block, scale[start : start + block.shape[0]])
    head = _most_held(held, HEAD_TERMS)
    return scale, head, _head_directions(total, head)


def nearest_other(matrix: sparse.csr_matrix, groups: np.ndarray, sums: Sums,
                  chosen: np.ndarray, eps: float, *, cells: int = CELLS) -> NearestOther:
    """Own cosine of each chosen unit and the nearest other centroid of those that may leak.

    Args:
        matrix: Unit rows (unit length, no negative weight).
        groups: Each unit's group (a row of ``sums``).
        sums: Each group's sum of unit rows, whole or as :class:`GroupSums` (the
            same result: then no more than a block of sums is held).
        chosen: The units to compare, as rows of ``matrix``.
        eps: A unit leaks when another cosine beats its own by more than this;
            pairs that cannot are skipped.
        cells: About how many unit-group pairs to hold at once (groups per block:
            ``cells // len(chosen)``, at least one).
    """
    n, count = len(chosen), sums.shape[0]
    span = max(1, cells // max(n, 1))
    scale, head, q = _group_side(sums, span)
    units = _Units.of(matrix, chosen, head, q)
    own_g = groups[chosen]
    limit = _limits(units, sums, own_g, scale, head, eps)
    found = _scan(units, _Side(sums, head, q), scale, own_g, limit, np.arange(count), span)
    other, best = _nearest(n, count, found.unit, found.group, found.cosine)
    return NearestOther(found.own, best, other, len(found.unit))


SLACK = 0.02
"""How far below its bound's threshold a unit's kept pairs reach in :class:`NearestOtherSteps`,
so its own cosine may fall this much over later states before the unit is compared again."""


def replace_rows(old: sparse.csr_matrix, rows: np.ndarray, new: sparse.csr_matrix, width: int
                 ) -> sparse.csr_matrix:
    """``old`` with rows ``rows`` (ascending) replaced by the rows of ``new``, ``width`` wide.

    The other rows' entries are copied in their order. Cost: linear in the entries.
    """
    if not len(rows):
        if old.shape[1] == width:
            return old
        return sparse.csr_matrix((old.data, old.indices, old.indptr),
                                 shape=(old.shape[0], width))
    indptr = old.indptr
    sizes = np.diff(indptr)
    sizes[rows] = np.diff(new.indptr)
    out_ptr = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=out_ptr[1:])
    cuts = new.indptr.tolist()
    indices: list[np.ndarray] = []
    data: list[np.ndarray] = []
    at = 0
    for k, (lo, hi) in enumerate(zip(indptr[rows].tolist(), indptr[rows + 1].tolist(),
                                     strict=True)):
        indices += [old.indices[at:lo], new.indices[cuts[k] : cuts[k + 1]]]
        data += [old.data[at:lo], new.data[cuts[k] : cuts[k + 1]]]
        at = hi
    indices.append(old.indices[at:])
    data.append(old.data[at:])
    return sparse.csr_matrix(
        (np.concatenate(data), np.concatenate(indices).astype(old.indices.dtype, copy=False),
         out_ptr), shape=(old.shape[0], width))


class _KeptSide(_Side):
    """Every group's sorted sums, dense head terms and features, kept and updated by rows."""

    def __init__(self, sums: sparse.csr_matrix, head: np.ndarray, q: np.ndarray, span: int
                 ) -> None:
        super().__init__(sums, head, q)
        parts = [_Side.block(self, np.arange(a, min(a + span, sums.shape[0])))
                 for a in range(0, sums.shape[0], span)]
        self.sorted = sparse.vstack([p[0] for p in parts], format="csr") if parts \
            else sums.copy()
        self.head_g = np.concatenate([p[1] for p in parts]) if parts \
            else np.zeros((0, q.size))
        self.feat_g = np.concatenate([p[2] for p in parts]) if parts \
            else np.zeros((0, 2 * q.shape[0]))

    def update(self, sums: sparse.csr_matrix, moved: np.ndarray) -> None:
        """Take the rows ``moved`` (ascending) of ``sums`` anew."""
        self.sums = sums
        block, head_g, feat_g = _Side.block(self, moved)
        self.sorted = replace_rows(self.sorted, moved, block, sums.shape[1])
        self.head_g[moved] = head_g
        self.feat_g[moved] = feat_g

    def block(self, picked: np.ndarray) -> tuple[sparse.csr_matrix, np.ndarray, np.ndarray]:
        return self.sorted[picked], self.head_g[picked], self.feat_g[picked]


class NearestOtherSteps:
    """:func:`nearest_other` over a run of states, each computed from the last where it can.

    A state that keeps the last one's units, groups, chosen units and head terms,
    and names the unit rows that changed, costs a scan of every chosen unit
    against the changed groups only (those holding a changed row) and of the
    changed chosen units against every group; the groups' sorted sums, dense
    head terms and bound features are kept and made again for the changed
    groups only. For each chosen unit it keeps every pair whose bound exceeded a
    floor, :data:`SLACK` below the unit's threshold when it was last compared
    with every group, with its exact cosine: every other pair of an unchanged
    unit and an unchanged group is then known to be at most the floor. A unit
    whose own cosine falls so far that its threshold drops under its floor is
    compared with every group again. Any other state is computed whole.

    The result is :func:`nearest_other`'s wherever it decides anything: the own
    cosines, and for every unit whose nearest other group comes within
    :data:`MARGIN` of its own cosine, that cosine and group, to the bit (each
    cosine is computed by the same code from the same rows). Elsewhere
    ``other`` is the highest kept pair's cosine, which may differ, and
    ``survivors`` counts the kept pairs.

    Args:
        slack: See :data:`SLACK`.
        cells: About how many unit-group pairs to hold at once.
    """

    def __init__(self, *, slack: float = SLACK, cells: int = CELLS) -> None:
        self.slack, self.cells = slack, cells
        self.whole = 0
        """States computed whole so far."""
        self.compared = 0
        """Units compared with every group so far (those of whole states included)."""
        self._last: _StepState | None = None

    def __call__(self, matrix: sparse.csr_matrix, groups: np.ndarray, sums: sparse.csr_matrix,
                 chosen: np.ndarray, eps: float, changed: np.ndarray | None) -> NearestOther:
        """:func:`nearest_other` of this state.

        Args:
            matrix: Unit rows, as for :func:`nearest_other`.
            groups: Each unit's group.
            sums: Each group's sum of unit rows.
            chosen: The units to compare.
            eps: See :func:`nearest_other`.
            changed: The rows of ``matrix`` that differ from the last call's
                (every other row and every group holding none of them must be
                the same to the bit), or None when that is not known.
        """
        head = _head_order(sums, HEAD_TERMS)
        last = self._last
        if changed is None or last is None or not last.fits(matrix, groups, sums, chosen, eps,
                                                              head):
            self._last = None  # let the last state go before this one is built
            self._last = last = self._whole(matrix, groups, sums, chosen, eps, head)
            self.whole += 1
        else:
            self._update(last, matrix, sums, changed)
        other, best = _nearest(len(chosen), sums.shape[0], last.unit, last.group, last.cosine)
        return NearestOther(last.own.copy(), best, other, len(last.unit))

    def _span(self, n: int) -> int:
        return max(1, self.cells // max(n, 1))

    def _whole(self, matrix: sparse.csr_matrix, groups: np.ndarray, sums: sparse.csr_matrix,
               chosen: np.ndarray, eps: float, head: np.ndarray) -> _StepState:
        span = self._span(len(chosen))
        scale = _scales(sums, span)
        q = _directions(sums, scale, head)
        n = len(chosen)
        state = _StepState(groups.copy(), chosen.copy(), head, eps, scale,
                           _KeptSide(sums, head, q, span), np.full(n, np.nan),
                           np.full(n, np.nan), np.zeros(0, np.int64), np.zeros(0, np.int64),
                           np.zeros(0))
        self._compare_whole(state, matrix, sums, np.arange(n))
        return state

    def _compare_whole(self, state: _StepState, matrix: sparse.csr_matrix,
                       sums: sparse.csr_matrix, which: np.ndarray) -> None:
        """Compare the chosen units at positions ``which`` with every group, anew."""
        if not len(which):
            return
        self.compared += len(which)
        units = _Units.of(matrix, state.chosen[which], state.head, state.side.q)
        own_g = state.groups[state.chosen[which]]
        floor = _limits(units, sums, own_g, state.scale, state.head, state.eps) - self.slack
        found = _scan(units, state.side, state.scale, own_g, floor, np.arange(sums.shape[0]),
                      self._span(len(which)))
        state.own[which] = found.own
        state.floor[which] = floor
        state.replace(which, None, which[found.unit], found.group, found.cosine)

    def _update(self, state: _StepState, matrix: sparse.csr_matrix, sums: sparse.csr_matrix,
                changed: np.ndarray) -> None:
        moved = np.unique(state.groups[changed])
        if not len(moved):
            return
        state.scale[moved] = _scales(sums[moved], self._span(len(moved)))
        state.side.update(sums, moved)
        again = np.flatnonzero(np.isin(state.chosen, changed))  # their rows changed
        rest = np.setdiff1d(np.arange(len(state.chosen)), again, assume_unique=True)
        if len(rest):
            units = _Units.of(matrix, state.chosen[rest], state.head, state.side.q)
            own_g = state.groups[state.chosen[rest]]
            found = _scan(units, state.side, state.scale, own_g, state.floor[rest], moved,
                          self._span(len(rest)))
            scanned = ~np.isnan(found.own)
            state.own[rest[scanned]] = found.own[scanned]
            state.replace(rest, moved, rest[found.unit], found.group, found.cosine)
            # own cosines that fell so far that pairs under the floor might now count
            limits = found.own[scanned] + state.eps - MARGIN
            fallen = rest[scanned][limits < state.floor[rest[scanned]]]
            again = np.union1d(again, fallen)
        self._compare_whole(state, matrix, sums, again)


@dataclass(slots=True)
class _StepState:
    """What :class:`NearestOtherSteps` keeps of the last state."""

    groups: np.ndarray
    chosen: np.ndarray
    head: np.ndarray
    eps: float
    scale: np.ndarray
    side: _KeptSide
    """The groups' side; its head directions are those of the state last computed
    whole (any unit directions give a valid bound)."""
    own: np.ndarray
    floor: np.ndarray
    """Per chosen unit: every pair with a group not kept below is at most this."""
    unit: np.ndarray
    """Kept pairs: position in ``chosen``, group and exact cosine."""
    group: np.ndarray
    cosine: np.ndarray

    def fits(self, matrix: sparse.csr_matrix, groups: np.ndarray, sums: sparse.csr_matrix,
             chosen: np.ndarray, eps: float, head: np.ndarray) -> bool:
        """Whether a state has this one's units, groups, chosen units, ``eps`` and head terms."""
        return (eps == self.eps and matrix.shape[0] == len(self.groups)
                and sums.shape[0] == len(self.scale) and np.array_equal(groups, self.groups)
                and np.array_equal(chosen, self.chosen) and np.array_equal(head, self.head))

    def replace(self, units: np.ndarray, groups: np.ndarray | None, unit: np.ndarray,
                group: np.ndarray, cosine: np.ndarray) -> None:
        """Drop the kept pairs of ``units`` (with ``groups`` only, unless None); keep new ones."""
        drop = np.isin(self.unit, units)
        if groups is not None:
            drop &= np.isin(self.group, groups)
        keep = ~drop
        self.unit = np.concatenate([self.unit[keep], unit])
        self.group = np.concatenate([self.group[keep], group])
        self.cosine = np.concatenate([self.cosine[keep], cosine])
