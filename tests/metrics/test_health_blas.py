"""BLAS at one thread during a measurement, at its starting threads for B2's dot product."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from threadpoolctl import threadpool_info

from memdir.metrics._blas import one_blas_thread, started_blas_threads
from memdir.metrics._taxonomy import _b2


def _blas_threads() -> list[int]:
    return [int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_thread_inside_and_the_starting_threads_back_after() -> None:
    before = _blas_threads()
    assert before, "numpy's BLAS is loaded"
    with one_blas_thread():
        assert _blas_threads() == [1] * len(before)
        with started_blas_threads():
            assert _blas_threads() == before
        assert _blas_threads() == [1] * len(before)
    assert _blas_threads() == before


def test_starting_threads_outside_a_measurement_change_nothing() -> None:
    before = _blas_threads()
    with started_blas_threads():
        assert _blas_threads() == before
    assert _blas_threads() == before


def test_threads_come_back_when_the_block_raises() -> None:
    before = _blas_threads()
    try:
        with one_blas_thread():
            raise KeyError("inside")
    except KeyError:
        pass
    assert _blas_threads() == before


def test_b2_gives_the_same_floats_at_one_thread() -> None:
    # Long enough for OpenBLAS to split the dot product of the column totals across threads
    # (it does past 10,000 entries).
    rng = np.random.default_rng(7)
    rows, width = 600, 60_000
    matrix = sparse.random(rows, width, density=0.01, format="csr", random_state=rng)
    lengths = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    matrix = sparse.csr_matrix(sparse.diags(1.0 / np.where(lengths > 0, lengths, 1.0)) @ matrix)
    groups = rng.integers(0, 40, rows).astype(np.int64)
    indicator = sparse.csr_matrix((np.ones(rows), (groups, np.arange(rows))), shape=(40, rows))
    sums = sparse.csr_matrix(indicator @ matrix)
    outside = _b2(matrix, groups, sums)
    total = np.asarray(matrix.sum(axis=0)).ravel()
    with one_blas_thread():
        inside = _b2(matrix, groups, sums)
        dot_inside = float(total @ total)
        with started_blas_threads():
            dot_started = float(total @ total)
    assert [float(v).hex() for v in inside if v is not None] == \
        [float(v).hex() for v in outside if v is not None]
    assert dot_started.hex() == float(total @ total).hex()
    assert abs(dot_inside - dot_started) <= 1e-9 * abs(dot_started)
