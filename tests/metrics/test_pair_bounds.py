"""The block bound on candidate pairs never drops a pair the search would report.

The bound must lie at or above every pair's dot product (the cosine the search
computes), whatever the rows hold; and the search with it must return the same
arrays, bit for bit, as the all-pairs product restricted to the threshold.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from memdir.metrics._pairs import BLOCKS, block_bounds, pair_bounds, similar_pairs
from memdir.metrics._text import cosine_rows


def _unit_rows(seed: int, n: int, width: int, density: float) -> sparse.csr_matrix:
    rng = np.random.default_rng(seed)
    matrix = sparse.random(n, width, density=density, format="csr", random_state=rng)
    matrix.data = np.round(matrix.data, 2) + 0.01  # ties between weights, as counts give
    copies = rng.integers(0, n, n // 5)
    matrix = sparse.vstack([matrix, matrix[copies]]).tocsr()  # exact copies
    keep = np.ones(matrix.shape[0])
    keep[2] = 0.0  # an empty row
    matrix = sparse.csr_matrix(sparse.diags(keep) @ matrix)
    matrix.eliminate_zeros()
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1.0 / norms) @ matrix)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("width", [5, BLOCKS, 300])
def test_the_bound_is_at_least_every_pairs_dot_product(seed: int, width: int) -> None:
    matrix = _unit_rows(seed, 150, width, 0.2)
    levels, scale = block_bounds(matrix, chunk=37)
    a, b = np.triu_indices(matrix.shape[0], k=1)
    bound = pair_bounds(levels, scale, a, b)
    dots = cosine_rows(matrix, a, b)
    # The bound holds in exact arithmetic; the computed cosine of a row with its copy
    # can round one bit above 1 (the search's margin of 1e-9 covers such rounding).
    assert (bound >= dots - 1e-12).all()
    assert (bound > 0.5)[dots > 0.5].all()
    assert levels.shape == (matrix.shape[0], BLOCKS) and levels.dtype == np.uint8


def test_the_chunks_do_not_change_the_bytes() -> None:
    matrix = _unit_rows(7, 200, 120, 0.1)
    whole = block_bounds(matrix)
    for chunk in (1, 50, 333):
        levels, scale = block_bounds(matrix, chunk=chunk)
        assert np.array_equal(levels, whole[0]) and np.array_equal(scale, whole[1])


def test_a_row_alone_in_one_block_is_bounded_tightly() -> None:
    # Two rows whose terms fall in disjoint blocks have a bound of 0; a row against
    # itself has a bound of at least 1 and, with one term per block, at most 1 + 2/255.
    left = sparse.csr_matrix((np.full(4, 0.5), np.arange(4), [0, 4]), shape=(1, 2 * BLOCKS))
    right = sparse.csr_matrix((np.full(4, 0.5), np.arange(4) + 4, [0, 4]),
                              shape=(1, 2 * BLOCKS))
    matrix = sparse.vstack([left, right]).tocsr()
    levels, scale = block_bounds(matrix)
    apart = pair_bounds(levels, scale, np.array([0]), np.array([1]))
    same = pair_bounds(levels, scale, np.array([0]), np.array([0]))
    assert apart[0] == 0.0
    assert 1.0 <= same[0] <= 1.0 + 2 / 255 + 1e-12


def test_an_empty_matrix_has_zero_bounds() -> None:
    levels, scale = block_bounds(sparse.csr_matrix((3, 4)))
    assert not levels.any() and not scale.any()
    assert pair_bounds(levels, scale, np.array([0, 1]), np.array([2, 2])).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("threshold", [0.999, 0.9, 0.5, 1e-12])
def test_the_search_returns_the_all_pairs_arrays_bit_for_bit(seed: int,
                                                              threshold: float) -> None:
    matrix = _unit_rows(seed, 200, 40, 0.12)
    groups = np.random.default_rng(seed).integers(0, 3, matrix.shape[0])
    for g, sketch in ((None, None), (groups, None), (None, 4)):
        a, b, cos = similar_pairs(matrix, threshold, groups=g, sketch=sketch, sketch_run=3)
        i, j = np.triu_indices(matrix.shape[0], k=1)
        if g is not None:
            i, j = i[g[i] == g[j]], j[g[i] == g[j]]
        full = cosine_rows(matrix, i, j)
        near = (full >= threshold - 1e-12) & (full > 0)
        if sketch is None:  # exact: the very pairs and the very cosines of the product
            assert np.array_equal(a, i[near]) and np.array_equal(b, j[near])
            assert np.array_equal(cos, full[near])
        else:  # a sketch may miss pairs, never add one, and computes the same cosines
            found = dict(zip(zip(i.tolist(), j.tolist(), strict=True), full.tolist(),
                             strict=True))
            assert [found[p] for p in zip(a.tolist(), b.tolist(), strict=True)] == cos.tolist()
            assert (cos >= threshold - 1e-12).all()
