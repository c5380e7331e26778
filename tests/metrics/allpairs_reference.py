"""The all-pairs computations the metrics used before they became linear, kept as references.

Each compares every pair it is defined over (quadratic), so the tests can check on
small stores that the linear versions find exactly the same pairs and values.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from memdir.metrics import MIN_UNIT_CHARS, StoreTree, TfidfCache
from memdir.metrics._text import cosine_rows


def _label_key(text: str) -> str:
    return " ".join(text.casefold().split())


def b1_all_pairs(tree: StoreTree) -> tuple[float, float, tuple[str, str, str]] | None:
    """B1, its minimum and the worst pair (parent, a, b) from every sibling pair."""
    parents, left, right = [], [], []
    for node in tree.nodes:
        if len(node.children) < 2:
            continue
        a, b = np.triu_indices(len(node.children), k=1)
        children = np.asarray(node.children)
        parents.append(node.id)
        left.append(children[a])
        right.append(children[b])
    if not parents:
        return None
    lft, rgt = np.concatenate(left), np.concatenate(right)
    matrix = TfidfCache().matrix([n.label for n in tree.nodes[1:]])
    sim = cosine_rows(matrix, lft - 1, rgt - 1)
    empty = np.asarray(matrix.getnnz(axis=1) == 0)
    for k in np.nonzero(empty[lft - 1] & empty[rgt - 1])[0].tolist():
        same = _label_key(tree.nodes[lft[k]].label) == _label_key(tree.nodes[rgt[k]].label)
        sim[k] = 1.0 if same else 0.0
    distance = 1.0 - np.clip(sim, 0.0, 1.0)
    sizes = np.array([len(tree.nodes[p].children) for p in parents])
    owner = np.repeat(np.arange(len(parents)), sizes * (sizes - 1) // 2)
    means = np.bincount(owner, weights=distance) / np.bincount(owner)
    k = int(np.argmin(distance))
    worst = (tree.nodes[parents[owner[k]]].path, tree.nodes[lft[k]].path,
             tree.nodes[rgt[k]].path)
    return float(means.mean()), float(distance[k]), worst


def duplicates_all_pairs(tree: StoreTree, threshold: float = 0.9) -> set[tuple[str, str]]:
    """Unit key pairs in different files at or above ``threshold``, from the full product."""
    units = [u for u in tree.units if len(u.text) >= MIN_UNIT_CHARS]
    matrix = TfidfCache().matrix([u.text for u in units])
    sim = (matrix @ matrix.T).toarray()
    found = set()
    for i, j in zip(*np.nonzero(sim >= threshold - 1e-12), strict=True):
        if i < j and units[i].file != units[j].file:
            found.add((units[i].key, units[j].key))
    return found


def b3_all_units(tree: StoreTree) -> float | None:
    """B3 from every unit against every centroid (dense)."""
    units = [u for u in tree.units if len(u.text) >= MIN_UNIT_CHARS]
    matrix = TfidfCache().matrix([u.text for u in units])
    parents = sorted({u.parent for u in units})
    if len(parents) < 2:
        return None
    column = {p: k for k, p in enumerate(parents)}
    groups = np.array([column[u.parent] for u in units])
    indicator = sparse.csr_matrix((np.ones(len(units)), (groups, np.arange(len(units)))),
                                  shape=(len(parents), len(units)))
    sums = (indicator @ matrix).toarray()
    sums /= np.linalg.norm(sums, axis=1, keepdims=True)
    cos = matrix.toarray() @ sums.T
    rows = np.arange(len(units))
    own = cos[rows, groups].copy()
    cos[rows, groups] = -np.inf
    return float(np.mean(cos.max(axis=1) > own + 1e-12))


def tree_distances(tree: StoreTree, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Edges between leaf nodes through their lowest common ancestor, by ancestor chains."""
    out = []
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        cx, cy = tree.ancestors(x), tree.ancestors(y)
        common = 0
        while common < min(len(cx), len(cy)) and cx[common] == cy[common]:
            common += 1
        lca = cx[common - 1]
        out.append(tree.nodes[x].depth + tree.nodes[y].depth - 2 * tree.nodes[lca].depth)
    return np.array(out)


