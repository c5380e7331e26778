"""The prefix and sketch passes taken a few rows at a time give what one pass gave, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from allpairs_reference import prefix_entries_one_pass, sketch_keys_one_pass
from scipy import sparse

from memdir.metrics._pairs import _sketch_keys, prefix_entries


def _unit_rows(seed: int, n: int, width: int, density: float) -> sparse.csr_matrix:
    rng = np.random.default_rng(seed)
    matrix = sparse.random(n, width, density=density, format="csr", random_state=rng)
    matrix.data = np.round(matrix.data, 2) + 0.01  # ties between weights, as counts give
    matrix[3] = 0  # an empty row
    matrix.eliminate_zeros()
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1.0 / norms) @ matrix)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chunk", [1, 7, 64, 10_000_000])
def test_chunks_change_nothing(seed: int, chunk: int) -> None:
    matrix = _unit_rows(seed, 400, 90, 0.08)
    for threshold in (0.0, 0.3, 0.9, 1.0):
        rows, cols = prefix_entries(matrix, threshold, chunk=chunk)
        old_rows, old_cols = prefix_entries_one_pass(matrix, threshold)
        assert np.array_equal(rows, old_rows) and np.array_equal(cols, old_cols)
        assert rows.dtype == old_rows.dtype and cols.dtype == old_cols.dtype
    for terms in (1, 4):
        keys, owners = _sketch_keys(matrix, terms, chunk=chunk)
        old_keys, old_owners = sketch_keys_one_pass(matrix, terms)
        assert np.array_equal(keys, old_keys) and np.array_equal(owners, old_owners)


def test_an_empty_matrix_has_no_entries() -> None:
    empty = sparse.csr_matrix((5, 3))
    assert all(len(a) == 0 for a in prefix_entries(empty, 0.5, chunk=2))
    assert all(len(a) == 0 for a in _sketch_keys(empty, 4, chunk=2))
