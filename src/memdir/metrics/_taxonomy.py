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
  included in its own centroid, as in the definition). Past a budget of
  unit-centroid cosines it is the share of a sample of units picked by a seeded
  hash of their keys, reported with its standard error and a 95% interval.
- B4, distance mirrors relatedness: Spearman correlation between the tree distance
  of two units (edges through their lowest common ancestor) and their content
  distance ``1 - cos``, over all unit pairs or, past ``max_pairs``, a seeded sample.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field
from itertools import chain

import numpy as np
from scipy import sparse

from memdir.metrics._b3 import GroupSums, NearestOther, Sums, nearest_other
from memdir.metrics._pairs import similar_pairs, unique_first
from memdir.metrics._text import TfidfCache, cosine_rows, row_runs
from memdir.metrics._tree import StoreTree, Unit

__all__ = ["Leak", "SiblingPair", "TaxonomyMetrics", "measure_taxonomy"]

MIN_UNIT_CHARS = 40
B3_BUDGET = 20_000_000
"""Unit-centroid cosines B3 computes over every unit; past them it samples units."""
B3_MIN_SAMPLE = 1000
"""The fewest units a sampled B3 compares (a standard error of at most 1.6 percentage
points, about 0.25 at the leakage of the benchmark stores)."""
_Z95 = 1.959963984540054
_EPS = 1e-12


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
    b3_units: int = 0
    """Units B3 compared with every centroid: all of them, or its seeded sample."""
    b3_stderr: float | None = None
    """Standard error of ``b3_leakage`` as an estimate of the share over every unit
    (0.0 when every unit was compared)."""
    b3_interval: tuple[float, float] | None = None
    """A 95% interval for the share over every unit (Wilson's; a point when exact)."""

    def to_dict(self) -> dict[str, object]:
        """A plain mapping for JSON."""
        return asdict(self)


def _label_key(text: str) -> str:
    return " ".join(text.casefold().split())


