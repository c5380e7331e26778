"""Health's tokens and rank correlation equal scikit-learn's and SciPy's without importing them."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata, spearmanr
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as SKLEARN_STOP_WORDS
from sklearn.feature_extraction.text import CountVectorizer

from memdir.metrics._taxonomy import _average_ranks, _spearman
from memdir.metrics._text import ENGLISH_STOP_WORDS, TfidfCache, analyzer, term_counts

WORDY = st.lists(st.sampled_from(list("aZé_9 \n\t-'.ßİKﬁǅ") + ["the ", "THE ", "Mine "]),
                 max_size=40).map("".join)


def test_the_stop_word_list_is_scikit_learns() -> None:
    assert frozenset(SKLEARN_STOP_WORDS) == ENGLISH_STOP_WORDS


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(), WORDY), stop=st.sampled_from([None, "english"]))
def test_the_tokens_are_scikit_learns(text: str, stop: str | None) -> None:
    assert analyzer(stop)(text) == CountVectorizer(stop_words=stop).build_analyzer()(text)


ASCII = st.text(st.characters(max_codepoint=127), max_size=60)
"""Every ASCII character: the split that counts ASCII texts must treat each as the regex does."""


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(ASCII, st.text(), WORDY))
def test_term_counts_are_the_analyzers_in_order(text: str) -> None:
    counts = term_counts(text)
    tokens = CountVectorizer().build_analyzer()(text)
    assert list(counts) == list(dict.fromkeys(tokens))  # first-seen order: it numbers the terms
    assert dict(counts) == dict(Counter(tokens))


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.one_of(ASCII, WORDY), min_size=1, max_size=8),
       stop=st.sampled_from([None, "english"]))
def test_the_cache_numbers_terms_as_the_analyzer_sees_them(texts: list[str],
                                                           stop: str | None) -> None:
    """The cache's vocabulary is the analyzer's tokens in first-seen order (stop words out)."""
    cache = TfidfCache(stop_words=stop)
    cache.matrix(texts)
    seen = [t for text in dict.fromkeys(texts) for t in analyzer(stop)(text)]
    assert list(cache._vocab) == list(dict.fromkeys(seen))


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(0, 6), min_size=1, max_size=60))
def test_average_ranks_are_scipys(values: list[int]) -> None:
    array = np.asarray(values, np.float64)
    assert np.array_equal(_average_ranks(array), rankdata(array))


@settings(max_examples=200, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(0, 9), st.floats(0, 1, width=32)), min_size=3,
                      max_size=80))
def test_spearman_is_scipys_to_the_bit(pairs: list[tuple[int, float]]) -> None:
    a = np.asarray([p[0] for p in pairs], np.int64)
    b = np.round(np.asarray([p[1] for p in pairs], np.float64), 3)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return  # B4 never correlates a constant sample
    assert _spearman(a, b) == spearmanr(a, b).statistic


def test_health_imports_neither_scikit_learn_nor_scipy_stats(tmp_path: object) -> None:
    code = ("import sys, tempfile\nfrom memdir.store import Store\n"
            "from memdir.metrics import health_report\n"
            "root = tempfile.mkdtemp()\nopen(root + '/a.md', 'w').write("
            "'---\\nname: a\\ndescription: cats and mats\\n---\\n# A\\n\\ncats sit on mats '"
            " * 9)\nopen(root + '/b.md', 'w').write("
            "'---\\nname: b\\ndescription: dogs\\n---\\n# B\\n\\ndogs run in parks ' * 9)\n"
            "health_report(Store(root))\n"
            "print(sorted(m for m in sys.modules if m.startswith(('sklearn', 'scipy.stats'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
