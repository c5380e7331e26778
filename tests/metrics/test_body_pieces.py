"""Bodies counted from their pieces give the vectors of the bodies counted whole.

The stale-description check counts each body from the pieces its summary keeps (the
units' texts and the text between them), reusing the units' term counts; these tests
hold it to the bodies counted whole, on adversarial text: words that touch a cut,
capital sigmas (whose lowercase depends on the next character), characters that
lowercase to two, and every kind of whitespace Python strips.
"""

from __future__ import annotations

import numpy as np
import pytest
from adversarial_text import BODY, FILES, LINE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.metrics import _text
from memdir.metrics._alarms import _long_enough, find_stale_descriptions
from memdir.metrics._files import summarize
from memdir.metrics._text import TfidfCache, term_counts
from memdir.metrics._tree import build_tree


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(["", " ", "\n", " ab ", "x", "\t\n", "abc"]), max_size=6),
       min_chars=st.integers(-1, 8))
def test_the_length_test_is_that_of_the_stripped_body(parts: list[str], min_chars: int) -> None:
    assert _long_enough(tuple(parts), min_chars) == (len("".join(parts).strip()) >= min_chars)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.one_of(LINE, BODY), min_size=1, max_size=8))
def test_the_cache_keeps_each_terms_first_seen_rank(texts: list[str]) -> None:
    cache = TfidfCache()
    cache.matrix(texts)
    words = list(cache._vocab)
    for text in dict.fromkeys(texts):
        number = cache._index[text]
        start, size = int(cache._starts.data[number]), int(cache._sizes.data[number])
        columns = cache._columns.data[start : start + size]
        ranks = cache._ranks.data[start : start + size]
        assert [words[c] for c in columns[np.argsort(ranks)]] == list(term_counts(text))


def _same(ours: object, reference: object) -> None:
    for part in ("indptr", "indices", "data"):
        left, right = getattr(ours, part), getattr(reference, part)
        assert left.dtype == right.dtype and np.array_equal(left, right), part
    assert ours.shape == reference.shape  # type: ignore[attr-defined]


PRIOR = st.lists(st.one_of(LINE, BODY), max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.lists(FILES, min_size=1, max_size=6), prior=PRIOR,
       counted=st.sampled_from(["units", "none", "stop"]), min_chars=st.integers(0, 12))
def test_bodies_counted_from_pieces_give_the_whole_bodies_matrix(
        files: list[str], prior: list[str], counted: str, min_chars: int) -> None:
    """The same matrix to the bit: units counted before or not, other texts counted first."""
    summaries = [summarize(text, f"/memories/f{k}.md") for k, text in enumerate(files)]
    units = TfidfCache(stop_words="english" if counted == "stop" else None)
    units.matrix(prior)  # a cache that numbered other words first, as across snapshots
    if counted != "none":
        units.matrix([u.text for s in summaries for u in s.units if len(u.text) >= min_chars])
    described = [s for s in summaries if s.description.strip()]
    whole = TfidfCache(stop_words="english")
    reference = whole.matrix([s.body for s in described] + [s.description for s in described])
    ours = TfidfCache(stop_words="english")
    bodies = ours.add_joined([s.parts for s in described], units)
    numbers = np.concatenate([bodies, ours.numbers([s.description for s in described])])
    _same(ours.rows_matrix(numbers), reference)
    assert list(ours._vocab.items()) == list(whole._vocab.items())


def test_counting_from_pieces_needs_a_cache_that_keeps_what_it_counts() -> None:
    with pytest.raises(ValueError, match="stop words"):
        TfidfCache().add_joined([["the cat"]], TfidfCache(stop_words="english"))


def test_a_batch_of_joined_texts_continues_the_numbering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_text, "_BATCH_JOINED", 3)
    texts = [[f"word{k} shared{k % 4}", " ", f"tail{k % 3} word{k + 1}"] for k in range(10)]
    ours = TfidfCache()
    numbers = ours.add_joined(texts, TfidfCache())
    reference = TfidfCache()
    _same(ours.rows_matrix(numbers), reference.matrix(["".join(t) for t in texts]))
    assert list(ours._vocab) == list(reference._vocab)


def _store_files() -> dict[str, str]:
    files = {}
    for k in range(12):
        sections = "\n\n".join(f"## Part {j} of {k}\n\nshared words here and unit{k}x{j} "
                               f"lines that run long enough, word{j}" for j in range(3))
        files[f"/memories/f{k}.md"] = (f"---\nname: f{k}\ndescription: about unit{k}x0 and "
                                       f"{'lost' if k == 5 else 'shared'} things\n---\n"
                                       f"# File {k}\nopening text {k}\n\n{sections}\n")
    return files


def test_the_check_reads_no_unit_the_cache_has_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    summaries = {p: summarize(t, p) for p, t in _store_files().items()}
    tree = build_tree(summaries)
    units = TfidfCache()
    unit_texts = [u.text for u in tree.units if len(u.text) >= 10]
    units.matrix(unit_texts)
    expected = find_stale_descriptions(tree, 0.5, min_chars=10)
    read: list[str] = []

    words = _text._words

    def counting(text: str) -> list[str]:
        read.append(text)
        return words(text)

    joined = _text._joined_words

    def counting_joined(texts: list[str]) -> list[str]:
        read.extend(texts)
        return joined(texts)

    monkeypatch.setattr(_text, "_words", counting)
    monkeypatch.setattr(_text, "_joined_words", counting_joined)
    found = find_stale_descriptions(tree, 0.5, min_chars=10, cache=units)
    assert found == expected and found
    assert read and not set(read) & set(unit_texts)
    assert sum(map(len, read)) < sum(len(s.body) for s in summaries.values()) / 2
