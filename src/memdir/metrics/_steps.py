"""Panel B over a run of store states, each computed from the last: the history table's.

:func:`~memdir.metrics.measure_taxonomy` fits and compares everything anew for
each state. :class:`TaxonomySteps` gives the same metrics, to the bit, keeping
what a state shares with the one before it:

- **B1** is a function of the tree's nodes: while a state keeps the last node list
  (the tree builder shares it when only bodies changed), B1 is the last one's.
- **The units' TF-IDF rows.** Term counts come from the term cache as always; the
  document counts are updated from the rows that changed, the idf is computed
  whole (the same call on the same counts as a fresh fit), and only the rows
  whose text changed or that hold a term whose idf changed are weighted again.
  A row's weights depend on its counts and its terms' idf alone, so the other
  rows are the last state's to the bit. A change in the number of units changes
  every idf: the matrix is then built whole.
- **The group sums** of the groups holding a re-weighted row are summed again,
  each from its members in order as the whole product sums it.
- **B3** goes through :class:`~memdir.metrics._b3.NearestOtherSteps`, told which
  rows changed; its sample is the last one's while the unit keys and the group
  count are.
- **B4**'s tree distances are kept while the nodes and the units' leaves are; the
  content distances are computed for every pair (5,000 cosines).

B2 is computed whole on the spliced matrices (a few sums over every entry). Cost
per state: linear in the entries of the matrix (a scan for the changed terms, a
splice, B2's sums) plus the re-weighted rows, the changed groups' sums and B3's
scans of them, instead of a fit and a comparison of every unit with every group.
The matrices are kept between states and changed in place: nothing else may hold
them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from memdir.metrics._b3 import NearestOtherSteps, replace_rows
from memdir.metrics._taxonomy import (
    _EPS,
    B3_BUDGET,
    MIN_UNIT_CHARS,
    Leak,
    SiblingPair,
    TaxonomyMetrics,
    _b1,
    _b2,
    _b3_error,
    _b3_result,
    _b3_units,
    _group_sums,
    _lowest_common,
    _sample_pairs,
    _spearman,
)
from memdir.metrics._text import TfidfCache, _idf, column_counts, cosine_rows
from memdir.metrics._tree import Node, StoreTree, Unit

__all__ = ["TaxonomySteps"]

_B1 = tuple[float | None, float | None, SiblingPair | None, int]


class _UnitRows:
    """The units' TF-IDF matrix of the last state and the document counts it was fitted on."""

    def __init__(self, cache: TfidfCache) -> None:
        self.cache = cache
        self.texts: list[str] = []
        self.numbers = np.zeros(0, np.int64)
        self.df = np.zeros(0, np.int64)
        self.idf = np.zeros(0)
        self.matrix: sparse.csr_matrix | None = None

    def _width(self) -> int:
        return max(len(self.cache._vocab), 1)

    def update(self, texts: list[str]) -> np.ndarray | None:
        """Fit the rows of ``texts``; the rows that differ from the last state's (None: all)."""
        cache = self.cache
        if self.matrix is None or len(texts) != len(self.texts):
            self.texts = texts
            self.numbers = cache.numbers(texts)
            self.matrix = matrix = cache.rows_matrix(self.numbers)
            self.df = column_counts(matrix.indices, matrix.shape[1])  # no 8-byte copy
            self.idf = _idf(len(texts), self.df)
            return None
        old_texts = self.texts
        edited = np.array([k for k, (a, b) in enumerate(zip(texts, old_texts, strict=True))
                           if a is not b and a != b], np.int64)
        self.texts = texts
        matrix = self.matrix
        fresh = cache.numbers([texts[k] for k in edited.tolist()])
        width = self._width()
        df = np.zeros(width, np.int64)
        df[: len(self.df)] = self.df
        if len(edited):
            old_ptr, old_idx = matrix.indptr, matrix.indices
            gone = np.concatenate([old_idx[old_ptr[k] : old_ptr[k + 1]] for k in edited.tolist()])
            df -= np.bincount(gone, minlength=width)
            df += np.bincount(cache._gathered(fresh)[1], minlength=width)
            self.numbers[edited] = fresh
        idf = _idf(len(texts), df)
        moved = np.flatnonzero(idf[: len(self.idf)] != self.idf)
        self.df, self.idf = df, idf
        rows = edited
        if len(moved):
            hit = np.zeros(width, bool)
            hit[moved] = True
            entries = np.flatnonzero(hit[matrix.indices[: matrix.indptr[-1]]])
            holding = np.searchsorted(matrix.indptr, entries, side="right") - 1
            rows = np.union1d(rows, holding)
        rows = np.unique(rows)
        indptr, indices, data = cache._gathered(self.numbers[rows])
        new = TfidfCache._weighted(indptr, indices, data, idf, width)
        self.matrix = replace_rows(matrix, rows, new, width)
        return rows


