"""The faster health phases give what the plain ways gave: same tokens, order, facts, matrix."""

from __future__ import annotations

import re
import string
from collections import Counter, defaultdict

import numpy as np
from allpairs_reference import RowByRowTfidf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse

from memdir.metrics import Measurer, TfidfCache, _alarms, _pairs
from memdir.metrics._files import summarize
from memdir.metrics._text import term_counts
from memdir.metrics._tree import StoreTree, build_tree

ASCII_TEXT = st.text(alphabet=st.sampled_from(list(string.printable)), max_size=200)
WORDY = st.lists(st.sampled_from(["a", "I", "x", "_", "7", "ab", "Cat", "to", "b_2", "q",
                                  " ", "\n", "-", ".", ", "]), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(ASCII_TEXT, WORDY))
def test_one_character_words_go_and_the_rest_keep_their_order(text: str) -> None:
    expected = Counter(re.findall(r"(?u)\b\w\w+\b", text.lower()))
    got = term_counts(text)
    assert list(got.items()) == list(expected.items())


def test_the_matrix_just_built_comes_back_for_the_same_texts() -> None:
    """Health asks for the units' matrix twice in a row (Panel B, then duplicates)."""
    cache = TfidfCache(keep_last=True)
    texts = ["the cat sat on the mat", "a dog and a cat", "the mat is red"]
    first = cache.matrix(texts)
    assert cache.matrix(list(texts)) is first  # equal texts in the same order: the same one
    again = cache.matrix(texts)  # kept for one more call only, then built anew
    assert again is not first
    assert (again != first).nnz == 0


def test_other_texts_get_their_own_matrix_and_the_kept_one_is_let_go() -> None:
    cache, reference = TfidfCache(keep_last=True), RowByRowTfidf()
    texts = ["the cat sat on the mat", "a dog and a cat", "the mat is red"]
    calls = [texts, texts[:2], texts, texts[::-1], texts[::-1]]
    built = []
    for call in calls:
        built.append(cache.matrix(call))
        expected = reference.matrix(call)
        for part in ("indptr", "indices", "data"):
            assert np.array_equal(getattr(built[-1], part), getattr(expected, part)), part
    assert built[2] is not built[0]  # another call came between: built anew
    assert built[4] is built[3]
    plain = TfidfCache()  # by default nothing is kept
    assert plain.matrix(texts) is not plain.matrix(texts)


def test_the_measurer_reuses_the_units_matrix_only() -> None:
    measurer = Measurer()
    texts = ["the cat sat on the mat", "a dog and a cat"]
    assert measurer.units_cache.matrix(texts) is measurer.units_cache.matrix(texts)
    assert measurer.labels_cache.matrix(texts) is not measurer.labels_cache.matrix(texts)