class RowByRowTfidf:
    """The term cache as it was: one text at a time, each its own pair of small arrays.

    The batched :class:`memdir.metrics.TfidfCache` must build the same matrices bit
    for bit (the same term numbers, order and weights).
    """

    def __init__(self, stop_words: str | None = None) -> None:
        from collections import Counter

        from sklearn.feature_extraction.text import CountVectorizer

        self._counter = Counter
        self._analyze = CountVectorizer(stop_words=stop_words).build_analyzer()
        self._vocab: dict[str, int] = {}
        self._rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _row(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        row = self._rows.get(text)
        if row is None:
            counts = self._counter(self._analyze(text))
            ids = [self._vocab.setdefault(t, len(self._vocab)) for t in counts]
            columns = np.array(ids, dtype=np.int32)
            values = np.fromiter(counts.values(), dtype=np.float32, count=len(ids))
            order = np.argsort(columns)
            row = (columns[order], values[order])
            self._rows[text] = row
        return row

    def matrix(self, texts: list[str]) -> sparse.csr_matrix:
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


_MARGIN = 1e-9


def prefix_entries_one_pass(matrix: sparse.csr_matrix, threshold: float
                            ) -> tuple[np.ndarray, np.ndarray]:
    """``prefix_entries`` as it was: every entry sorted and measured in one pass.

    A row's entries are taken rarest term first (fewest rows holding it; ties by
    term number) while the norm of the entries from that one to the row's end is
    at least ``threshold`` (less a small margin).
    """
    matrix = sparse.csr_matrix(matrix)
    n, width = matrix.shape
    if matrix.nnz == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty
    df = np.bincount(matrix.indices, minlength=width)
    rank = np.empty(width, np.int64)
    rank[np.lexsort((np.arange(width), df))] = np.arange(width)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(matrix.indptr))
    order = np.lexsort((rank[matrix.indices], rows))
    cols = matrix.indices[order].astype(np.int64)
    squares = matrix.data[order] ** 2
    rows = rows[order]
    before = np.cumsum(squares) - squares  # squared mass of all earlier entries
    starts = matrix.indptr[:-1]
    row_base = np.zeros(n)
    nonempty = np.diff(matrix.indptr) > 0
    row_base[nonempty] = before[starts[nonempty]]
    totals = np.bincount(rows, weights=squares, minlength=n)
    remaining = totals[rows] - (before - row_base[rows])  # this entry and all after it
    cut = max(threshold - _MARGIN, 0.0)
    keep = remaining >= cut * cut - 1e-15 if cut > 0 else np.ones(len(rows), bool)
    return rows[keep], cols[keep]


def sketch_keys_one_pass(matrix: sparse.csr_matrix, terms: int) -> tuple[np.ndarray, np.ndarray]:
    """``_sketch_keys`` as it was, in one pass."""
    n, width = matrix.shape
    df = np.bincount(matrix.indices, minlength=width)
    rank = np.empty(width, np.int64)
    rank[np.lexsort((np.arange(width), df))] = np.arange(width)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(matrix.indptr))
    order = np.lexsort((rank[matrix.indices], rows))
    cols, rows = matrix.indices[order].astype(np.int64), rows[order]
    position = np.arange(len(rows)) - np.repeat(matrix.indptr[:-1], np.diff(matrix.indptr))
    first = position < terms
    cols, rows, position = cols[first], rows[first], position[first]
    kept = np.minimum(np.diff(matrix.indptr), terms)
    later = np.repeat(kept, kept) - 1 - position  # kept terms after this one in its row
    left = np.repeat(np.arange(len(rows)), later)
    offset = np.arange(len(left)) - np.repeat(np.cumsum(later) - later, later)
    right = left + 1 + offset
    x, y = np.minimum(cols[left], cols[right]), np.maximum(cols[left], cols[right])
    return x * width + y, rows[left]
