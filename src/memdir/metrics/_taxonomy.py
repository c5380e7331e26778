"""Panel B, taxonomy adherence: do labels, grouping and distance follow the content?

All similarities are lexical TF-IDF cosines (see ``_text``). Units shorter than
``min_chars`` characters are left out of B2-B4. A unit's sibling group is the
set of units sharing its parent node (its file, folder or enclosing heading).

- B1, label distinguishability: for each node with two or more children, the mean
  of ``1 - cos`` between the children's label vectors over all child pairs; B1 is
  the mean of those per-node means. Labels are a file's name plus description, a
  folder's name, or a heading's text. The single most similar pair is reported.
- B2, content cohesion: the mean cosine over pairs of units in the same group,
  divided by the mean cosine over pairs in different groups. The paper estimates
  the denominator from random cross-group pairs; we compute its exact value over
  all such pairs (the quantity the sample estimates), so no sampling is involved.
- B3, scope leakage: the share of units whose cosine with some other group's
  centroid beats the cosine with their own group's centroid (the unit itself
  included in its own centroid, as in the definition).
- B4, distance mirrors relatedness: Spearman correlation between the tree distance
  of two units (edges through their lowest common ancestor) and their content
  distance ``1 - cos``, over all unit pairs or, past ``max_pairs``, a seeded sample.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np
from scipy import sparse

from memdir.metrics._text import TfidfCache, cosine_rows
from memdir.metrics._tree import StoreTree, Unit

__all__ = ["Leak", "SiblingPair", "TaxonomyMetrics", "measure_taxonomy"]

MIN_UNIT_CHARS = 40
_EPS = 1e-12
_ROWS_PER_BLOCK = 2048


@dataclass(frozen=True, slots=True)
class SiblingPair:
    """Two sibling nodes and how distinguishable their labels are (1 - cosine)."""

    parent: str
    a: str
    b: str
    distinguishability: float


@dataclass(frozen=True, slots=True)
class Leak:
    """A unit lexically nearer another sibling group's centroid than its own."""

    unit: str
    own_group: str
    nearest_group: str
    own_cosine: float
    other_cosine: float


@dataclass(slots=True)
class TaxonomyMetrics:
    """Panel B of one store state; a value is None when the store is too small for it."""

    units_considered: int
    b1_distinguishability: float | None
    b1_min: float | None
    b1_worst_pair: SiblingPair | None
    b1_nodes: int
    b2_cohesion: float | None
    b2_same_mean: float | None
    b2_cross_mean: float | None
    b3_leakage: float | None
    b4_spearman: float | None
    b4_pairs: int
    leaks: list[Leak] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """A plain mapping for JSON."""
        return asdict(self)


def _label_key(text: str) -> str:
    return " ".join(text.casefold().split())


@lru_cache(maxsize=256)
def _pairs_of(size: int) -> tuple[np.ndarray, np.ndarray]:
    left, right = np.triu_indices(size, k=1)
    return left, right