def _lexsort_reference(matrix: sparse.csr_matrix, rank: np.ndarray, first: int, end: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The two-key lexsort the rarest-first order used to be."""
    lo, hi = matrix.indptr[first], matrix.indptr[end]
    indptr = matrix.indptr[first : end + 1] - lo
    indices = matrix.indices[lo:hi]
    rows = np.repeat(np.arange(first, end, dtype=np.int64), np.diff(indptr))
    order = np.lexsort((rank[indices], rows))
    return rows[order], indices[order].astype(np.int64), matrix.data[lo:hi][order], indptr


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 40), width=st.integers(1, 60),
       density=st.floats(0.0, 1.0), cut=st.integers(0, 40))
def test_rarest_first_is_the_lexsort_order(seed: int, rows: int, width: int, density: float,
                                           cut: int) -> None:
    matrix = sparse.random(rows, width, density=density, format="csr",
                           random_state=np.random.default_rng(seed))
    rank = _pairs._term_ranks(matrix)
    first = min(cut, rows - 1)
    for a, b in ((0, rows), (first, rows), (0, first + 1)):
        got = _pairs._rarest_first(matrix, rank, a, b)
        expected = _lexsort_reference(matrix, rank, a, b)
        for left, right in zip(got, expected, strict=True):
            assert left.dtype == right.dtype and np.array_equal(left, right)


_KEY_VALUE = _alarms._KEY_VALUE


def _stale_facts_reference(tree: StoreTree) -> list[_alarms.StaleFact]:
    """The fact check as it was: the pattern tried on every line of every body."""
    found: list[_alarms.StaleFact] = []
    for path, summary in tree.files.items():
        groups: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for offset, line in enumerate(summary.body.split("\n")):
            match = _KEY_VALUE.match(line)
            if match is None:
                continue
            key = " ".join(match["key"].casefold().split())
            if len(key.split()) <= 5:
                groups[key].append((summary.body_line + offset, line.strip()))
        for key, entries in sorted(groups.items()):
            values = {" ".join(_KEY_VALUE.match(t)["value"].casefold().split())  # type: ignore[index]
                      for _, t in entries}
            if not 2 <= len(entries) <= 3 or len(values) < 2:
                continue
            if any(_alarms._TIME_MARKER.search(text) for _, text in entries):
                continue
            found.append(_alarms.StaleFact(path, key, tuple(n for n, _ in entries),
                                           tuple(t for _, t in entries)))
    return found


LINE = st.one_of(
    st.builds(lambda k, v, b: f"{b}{k}: {v}", st.sampled_from(["Owner", "owner", "City",
                                                               "**Lead**", "Due date"]),
              st.sampled_from(["Ana", "Bo", "Lisbon", "2024-05", "formerly Bo", "x"]),
              st.sampled_from(["", "- ", "* ", "  "])),
    st.sampled_from(["plain words", "no colon here", "time:now", "a : b", "Key:\tvalue",
                     "# Heading", "## Sub", "", "url: http://x", ":", "k:  v  "]),
    st.text(alphabet=st.sampled_from(list("ab: \t*_-")), max_size=12),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.lists(st.lists(LINE, max_size=14).map("\n".join), min_size=1, max_size=4))
def test_stale_facts_are_those_of_every_line(files: list[str]) -> None:
    texts = {f"/memories/f{k}.md": f"---\ndescription: file {k}\n---\n{body}\n"
             for k, body in enumerate(files)}
    tree = build_tree({path: summarize(text, path) for path, text in texts.items()})
    assert _alarms.find_stale_facts(tree) == _stale_facts_reference(tree)


def test_a_fact_line_is_still_found() -> None:
    text = "---\ndescription: team\n---\n- Owner: Ana\n- Owner: Bo\nno colon\n"
    tree = build_tree({"/memories/t.md": summarize(text, "/memories/t.md")})
    facts = _alarms.find_stale_facts(tree)
    assert [(f.subject, f.values) for f in facts] == [("owner", ("- Owner: Ana", "- Owner: Bo"))]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 40), width=st.integers(1, 60),
       density=st.floats(0.0, 1.0), chunk=st.integers(1, 300), terms=st.integers(1, 6),
       threshold=st.floats(0.05, 1.0))
def test_one_pass_gives_the_prefix_and_the_sketch_of_two(
        seed: int, rows: int, width: int, density: float, chunk: int, terms: int,
        threshold: float) -> None:
    matrix = sparse.random(rows, width, density=density, format="csr",
                           random_state=np.random.default_rng(seed))
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    matrix = sparse.csr_matrix(sparse.diags(1 / norms) @ matrix)
    got = _pairs._prefix_and_sketch(matrix, threshold, terms, chunk=chunk)
    expected = (*_pairs.prefix_entries(matrix, threshold, chunk=chunk),
                *_pairs._sketch_keys(matrix, terms, chunk=chunk))
    for left, right in zip(got, expected, strict=True):
        assert left.dtype == right.dtype and np.array_equal(left, right)
    without = _pairs._prefix_and_sketch(matrix, threshold, None, chunk=chunk)
    assert len(without[2]) == 0 and np.array_equal(without[0], got[0])