def _sibling_groups(tree: StoreTree) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Nodes with two or more children, and for each child row (node id - 1) its group.

    Returns:
        The parents (node ids, in node order), the child rows, and each row's
        group (its parent's position in the first list).
    """
    nodes = tree.nodes
    parents = [node.id for node in nodes if len(node.children) >= 2]
    children = [nodes[p].children for p in parents]
    sizes = np.fromiter(map(len, children), np.int64, count=len(children))
    rows = np.fromiter(chain.from_iterable(children), np.int64, count=int(sizes.sum()))
    rows -= 1  # the root has no row: row r is node r + 1
    return parents, rows, np.repeat(np.arange(len(parents), dtype=np.int64), sizes)


def _first_two(keys: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each key held by two or more rows, its two smallest rows."""
    if len(keys) < 2:
        empty = np.zeros(0, np.int64)
        return empty, empty
    order = np.lexsort((rows, keys))
    keys, rows = keys[order], rows[order]
    same = np.flatnonzero(keys[1:] == keys[:-1])
    heads = same[np.concatenate([[True], keys[same[1:]] != keys[same[:-1]]])] if len(same) \
        else same
    return rows[heads], rows[heads + 1]


def _row_keys(matrix: sparse.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """A key per row such that two rows share one exactly when their entries are identical.

    Keys are numbered in the order rows first show them. Each row is read as the
    bytes of its entries, each entry's term then its value, sliced from one byte
    string of the whole matrix: two slices are equal exactly when the rows have
    as many entries and the same terms and values (their bytes). One slice and one
    hash per row, the loop in C (``map``), instead of two arrays sliced per row.
    """
    entry = np.dtype([("term", matrix.indices.dtype), ("value", matrix.data.dtype)])
    entries = np.empty(len(matrix.indices), entry)
    entries["term"] = matrix.indices
    entries["value"] = matrix.data
    table = entries.tobytes()
    del entries
    width = entry.itemsize
    starts = (matrix.indptr[rows].astype(np.int64) * width).tolist()
    ends = (matrix.indptr[rows + 1].astype(np.int64) * width).tolist()
    keys = list(map(table.__getitem__, map(slice, starts, ends)))
    del table
    number = {key: k for k, key in enumerate(dict.fromkeys(keys))}
    return np.fromiter(map(number.__getitem__, keys), np.int64, count=len(keys))


def _b1_worst(tree: StoreTree, matrix: sparse.csr_matrix, rows: np.ndarray, owner: np.ndarray,
              empty: np.ndarray) -> tuple[int, int, float]:
    """The most alike sibling pair (rows ``a < b``) and its distance, as all pairs would find it.

    Of the pairs at the least distance, the first in the order of the all-pairs
    enumeration wins (parents in node order, then child pairs in order). Rows with
    identical vectors are grouped first and only the earliest of each group is
    searched further (any pair through a later copy has the same distance and
    comes later); pairs of empty labels that read the same count as identical.
    """
    nonempty = ~empty[rows]
    vector_key = _row_keys(matrix, rows[nonempty])
    cand_a, cand_b = [], []
    a, b = _first_two(owner[nonempty] * (len(rows) + 1) + vector_key, rows[nonempty])
    cand_a.append(a)
    cand_b.append(b)
    text_ids: dict[str, int] = {}
    empty_rows = rows[~nonempty]
    text_key = np.array([text_ids.setdefault(_label_key(tree.nodes[r + 1].label), len(text_ids))
                         for r in empty_rows.tolist()], np.int64)
    ea, eb = _first_two(owner[~nonempty] * (len(rows) + 1) + text_key, empty_rows)
    # representatives: the earliest row of each (group, vector)
    rep_mask = np.zeros(len(vector_key), bool)
    if len(vector_key):
        order = np.lexsort((rows[nonempty], vector_key, owner[nonempty]))
        keys = (owner[nonempty] * (len(rows) + 1) + vector_key)[order]
        rep_mask[order[np.concatenate([[True], keys[1:] != keys[:-1]])]] = True
    reps = rows[nonempty][rep_mask]
    group_of = np.full(matrix.shape[0], -1, np.int64)
    group_of[rows] = owner
    sub = matrix[reps]
    # A known pair at (nearly) cosine 1 leaves only pairs as close to look for; else
    # look at ever lower cosines until some pair is found (the last pass: any shared term).
    top = 1.0 if len(ea) else float(cosine_rows(matrix, a, b).max()) if len(a) else None
    thresholds = [top - 1e-9] if top is not None else [0.9, 0.6, 0.3, 0.1, 1e-12]
    for threshold in thresholds:
        pa, pb, _ = similar_pairs(sub, threshold, groups=group_of[reps])
        cand_a.append(reps[pa])
        cand_b.append(reps[pb])
        if len(pa):
            break
    a, b = np.concatenate(cand_a), np.concatenate(cand_b)
    distance = 1.0 - np.clip(cosine_rows(matrix, a, b), 0.0, 1.0)
    a, b = np.concatenate([a, ea]), np.concatenate([b, eb])
    distance = np.concatenate([distance, np.zeros(len(ea))])
    if len(a) == 0:  # no two siblings share a word: every pair is at distance 1
        first = np.flatnonzero(owner == 0)[:2]
        return int(rows[first[0]]), int(rows[first[1]]), 1.0
    best = distance.min()
    tied = np.flatnonzero(distance == best)
    pick = tied[np.lexsort((b[tied], a[tied], group_of[a[tied]]))[0]]
    return int(a[pick]), int(b[pick]), float(best)


def _b1(tree: StoreTree, labels: TfidfCache) -> tuple[float | None, float | None,
                                                      SiblingPair | None, int]:
    """B1 in one pass over the nodes: the mean from group sums, the minimum by pair search.

    The sum of cosines over a group's pairs is ``(|sum of rows|^2 - sum of |row|^2) / 2``
    for unit rows, so the mean distance of every node needs no pair at all; the
    worst pair is found by :func:`_b1_worst`.
    """
    parents, rows, owner = _sibling_groups(tree)
    if not parents:
        return None, None, None, 0
    matrix = labels.matrix([n.label for n in tree.nodes[1:]])
    empty = np.asarray(matrix.getnnz(axis=1) == 0)
    children = matrix[rows]
    sums = _group_sums(children, owner, len(parents))
    norms = np.bincount(owner, weights=row_squares(children), minlength=len(parents))
    del children
    cos_sum = (row_squares(sums) - norms) / 2.0
    same_empty = np.zeros(len(parents))
    for (group, _), count in _count_empty(tree, rows, owner, empty).items():
        same_empty[group] += count * (count - 1) / 2.0
    sizes = np.bincount(owner, minlength=len(parents)).astype(np.float64)
    pairs = sizes * (sizes - 1) / 2.0
    node_means = 1.0 - np.clip((cos_sum + same_empty) / pairs, 0.0, 1.0)
    a, b, distance = _b1_worst(tree, matrix, rows, owner, empty)
    parent = tree.nodes[a + 1].parent
    worst = SiblingPair(tree.nodes[parent].path, tree.nodes[a + 1].path, tree.nodes[b + 1].path,
                        distance)
    return float(node_means.mean()), worst.distinguishability, worst, len(parents)


def _count_empty(tree: StoreTree, rows: np.ndarray, owner: np.ndarray, empty: np.ndarray
                 ) -> dict[tuple[int, str], int]:
    """How many labels without a word read the same, per group and text."""
    counts: dict[tuple[int, str], int] = {}
    for r, g in zip(rows[empty[rows]].tolist(), owner[empty[rows]].tolist(), strict=True):
        key = (g, _label_key(tree.nodes[r + 1].label))
        counts[key] = counts.get(key, 0) + 1
    return counts


def _group_sums(matrix: sparse.csr_matrix, groups: np.ndarray, count: int) -> sparse.csr_matrix:
    n = matrix.shape[0]
    indicator = sparse.csr_matrix((np.ones(n), (groups, np.arange(n))), shape=(count, n))
    return (indicator @ matrix).tocsr()


_SQUARES_CHUNK = 1 << 20
"""Matrix entries :func:`row_squares` squares at once."""


def _canonical(matrix: sparse.csr_matrix, runs: list[tuple[int, int]]) -> bool:
    """Whether every row's terms are strictly increasing (scipy's canonical CSR format).

    The test sparsetools makes on the arrays themselves before an elementwise
    product (not the matrix's cached flag), made one run of rows at a time.
    """
    indptr, indices = matrix.indptr, matrix.indices
    if np.any(indptr[1:] < indptr[:-1]):
        return False
    for a, b in runs:
        lo, hi = indptr[a], indptr[b]
        rises = np.diff(indices[lo:hi].astype(np.int64)) > 0
        starts = indptr[a + 1 : b]
        starts = starts[(starts > lo) & (starts < hi)]
        rises[starts - lo - 1] = True  # a row's first term may fall below the last one's
        if not rises.all():
            return False
    return True


def _repeats_a_term(matrix: sparse.csr_matrix, runs: list[tuple[int, int]]) -> bool:
    """Whether some row holds one term twice."""
    indptr, indices = matrix.indptr, matrix.indices
    for a, b in runs:
        lo, hi = indptr[a], indptr[b]
        row = np.repeat(np.arange(b - a, dtype=np.int64), np.diff(indptr[a : b + 1]))
        keys = np.sort(row * matrix.shape[1] + indices[lo:hi])
        if np.any(keys[1:] == keys[:-1]):
            return True
    return False


def row_squares(matrix: sparse.csr_matrix, *, chunk: int = _SQUARES_CHUNK) -> np.ndarray:
    """Each row's sum of squares, ``matrix.multiply(matrix).sum(axis=1)`` to the bit.

    That expression holds a product as large as the matrix (room for twice its
    entries, allocated); this one squares a run of about ``chunk`` entries at a
    time. The sums are scipy's: the squares a row keeps (those not zero), in the
    order the product lists them (the row's own order when the matrix is
    canonical, else its reverse), added by one ``np.add.reduceat`` per run of
    rows, as scipy adds the product's rows. Each row's sum depends on its entries
    alone, so runs give the same floats as one call. A matrix of other than
    float64 values, or one not canonical whose row holds a term twice (scipy adds
    the copies before it squares them), is left to scipy's expression.
    Cost: linear in the matrix's entries.
    """
    indptr = matrix.indptr.astype(np.int64)
    runs = row_runs(indptr, chunk)
    reverse = not _canonical(matrix, runs)
    if matrix.dtype != np.float64 or (reverse and _repeats_a_term(matrix, runs)):
        return np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel()
    out = np.zeros(matrix.shape[0])
    for first, end in runs:
        lo, hi = indptr[first], indptr[end]
        sizes = np.diff(indptr[first : end + 1])
        squares = matrix.data[lo:hi] ** 2
        if reverse:  # sparsetools' general product lists a row's terms last to first
            starts = indptr[first:end] - lo
            squares = squares[np.repeat(2 * starts + sizes - 1, sizes) - np.arange(hi - lo)]
        kept = squares != 0
        if not kept.all():
            row = np.repeat(np.arange(end - first), sizes)
            squares = squares[kept]
            sizes = np.bincount(row[kept], minlength=end - first)
        nonempty = np.flatnonzero(sizes)
        if len(nonempty):
            heads = (np.cumsum(sizes) - sizes)[nonempty]
            out[first + nonempty] = np.add.reduceat(squares, heads)
    return out


def _group_squares(sums: Sums) -> np.ndarray:
    """:func:`row_squares` of the group sums, a block at a time when they are not held.

    Each block's rows are the whole matrix's, and each row's sum depends on its
    entries and on the order the whole matrix is summed in (canonical or not);
    when the blocks disagree on that order, the whole matrix is made and summed.
    """
    if not isinstance(sums, GroupSums):
        return row_squares(sums)
    parts: list[np.ndarray] = []
    orders: set[bool] = set()
    for lo, hi in sums.ranges(_SQUARES_CHUNK):
        block = sums.rows(np.arange(lo, hi))
        orders.add(_canonical(block, row_runs(block.indptr.astype(np.int64), _SQUARES_CHUNK)))
        parts.append(row_squares(block))
    if len(orders) > 1:
        return row_squares(sums.whole())
    return np.concatenate(parts) if parts else np.zeros(0)


def _b2(matrix: sparse.csr_matrix, groups: np.ndarray, sums: Sums
        ) -> tuple[float | None, float | None, float | None]:
    n = matrix.shape[0]
    norms = row_squares(matrix)
    total = np.asarray(matrix.sum(axis=0)).ravel()
    all_sum = (float(total @ total) - norms.sum()) / 2.0
    all_count = n * (n - 1) / 2.0
    sizes = np.bincount(groups)
    group_sq = _group_squares(sums)
    norms_by_group = np.bincount(groups, weights=norms, minlength=len(sizes))
    same_sum = float(((group_sq - norms_by_group) / 2.0).sum())
    same_count = float((sizes * (sizes - 1) / 2.0).sum())
    cross_count = all_count - same_count
    same_mean = same_sum / same_count if same_count else None
    cross_mean = (all_sum - same_sum) / cross_count if cross_count else None
    if same_mean is None or cross_mean is None or cross_mean <= _EPS:
        return None, same_mean, cross_mean
    return same_mean / cross_mean, same_mean, cross_mean


def _unit_hashes(keys: list[str], seed: int) -> np.ndarray:
    """A seeded 64-bit hash of each unit key: a unit's rank in the sample depends on it alone."""
    prefix = f"{seed}\0".encode()
    return np.fromiter((int.from_bytes(hashlib.blake2b(prefix + k.encode(), digest_size=8)
                                       .digest(), "big") for k in keys), np.uint64, len(keys))


def _b3_units(keys: list[str], groups: int, budget: int, seed: int,
              sample: int | None = None) -> np.ndarray:
    """The units B3 compares with every centroid, as sorted positions in ``keys``.

    Every unit while ``len(keys) * groups`` stays within ``budget`` (or while
    there are no more than ``sample`` units, when a sample size is given). Else
    the ``k`` units whose seeded key hashes are smallest, ``k`` being ``sample``
    or ``budget // groups`` (at least :data:`B3_MIN_SAMPLE`). A unit is in the
    sample by its own hash, so as units come and go, one stays in the sample
    until ``k`` units of smaller hash are ahead of it; equal keys go by position.
    Cost: one hash per unit.
    """
    n = len(keys)
    if sample is None:
        if n * groups <= budget:
            return np.arange(n)
        size = max(B3_MIN_SAMPLE, budget // max(groups, 1))
    else:
        size = sample
    if size >= n:
        return np.arange(n)
    order = np.lexsort((np.arange(n), _unit_hashes(keys, seed)))
    return np.sort(order[:size])


def _b3_error(share: float, chosen: int, units: int) -> tuple[float, tuple[float, float]]:
    """Standard error and 95% Wilson interval of a share seen in ``chosen`` of ``units``.

    Units are drawn without replacement, so the variance carries the finite
    population factor ``(N - n) / (N - 1)``; the interval uses the sample size
    that factor makes effective. Every unit compared: no error, a point interval.
    """
    if chosen >= units:
        return 0.0, (share, share)
    factor = (units - chosen) / (units - 1)
    stderr = math.sqrt(share * (1.0 - share) / chosen * factor)
    size = chosen / factor
    z2 = _Z95 * _Z95
    middle = (share + z2 / (2 * size)) / (1 + z2 / size)
    half = _Z95 * math.sqrt(share * (1 - share) / size + z2 / (4 * size * size)) / (1 + z2 / size)
    return stderr, (max(0.0, middle - half), min(1.0, middle + half))


def _b3(tree: StoreTree, units: list[Unit], matrix: sparse.csr_matrix, groups: np.ndarray,
        parents: list[int], sums: Sums, *, budget: int, seed: int,
        sample: int | None = None) -> tuple[float | None, list[Leak], int]:
    """B3 over every unit, or over a seeded sample of them past ``budget`` unit-centroid cosines.

    Each chosen unit is compared with every centroid: pairs a bound proves
    cannot leak are skipped, the rest computed exactly (see ``memdir.metrics._b3``).

    Returns:
        The leaking share of the chosen units, their leaks, and how many were chosen.
    """
    if len(parents) < 2:
        return None, [], 0
    chosen = _b3_units([u.key for u in units], len(parents), budget, seed, sample)
    found = nearest_other(matrix, groups, sums, chosen, _EPS)
    return _b3_result(tree, units, groups, parents, chosen, found)


def _b3_result(tree: StoreTree, units: list[Unit], groups: np.ndarray, parents: list[int],
               chosen: np.ndarray, found: NearestOther) -> tuple[float, list[Leak], int]:
    """B3's share, leaks (the worst first) and sample size from the nearest other centroids."""
    leaks: list[Leak] = []
    for r in np.flatnonzero(found.other > found.own + _EPS).tolist():
        unit = units[chosen[r]]
        leaks.append(Leak(unit.key, tree.nodes[parents[groups[chosen[r]]]].path,
                          tree.nodes[parents[found.best[r]]].path,
                          float(found.own[r]), float(found.other[r])))
    leaks.sort(key=lambda leak: (-(leak.other_cosine - leak.own_cosine), leak.unit))
    return len(leaks) / len(chosen), leaks, len(chosen)


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
        _, first = unique_first(codes)
        if len(first) >= max_pairs:
            chosen = np.sort(codes[np.sort(first)[:max_pairs]])
            return chosen // n, chosen % n


def _lowest_common(parent: np.ndarray, depth: np.ndarray, a: np.ndarray, b: np.ndarray
                   ) -> np.ndarray:
    """The lowest common ancestor of each node pair: the deeper one climbs, or both (iterative)."""
    a, b = a.copy(), b.copy()
    while True:
        level = (depth[a] == depth[b]) & (a != b)
        up_a = (depth[a] > depth[b]) | level
        up_b = (depth[b] > depth[a]) | level
        if not (up_a.any() or up_b.any()):
            return a
        a[up_a] = parent[a[up_a]]
        b[up_b] = parent[b[up_b]]


def _b4(tree: StoreTree, units: list[Unit], matrix: sparse.csr_matrix, max_pairs: int,
        seed: int) -> tuple[float | None, int]:
    if len(units) < 3:
        return None, 0
    left, right = _sample_pairs(len(units), max_pairs, seed)
    depth = np.array([n.depth for n in tree.nodes], dtype=np.int64)
    parent = np.array([max(n.parent, 0) for n in tree.nodes], dtype=np.int64)
    leaf = np.array([u.node for u in units], dtype=np.int64)
    lca = _lowest_common(parent, depth, leaf[left], leaf[right])
    tree_distance = depth[leaf[left]] + depth[leaf[right]] - 2 * depth[lca]
    content_distance = np.round(1.0 - cosine_rows(matrix, left, right), 12)
    if np.ptp(tree_distance) == 0 or np.ptp(content_distance) == 0:
        return None, len(left)
    return _spearman(tree_distance, content_distance), len(left)


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given their mean rank (``scipy.stats.rankdata``'s default)."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    head = np.concatenate([[True], ordered[1:] != ordered[:-1]])
    dense = np.cumsum(head)  # 1-based tie group of each sorted value
    ends = np.concatenate([np.flatnonzero(head), [len(values)]])  # each group's start, then n
    ranks = np.empty(len(values), np.float64)
    ranks[order] = 0.5 * (ends[dense] + ends[dense - 1] + 1)
    return ranks


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho of two non-constant samples, as ``scipy.stats.spearmanr`` computes it.

    The Pearson correlation of the average ranks, through the same ``np.corrcoef``
    call, without importing ``scipy.stats`` (over a second per command).
    """
    both = np.column_stack((a, b))
    ranked = np.column_stack((_average_ranks(both[:, 0]), _average_ranks(both[:, 1])))
    return float(np.corrcoef(ranked, rowvar=False)[1, 0])


def measure_taxonomy(
    tree: StoreTree,
    *,
    units_cache: TfidfCache | None = None,
    labels_cache: TfidfCache | None = None,
    min_chars: int = MIN_UNIT_CHARS,
    max_pairs: int = 5000,
    seed: int = 0,
    b3_budget: int = B3_BUDGET,
    b3_sample: int | None = None,
) -> TaxonomyMetrics:
    """Compute Panel B over a combined tree.

    Args:
        tree: The store's combined tree.
        units_cache: Term counts of unit texts, reused across calls (e.g. snapshots).
        labels_cache: Term counts of labels, reused likewise.
        min_chars: Units with fewer characters are ignored by B2-B4.
        max_pairs: Largest number of unit pairs B4 correlates; more are sampled.
        seed: Seed of the B3 and B4 samples, so the same store always gives the same value.
        b3_budget: Unit-centroid cosines B3 computes over every unit; past it, B3 is the
            share of a sample of ``b3_budget // groups`` units (at least
            :data:`B3_MIN_SAMPLE`), chosen by seeded hashes of their keys, each
            compared with every centroid.
        b3_sample: Compare this many units instead (every unit when there are no
            more), whatever the budget.
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
    sums = GroupSums(matrix, groups, len(parents))  # made a block at a time: never held whole
    b2, same_mean, cross_mean = _b2(matrix, groups, sums)
    b3, leaks, b3_units = _b3(tree, units, matrix, groups, parents, sums, budget=b3_budget,
                              seed=seed, sample=b3_sample)
    stderr, interval = _b3_error(b3, b3_units, len(units)) if b3 is not None else (None, None)
    b4, pairs = _b4(tree, units, matrix, max_pairs, seed)
    return TaxonomyMetrics(len(units), b1, b1_min, worst, b1_nodes, b2, same_mean,
                           cross_mean, b3, b4, pairs, leaks, b3_units, stderr, interval)
