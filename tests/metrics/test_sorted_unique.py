"""The sort-based stand-ins for ``np.unique`` give numpy's own answers."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memdir.metrics._pairs import _run_sizes, unique_first


@given(st.lists(st.integers(-5, 40) | st.integers(-(2**62), 2**62), max_size=60))
def test_unique_first_and_run_sizes_equal_numpys_unique(items: list[int]) -> None:
    values = np.asarray(items, np.int64)
    want_values, want_first, inverse, counts = np.unique(
        values, return_index=True, return_inverse=True, return_counts=True)
    got_values, got_first = unique_first(values)
    assert got_values.tolist() == want_values.tolist()
    assert got_first.tolist() == want_first.tolist()
    assert _run_sizes(values).tolist() == counts[inverse].tolist()