def _sibling_pairs(tree: StoreTree) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Internal nodes with two or more children, and all their child pairs (node ids)."""
    parents: list[int] = []
    left: list[np.ndarray] = []
    right: list[np.ndarray] = []
    for node in tree.nodes:
        if len(node.children) < 2:
            continue
        a, b = _pairs_of(len(node.children))
        children = np.asarray(node.children)
        parents.append(node.id)
        left.append(children[a])
        right.append(children[b])
    if not parents:
        return [], np.zeros(0, np.int64), np.zeros(0, np.int64)
    return parents, np.concatenate(left), np.concatenate(right)


def _b1(tree: StoreTree, labels: TfidfCache) -> tuple[float | None, float | None,
                                                      SiblingPair | None, int]:
    parents, left, right = _sibling_pairs(tree)
    if not parents:
        return None, None, None, 0
    # the root has no label and is nobody's child: row r holds node r + 1
    matrix = labels.matrix([n.label for n in tree.nodes[1:]])
    sim = cosine_rows(matrix, left - 1, right - 1)
    empty = np.asarray(matrix.getnnz(axis=1) == 0)
    for k in np.nonzero(empty[left - 1] & empty[right - 1])[0].tolist():
        same = _label_key(tree.nodes[left[k]].label) == _label_key(tree.nodes[right[k]].label)
        sim[k] = 1.0 if same else 0.0
    distance = 1.0 - np.clip(sim, 0.0, 1.0)
    sizes = np.array([len(tree.nodes[p].children) for p in parents])
    owner = np.repeat(np.arange(len(parents)), sizes * (sizes - 1) // 2)
    node_means = np.bincount(owner, weights=distance) / np.bincount(owner)
    k = int(np.argmin(distance))
    worst = SiblingPair(tree.nodes[parents[owner[k]]].path, tree.nodes[left[k]].path,
                        tree.nodes[right[k]].path, float(distance[k]))
    return float(node_means.mean()), worst.distinguishability, worst, len(parents)


def _group_sums(matrix: sparse.csr_matrix, groups: np.ndarray, count: int) -> sparse.csr_matrix:
    n = matrix.shape[0]
    indicator = sparse.csr_matrix((np.ones(n), (groups, np.arange(n))), shape=(count, n))
    return (indicator @ matrix).tocsr()


def _b2(matrix: sparse.csr_matrix, groups: np.ndarray, sums: sparse.csr_matrix
        ) -> tuple[float | None, float | None, float | None]:
    n = matrix.shape[0]
    norms = np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel()
    total = np.asarray(matrix.sum(axis=0)).ravel()
    all_sum = (float(total @ total) - norms.sum()) / 2.0
    all_count = n * (n - 1) / 2.0
    sizes = np.bincount(groups)
    group_sq = np.asarray(sums.multiply(sums).sum(axis=1)).ravel()
    norms_by_group = np.bincount(groups, weights=norms, minlength=len(sizes))
    same_sum = float(((group_sq - norms_by_group) / 2.0).sum())
    same_count = float((sizes * (sizes - 1) / 2.0).sum())
    cross_count = all_count - same_count
    same_mean = same_sum / same_count if same_count else None
    cross_mean = (all_sum - same_sum) / cross_count if cross_count else None
    if same_mean is None or cross_mean is None or cross_mean <= _EPS:
        return None, same_mean, cross_mean
    return same_mean / cross_mean, same_mean, cross_mean


def _b3(tree: StoreTree, units: list[Unit], matrix: sparse.csr_matrix, groups: np.ndarray,
        parents: list[int], sums: sparse.csr_matrix) -> tuple[float | None, list[Leak]]:
    if len(parents) < 2:
        return None, []
    lengths = np.sqrt(np.asarray(sums.multiply(sums).sum(axis=1)).ravel())
    scale = np.divide(1.0, lengths, out=np.zeros_like(lengths), where=lengths > 0)
    leaks: list[Leak] = []
    for start in range(0, len(units), _ROWS_PER_BLOCK):
        block = (matrix[start : start + _ROWS_PER_BLOCK] @ sums.T).toarray() * scale
        own_cols = groups[start : start + _ROWS_PER_BLOCK]
        rows = np.arange(len(own_cols))
        own = block[rows, own_cols]
        block[rows, own_cols] = -np.inf
        best = block.argmax(axis=1)
        other = block[rows, best]
        for r in np.nonzero(other > own + _EPS)[0]:
            unit = units[start + r]
            leaks.append(Leak(unit.key, tree.nodes[parents[own_cols[r]]].path,
                              tree.nodes[parents[best[r]]].path,
                              float(own[r]), float(other[r])))
    leaks.sort(key=lambda leak: (-(leak.other_cosine - leak.own_cosine), leak.unit))
    return len(leaks) / len(units), leaks


def _sample_pairs(n: int, max_pairs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``i < j`` of ``n`` items, or the first ``max_pairs`` distinct seeded draws."""
    total = n * (n - 1) // 2
    if total <= max_pairs:
        left, right = np.triu_indices(n, k=1)
        return left, right
    rng = np.random.default_rng(seed)
    codes = np.zeros(0, np.int64)
    while True:
        a = rng.integers(0, n, size=2 * max_pairs)
        b = rng.integers(0, n, size=2 * max_pairs)
        keep = a != b
        drawn = np.minimum(a, b)[keep] * n + np.maximum(a, b)[keep]
        codes = np.concatenate([codes, drawn])
        _, first = np.unique(codes, return_index=True)
        if len(first) >= max_pairs:
            chosen = np.sort(codes[np.sort(first)[:max_pairs]])
            return chosen // n, chosen % n