@dataclass(slots=True)
class _Groups:
    """The group sums of the last state and what they were summed from."""

    groups: np.ndarray
    sums: sparse.csr_matrix


class TaxonomySteps:
    """:func:`~memdir.metrics.measure_taxonomy` of one state after another (see the module notes).

    Args:
        units_cache: Term counts of unit texts.
        labels_cache: Term counts of labels.
        min_chars, max_pairs, seed, b3_budget, b3_sample: As for ``measure_taxonomy``.
        note: Told each phase of a state as it starts (``B3: 1,100 units``), for a
            status line; None tells nothing. A caller may change it between states.
    """

    def __init__(self, *, units_cache: TfidfCache, labels_cache: TfidfCache,
                 min_chars: int = MIN_UNIT_CHARS, max_pairs: int = 5000, seed: int = 0,
                 b3_budget: int = B3_BUDGET, b3_sample: int | None = None,
                 note: Callable[[str], None] | None = None) -> None:
        self.note = note
        self.labels_cache = labels_cache
        self.min_chars, self.max_pairs, self.seed = min_chars, max_pairs, seed
        self.b3_budget, self.b3_sample = b3_budget, b3_sample
        self.b3 = NearestOtherSteps()
        self._rows = _UnitRows(units_cache)
        self._b1: tuple[list[Node], TfidfCache, _B1] | None = None
        self._groups: _Groups | None = None
        self._sample: tuple[list[str], int, np.ndarray] | None = None
        self._pairs: tuple[int, np.ndarray, np.ndarray] | None = None
        self._distance: tuple[list[Node], np.ndarray, np.ndarray] | None = None

    def measure(self, tree: StoreTree) -> TaxonomyMetrics:
        """Panel B of ``tree``, as ``measure_taxonomy`` with these caches computes it."""
        self._tell(f"B1 over {len(tree.nodes):,} nodes")
        b1 = self._b1_of(tree)
        units = [u for u in tree.units if len(u.text) >= self.min_chars]
        if len(units) < 2:
            self._rows = _UnitRows(self._rows.cache)
            self._groups = None
            return TaxonomyMetrics(len(units), *b1, None, None, None, None, None, 0)
        self._tell(f"weighting the terms of {len(units):,} units")
        changed = self._rows.update([u.text for u in units])
        matrix = self._rows.matrix
        assert matrix is not None
        parents = sorted({u.parent for u in units})
        column = {p: k for k, p in enumerate(parents)}
        groups = np.array([column[u.parent] for u in units], dtype=np.int64)
        sums = self._sums(matrix, groups, len(parents), changed)
        b2, same_mean, cross_mean = _b2(matrix, groups, sums)
        self._tell(f"B3 against {len(parents):,} groups")
        b3, leaks, b3_units = self._b3(tree, units, matrix, groups, parents, sums, changed)
        stderr, interval = _b3_error(b3, b3_units, len(units)) if b3 is not None \
            else (None, None)
        self._tell("B4")
        b4, pairs = self._b4(tree, units, matrix)
        return TaxonomyMetrics(len(units), *b1, b2, same_mean, cross_mean,
                               b3, b4, pairs, leaks, b3_units, stderr, interval)

    def _tell(self, phase: str) -> None:
        if self.note is not None:
            self.note(phase)

    def _b1_of(self, tree: StoreTree) -> _B1:
        """B1's four values, kept while the tree has the last node list and label cache."""
        kept = self._b1
        if kept is not None and kept[0] is tree.nodes and kept[1] is self.labels_cache:
            return kept[2]
        value = _b1(tree, self.labels_cache)
        self._b1 = (tree.nodes, self.labels_cache, value)
        return value

    def _sums(self, matrix: sparse.csr_matrix, groups: np.ndarray, count: int,
              changed: np.ndarray | None) -> sparse.csr_matrix:
        """The group sums, summing again only the groups that hold a changed row."""
        last = self._groups
        if changed is None or last is None or last.sums.shape[0] != count \
                or not np.array_equal(groups, last.groups):
            sums = _group_sums(matrix, groups, count)
        else:
            moved = np.unique(groups[changed])
            members = np.flatnonzero(np.isin(groups, moved))
            summed = _group_sums(matrix[members], np.searchsorted(moved, groups[members]),
                                 len(moved))
            sums = replace_rows(last.sums, moved, summed, matrix.shape[1])
        self._groups = _Groups(groups, sums)
        return sums

    def _b3(self, tree: StoreTree, units: list[Unit], matrix: sparse.csr_matrix,
            groups: np.ndarray, parents: list[int], sums: sparse.csr_matrix,
            changed: np.ndarray | None) -> tuple[float | None, list[Leak], int]:
        """``_b3`` of ``measure_taxonomy``, its sample and comparisons kept from the last state."""
        if len(parents) < 2:
            return None, [], 0
        keys = [u.key for u in units]
        kept = self._sample
        if kept is not None and kept[1] == len(parents) and kept[0] == keys:
            chosen = kept[2]
        else:
            chosen = _b3_units(keys, len(parents), self.b3_budget, self.seed, self.b3_sample)
            self._sample = (keys, len(parents), chosen)
        found = self.b3(matrix, groups, sums, chosen, _EPS, changed)
        return _b3_result(tree, units, groups, parents, chosen, found)

    def _b4(self, tree: StoreTree, units: list[Unit], matrix: sparse.csr_matrix
            ) -> tuple[float | None, int]:
        """``_b4`` of ``measure_taxonomy``, its pairs and tree distances kept while they hold."""
        if len(units) < 3:
            return None, 0
        if self._pairs is None or self._pairs[0] != len(units):
            self._pairs = (len(units), *_sample_pairs(len(units), self.max_pairs, self.seed))
        _, left, right = self._pairs
        leaf = np.array([u.node for u in units], dtype=np.int64)
        ends = np.concatenate([leaf[left], leaf[right]])
        kept = self._distance
        if kept is not None and kept[0] is tree.nodes and np.array_equal(kept[1], ends):
            tree_distance = kept[2]
        else:
            depth = np.array([n.depth for n in tree.nodes], dtype=np.int64)
            parent = np.array([max(n.parent, 0) for n in tree.nodes], dtype=np.int64)
            lca = _lowest_common(parent, depth, leaf[left], leaf[right])
            tree_distance = depth[leaf[left]] + depth[leaf[right]] - 2 * depth[lca]
            self._distance = (tree.nodes, ends, tree_distance)
        content_distance = np.round(1.0 - cosine_rows(matrix, left, right), 12)
        if np.ptp(tree_distance) == 0 or np.ptp(content_distance) == 0:
            return None, len(left)
        return _spearman(tree_distance, content_distance), len(left)
