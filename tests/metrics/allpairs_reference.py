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
