"""Texts counted from one list of a batch's words keep what counting text by text kept.

The term cache looks each word of a batch up once and counts with one sort, in
batches cut by characters as well as by texts; these tests hold the terms'
numbers, each row's entries and each entry's first-seen rank to what counting
every text alone with ``term_counts`` gives, and the matrices to the row-by-row
reference, whatever the batch size.
"""

from __future__ import annotations

import numpy as np
from adversarial_text import LINE
from allpairs_reference import RowByRowTfidf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.metrics import TfidfCache, _text
from memdir.metrics._text import ENGLISH_STOP_WORDS, term_counts

TEXTS = st.lists(st.lists(LINE, max_size=4).map("\n".join), max_size=14)


def _counted_alone(texts: list[str], stop: bool) -> tuple[list[str], list[list[tuple[str, int]]]]:
    """Terms numbered text by text, and each distinct text's terms with counts, first seen first."""
    vocab: dict[str, int] = {}
    rows = []
    for text in dict.fromkeys(texts):
        counts = [(w, n) for w, n in term_counts(text).items()
                  if not (stop and w in ENGLISH_STOP_WORDS)]
        for word, _ in counts:
            vocab.setdefault(word, len(vocab))
        rows.append(counts)
    return list(vocab), rows


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=TEXTS, chars=st.integers(1, 60), per_batch=st.integers(1, 5),
       stop=st.booleans())
def test_batches_of_words_count_as_texts_counted_alone(texts: list[str], chars: int,
                                                       per_batch: int, stop: bool) -> None:
    saved = _text._BATCH_CHARS, _text._BATCH_TEXTS
    _text._BATCH_CHARS, _text._BATCH_TEXTS = chars, per_batch  # no fixture inside hypothesis
    try:
        cache = TfidfCache(stop_words="english" if stop else None)
        numbers = cache.numbers(texts)
    finally:
        _text._BATCH_CHARS, _text._BATCH_TEXTS = saved
    words, rows = _counted_alone(texts, stop)
    assert list(cache._vocab) == words
    assert list(cache._vocab.values()) == list(range(len(words)))
    assert len(set(numbers.tolist())) == len(rows)
    for number, expected in zip(dict.fromkeys(numbers.tolist()), rows, strict=True):
        start, size = cache._starts.data[number], cache._sizes.data[number]
        columns = cache._columns.data[start : start + size]
        counts = cache._counts.data[start : start + size]
        ranks = cache._ranks.data[start : start + size]
        assert np.all(np.diff(columns) > 0)  # sorted by term, none twice
        seen = np.argsort(ranks)
        got = [(words[c], int(n)) for c, n in zip(columns[seen], counts[seen], strict=True)]
        assert got == expected


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(TEXTS, min_size=1, max_size=3), chars=st.integers(1, 80))
def test_any_batch_size_gives_the_row_by_row_matrix(calls: list[list[str]], chars: int) -> None:
    saved = _text._BATCH_CHARS
    _text._BATCH_CHARS = chars
    try:
        ours, reference = TfidfCache(), RowByRowTfidf()
        for texts in calls:
            got, expected = ours.matrix(texts), reference.matrix(texts)
            for part in ("indptr", "indices", "data"):
                assert np.array_equal(getattr(got, part), getattr(expected, part)), part
    finally:
        _text._BATCH_CHARS = saved


def test_a_word_met_in_a_later_batch_gets_the_next_number() -> None:
    cache = TfidfCache()
    cache.matrix(["alpha beta", "beta gamma"])
    cache.matrix(["delta alpha a b", "gamma epsilon delta"])
    assert cache._vocab == {"alpha": 0, "beta": 1, "gamma": 2, "delta": 3, "epsilon": 4}
    assert cache._lookup["a"] < 0 and "a" not in cache._vocab  # one character: never a term
