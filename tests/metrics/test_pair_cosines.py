"""Row pairs' cosines computed a run at a time are those of the whole matrix, to the bit.

The description check used to build one matrix of every body and description
and multiply its halves; :meth:`TfidfCache.pair_cosines` builds and multiplies a
run of pairs at a time. These tests compare the two ways on texts that trip the
tokeniser, with runs as short as one row, and the check's alarms on a store.
"""

from __future__ import annotations

import numpy as np
import pytest
from adversarial_text import LINE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.metrics import TfidfCache, _text
from memdir.metrics._alarms import find_stale_descriptions
from memdir.metrics._files import summarize
from memdir.metrics._tree import build_tree

PAIRS = st.lists(st.tuples(st.lists(LINE, max_size=5).map("\n".join), LINE), max_size=12)


def _whole(cache: TfidfCache, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    matrix = cache.rows_matrix(np.concatenate([left, right]))
    n = len(left)
    return np.asarray(matrix[:n].multiply(matrix[n:]).sum(axis=1)).ravel()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=PAIRS, run=st.integers(1, 50), stop=st.booleans())
def test_runs_of_pairs_give_the_whole_matrix_cosines(pairs: list[tuple[str, str]], run: int,
                                                     stop: bool) -> None:
    cache = TfidfCache(stop_words="english" if stop else None)
    cache.numbers(["words numbered before", "the others the cat"])  # a vocabulary from before
    left = cache.numbers([a for a, _ in pairs])
    right = cache.numbers([b for _, b in pairs])
    expected = _whole(cache, left, right)
    saved = _text._ENTRIES_PER_RUN
    _text._ENTRIES_PER_RUN = run  # hypothesis: no monkeypatch fixture per example
    try:
        got = cache.pair_cosines(left, right)
    finally:
        _text._ENTRIES_PER_RUN = saved
    assert got.dtype == np.float64 and got.tobytes() == expected.tobytes()


def test_pairs_need_as_many_rows_on_each_side() -> None:
    cache = TfidfCache()
    numbers = cache.numbers(["one text", "another text"])
    with pytest.raises(ValueError, match="2 rows on the left, 1 on the right"):
        cache.pair_cosines(numbers, numbers[:1])


def test_the_check_finds_the_stale_description_in_runs_of_one_file(
        monkeypatch: pytest.MonkeyPatch) -> None:
    files = {}
    for k in range(8):
        about = "sailing boats" if k == 3 else f"topic{k} notes"
        files[f"/memories/f{k}.md"] = (
            f"---\nname: f{k}\ndescription: {about}\n---\n# Notes {k}\n\n"
            f"These are the topic{k} notes, kept long enough to be measured here.\n")
    tree = build_tree({p: summarize(t, p) for p, t in files.items()})
    whole = find_stale_descriptions(tree, 0.1, min_chars=10)
    monkeypatch.setattr(_text, "_ENTRIES_PER_RUN", 1)
    found = find_stale_descriptions(tree, 0.1, min_chars=10)
    assert [m.path for m in found] == ["/memories/f3.md"] and found[0].cosine == 0.0
    assert found == whole
