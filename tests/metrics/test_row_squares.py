"""Row sums of squares a run at a time are scipy's ``multiply(...).sum(axis=1)``, to the bit.

B1 and B2 need every row's squared length (units, labels and group sums);
:func:`row_squares` squares a run of rows at a time instead of holding the
elementwise product of the whole matrix. These tests compare it with scipy's
expression on canonical rows, rows in any order (as a sparse product leaves
them), repeated terms, explicit zeros, squares that underflow, empty rows and
runs as short as one entry.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from memdir.metrics._taxonomy import _group_sums, row_squares

VALUES = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1e-170, -3e-200, 1e-160, 1e150, 0.1, 1 / 3]),
)
ROW = st.lists(st.tuples(st.integers(0, 39), VALUES), max_size=30)


def _scipy(matrix: sparse.csr_matrix) -> np.ndarray:
    return np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel()


def _matrix(rows: list[list[tuple[int, float]]], order: str) -> sparse.csr_matrix:
    """Rows as given (``order="any"``), or each row's terms made unique and sorted."""
    indptr, indices, data = [0], [], []
    for row in rows:
        entries = sorted(dict(row).items()) if order == "sorted" else row
        indices += [j for j, _ in entries]
        data += [v for _, v in entries]
        indptr.append(len(indices))
    return sparse.csr_matrix((np.array(data, np.float64), np.array(indices, np.int32),
                              np.array(indptr, np.int32)), shape=(len(rows), 40))


@settings(max_examples=400, deadline=None)
@given(rows=st.lists(ROW, max_size=25), order=st.sampled_from(["sorted", "any"]),
       chunk=st.integers(1, 80))
def test_runs_of_rows_give_scipys_sums(rows: list[list[tuple[int, float]]], order: str,
                                       chunk: int) -> None:
    matrix = _matrix(rows, order)
    expected = _scipy(matrix)
    got = row_squares(matrix, chunk=chunk)
    assert got.dtype == np.float64 and got.tobytes() == expected.tobytes()


def test_a_repeated_term_is_added_before_it_is_squared_as_scipy_does() -> None:
    matrix = sparse.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]),
                                np.array([0, 3])), shape=(1, 3))
    assert row_squares(matrix).tolist() == _scipy(matrix).tolist() == [18.0]


def test_unsorted_rows_are_summed_last_term_first() -> None:
    """Sums of many terms in another order differ in their last bits: the order is scipy's."""
    rng = np.random.default_rng(3)
    values = rng.random(200) * 10.0 ** rng.integers(-8, 8, 200)
    columns = rng.permutation(1000)[:200].astype(np.int32)
    matrix = sparse.csr_matrix((values, columns, np.array([0, 200])), shape=(1, 1000))
    assert not matrix.has_canonical_format
    forward = np.add.reduceat(values**2, [0])
    backward = np.add.reduceat(values[::-1] ** 2, [0])
    assert forward.tobytes() != backward.tobytes()  # the test can tell the orders apart
    assert row_squares(matrix, chunk=7).tobytes() == _scipy(matrix).tobytes() \
        == backward.tobytes()


def test_group_sums_from_a_sparse_product_give_scipys_sums() -> None:
    """B2's group sums come from a product, whose rows are not sorted."""
    rng = np.random.default_rng(5)
    units = sparse.random(3000, 500, density=0.05, format="csr", random_state=7)
    sums = _group_sums(units, rng.integers(0, 400, 3000), 400)
    assert not sums.has_canonical_format
    for chunk in (1, 100, 1 << 20):
        assert row_squares(sums, chunk=chunk).tobytes() == _scipy(sums).tobytes()
        assert row_squares(units, chunk=chunk).tobytes() == _scipy(units).tobytes()


def test_no_array_as_large_as_the_matrix_is_held() -> None:
    """scipy's product holds room for twice the entries; a run holds a few of them."""
    units = sparse.random(20_000, 5000, density=0.01, format="csr", random_state=1)
    entries = units.data.nbytes + units.indices.nbytes
    tracemalloc.start()
    try:
        row_squares(units, chunk=10_000)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        _scipy(units)
        _, scipy_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert scipy_peak > entries  # what scipy's way costs, so the bound below means something
    assert peak < entries / 4
