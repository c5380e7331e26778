"""The batched term cache builds the matrices the row-by-row one built, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from allpairs_reference import RowByRowTfidf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.metrics import TfidfCache, _text

WORDS = ["cat", "the", "mat", "and", "Dogs", "über", "x1", "a", "of", "is", "b2b", "ÉTÉ"]
TEXT = st.lists(st.sampled_from(WORDS + [" ", "\n", ", ", "-"]), max_size=30).map("".join)
CALLS = st.lists(st.lists(TEXT, max_size=12), min_size=1, max_size=4)


def _same(ours: object, reference: object) -> None:
    for part in ("indptr", "indices", "data"):
        left, right = getattr(ours, part), getattr(reference, part)
        assert left.dtype == right.dtype and np.array_equal(left, right), part
    assert ours.shape == reference.shape  # type: ignore[attr-defined]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=CALLS, stop=st.sampled_from([None, "english"]))
def test_every_call_gives_the_row_by_row_matrix(calls: list[list[str]], stop: str | None) -> None:
    """Repeated texts, empty ones, a vocabulary grown over several calls, stop words."""
    ours, reference = TfidfCache(stop_words=stop), RowByRowTfidf(stop_words=stop)
    for texts in calls:
        _same(ours.matrix(texts), reference.matrix(texts))


def test_a_batch_larger_than_the_first_buffer_keeps_every_text(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_text, "_BATCH_TEXTS", 333)  # counted in batches of 333 texts
    texts = [f"word{k} shared{k % 7} common" for k in range(5000)]
    ours, reference = TfidfCache(), RowByRowTfidf()
    _same(ours.matrix(texts[:10]), reference.matrix(texts[:10]))
    _same(ours.matrix(texts), reference.matrix(texts))
    _same(ours.matrix(texts[::-3]), reference.matrix(texts[::-3]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=CALLS, run=st.integers(1, 40))
def test_runs_of_a_few_entries_give_the_same_matrix(calls: list[list[str]], run: int) -> None:
    """The matrix is built in runs of whole rows; any run length gives the same bits."""
    saved = _text._ENTRIES_PER_RUN
    _text._ENTRIES_PER_RUN = run  # hypothesis runs many examples per test: no monkeypatch fixture
    try:
        ours, reference = TfidfCache(), RowByRowTfidf()
        for texts in calls:
            _same(ours.matrix(texts), reference.matrix(texts))
    finally:
        _text._ENTRIES_PER_RUN = saved