def _b4(tree: StoreTree, units: list[Unit], matrix: sparse.csr_matrix, max_pairs: int,
        seed: int) -> tuple[float | None, int]:
    if len(units) < 3:
        return None, 0
    left, right = _sample_pairs(len(units), max_pairs, seed)
    chains = [tree.ancestors(u.node) for u in units]
    longest = max(len(c) for c in chains)
    padded = np.full((len(units), longest), -1, dtype=np.int64)
    for row, chain in enumerate(chains):
        padded[row, : len(chain)] = chain
    depth = np.array([n.depth for n in tree.nodes])
    shared = np.cumprod((padded[left] == padded[right]) & (padded[left] >= 0), axis=1)
    common = shared.sum(axis=1)  # >= 1: every chain starts at the root
    lca = padded[left, common - 1]
    leaf = padded[np.arange(len(units)), [len(c) - 1 for c in chains]]
    tree_distance = depth[leaf[left]] + depth[leaf[right]] - 2 * depth[lca]
    content_distance = np.round(1.0 - cosine_rows(matrix, left, right), 12)
    if np.ptp(tree_distance) == 0 or np.ptp(content_distance) == 0:
        return None, len(left)
    from scipy.stats import spearmanr  # slow import, deferred

    rho = spearmanr(tree_distance, content_distance).statistic
    return float(rho), len(left)


def measure_taxonomy(
    tree: StoreTree,
    *,
    units_cache: TfidfCache | None = None,
    labels_cache: TfidfCache | None = None,
    min_chars: int = MIN_UNIT_CHARS,
    max_pairs: int = 5000,
    seed: int = 0,
) -> TaxonomyMetrics:
    """Compute Panel B over a combined tree.

    Args:
        tree: The store's combined tree.
        units_cache: Term counts of unit texts, reused across calls (e.g. snapshots).
        labels_cache: Term counts of labels, reused likewise.
        min_chars: Units with fewer characters are ignored by B2-B4.
        max_pairs: Largest number of unit pairs B4 correlates; more are sampled.
        seed: Seed of the B4 sample, so the same store always gives the same value.
    """
    b1, b1_min, worst, b1_nodes = _b1(tree, labels_cache or TfidfCache())
    units = [u for u in tree.units if len(u.text) >= min_chars]
    if len(units) < 2:
        return TaxonomyMetrics(len(units), b1, b1_min, worst, b1_nodes,
                               None, None, None, None, None, 0)
    matrix = (units_cache or TfidfCache()).matrix([u.text for u in units])
    parents = sorted({u.parent for u in units})
    column = {p: k for k, p in enumerate(parents)}
    groups = np.array([column[u.parent] for u in units], dtype=np.int64)
    sums = _group_sums(matrix, groups, len(parents))
    b2, same_mean, cross_mean = _b2(matrix, groups, sums)
    b3, leaks = _b3(tree, units, matrix, groups, parents, sums)
    b4, pairs = _b4(tree, units, matrix, max_pairs, seed)
    return TaxonomyMetrics(len(units), b1, b1_min, worst, b1_nodes, b2, same_mean,
                           cross_mean, b3, b4, pairs, leaks)
