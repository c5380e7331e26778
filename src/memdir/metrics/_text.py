"""Lexical TF-IDF vectors, identical to scikit-learn's ``TfidfVectorizer`` defaults.

Each text is tokenised once (as scikit-learn's default analyzer does: lowercase,
words of two or more word characters) and its term counts are cached, so measuring many
snapshots that share most of their text re-weights cached counts instead of
re-reading every text. Weights are those of ``TfidfVectorizer()`` fitted on the
texts given: smoothed idf ``ln((1 + n) / (1 + df)) + 1``, raw term frequency,
rows scaled to unit length. There is no learned component.

The tokens are scikit-learn's default analyzer's (lowercase, words of two or more
word characters, its English stop word list where asked) computed here without
importing scikit-learn, which costs seconds per command; the tests check both
agree.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
from scipy import sparse

__all__ = ["ENGLISH_STOP_WORDS", "TfidfCache", "analyzer", "cosine_rows", "term_counts"]

ENGLISH_STOP_WORDS = frozenset("""
    a about above across after afterwards again against all almost alone along already
    also although always am among amongst amoungst amount an and another any anyhow
    anyone anything anyway anywhere are around as at back be became because become
    becomes becoming been before beforehand behind being below beside besides between
    beyond bill both bottom but by call can cannot cant co con could couldnt cry de
    describe detail do done down due during each eg eight either eleven else elsewhere
    empty enough etc even ever every everyone everything everywhere except few fifteen
    fifty fill find fire first five for former formerly forty found four from front full
    further get give go had has hasnt have he hence her here hereafter hereby herein
    hereupon hers herself him himself his how however hundred i ie if in inc indeed
    interest into is it its itself keep last latter latterly least less ltd made many
    may me meanwhile might mill mine more moreover most mostly move much must my myself
    name namely neither never nevertheless next nine no nobody none noone nor not
    nothing now nowhere of off often on once one only onto or other others otherwise our
    ours ourselves out over own part per perhaps please put rather re same see seem
    seemed seeming seems serious several she should show side since sincere six sixty so
    some somehow someone something sometime sometimes somewhere still such system take
    ten than that the their them themselves then thence there thereafter thereby
    therefore therein thereupon these they thick thin third this those though three
    through throughout thru thus to together too top toward towards twelve twenty two un
    under until up upon us very via was we well were what whatever when whence whenever
    where whereafter whereas whereby wherein whereupon wherever whether which while
    whither who whoever whole whom whose why will with within without would yet you your
    yours yourself yourselves
""".split())
"""scikit-learn's English stop word list (BSD-3 licensed), the one ``stop_words="english"``
drops; a test compares it with scikit-learn's own."""
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
"""scikit-learn's default ``token_pattern``."""


_ASCII_WORDS = str.maketrans(
    {code: (chr(code).lower() if chr(code).isalnum() or chr(code) == "_" else " ")
     for code in range(128)})
"""Lowercases an ASCII text and turns every ASCII character that is no word character
(``\\w``: letters, digits, underscore) into a space."""


_ASCII_SINGLES = tuple(sorted({chr(code).lower() for code in range(128)
                                if chr(code).isalnum() or chr(code) == "_"}))
"""The one-character words an ASCII text can split into (37 of them): the runs too short
to be tokens are looked up among these, not found by reading every distinct word."""


def term_counts(text: str) -> Counter[str]:
    """The counts of the text's tokens (as :func:`analyzer` gives them), in first-seen order.

    An ASCII text (``str.isascii`` is free: Python records it) is split with
    ``str.translate`` and ``str.split``, about twice as fast as the regular
    expression: in ASCII a token is a run of two or more letters, digits or
    underscores, and those runs are what the split gives once every other
    character is a space (runs of one character are dropped, keeping the order
    of the rest; they are looked up among the 37 that can occur rather than
    found by testing the length of every distinct word). Any other text goes
    through the regular expression.
    """
    if not text.isascii():
        return Counter(_TOKEN.findall(text.lower()))
    counts = Counter(text.translate(_ASCII_WORDS).split())
    for word in [word for word in _ASCII_SINGLES if word in counts]:
        counts.pop(word)
    return counts


def analyzer(stop_words: str | None = None) -> Callable[[str], list[str]]:
    """The tokens ``CountVectorizer(stop_words=stop_words).build_analyzer()`` gives a text.

    Raises:
        ValueError: ``stop_words`` is neither None nor ``"english"``.
    """
    find = _TOKEN.findall
    if stop_words is None:
        return lambda text: find(text.lower())
    if stop_words != "english":
        raise ValueError(f"stop_words must be None or 'english', not {stop_words!r}")
    stop = ENGLISH_STOP_WORDS
    return lambda text: [w for w in find(text.lower()) if w not in stop]


_BATCH_TEXTS = 10_000
"""Texts counted before their counts go into the cache's arrays."""


class _Buffer:
    """A growing one-dimensional array (appends cost amortised linear time)."""

    def __init__(self, dtype: type) -> None:
        self.data: np.ndarray = np.zeros(1024, dtype)
        self.used = 0

    def extend(self, values: np.ndarray) -> None:
        end = self.used + len(values)
        if end > len(self.data):
            grown = np.zeros(max(end, 2 * len(self.data)), self.data.dtype)
            grown[: self.used] = self.data[: self.used]
            self.data = grown
        self.data[self.used : end] = values
        self.used = end


class TfidfCache:
    """Term counts per text, kept across calls; builds TF-IDF matrices over any text set.

    Texts not seen before are counted in one batch per call: each text's words
    are numbered in order of first appearance (across the cache's life), and the
    counts of every text live in shared arrays, sorted by term within each text.

    Args:
        stop_words: ``"english"`` drops scikit-learn's English stop words (used where
            a check compares a few words, e.g. a description); None keeps every word.
        keep_last: Keep the last matrix for one more call (see :meth:`matrix`); off by
            default, since a cache asked once would hold its matrix for nothing.
    """

    def __init__(self, stop_words: str | None = None, *, keep_last: bool = False) -> None:
        analyzer(stop_words)  # raises on an unknown list
        self._keep_last = keep_last
        self._stop = ENGLISH_STOP_WORDS if stop_words is not None else frozenset()
        self._vocab: dict[str, int] = {}
        self._index: dict[str, int] = {}  # text -> its number in the arrays below
        self._starts = _Buffer(np.int64)  # text k's entries: [starts[k], starts[k] + sizes[k])
        self._sizes = _Buffer(np.int64)
        self._columns = _Buffer(np.int32)  # 4-byte terms and counts: one entry per term of a text
        self._counts = _Buffer(np.float32)
        self._last: tuple[list[str], sparse.csr_matrix] | None = None
        """The texts of the last matrix built and that matrix, kept for one more call."""

    def _add(self, texts: Sequence[str]) -> None:
        """Count the terms of ``texts`` (none of them cached yet) and keep the counts.

        Texts are counted :data:`_BATCH_TEXTS` at a time, so the lists of counts
        held before they go into the arrays stay small whatever the store's size.
        """
        for start in range(0, len(texts), _BATCH_TEXTS):
            self._add_batch(texts[start : start + _BATCH_TEXTS])

    def _add_batch(self, texts: Sequence[str]) -> None:
        vocab, stop = self._vocab, self._stop
        ids: list[int] = []
        values: list[int] = []
        sizes: list[int] = []
        for text in texts:
            counts = term_counts(text)
            if stop:  # dropped per word, not per token: the rest keep their first-seen order
                for word in stop.intersection(counts):
                    counts.pop(word)  # dict's own pop: Counter's __delitem__ is Python code
            row = list(map(vocab.get, counts))
            if None in row:  # words not seen before get the next numbers, in order of appearance
                row = [vocab.setdefault(t, len(vocab)) for t in counts]
            ids.extend(row)  # type: ignore[arg-type]  # no None is left
            values.extend(counts.values())
            sizes.append(len(row))
        indptr = np.zeros(len(texts) + 1, np.int64)
        indptr[1:] = np.cumsum(sizes)
        batch = sparse.csr_matrix(
            (np.array(values, np.float32), np.array(ids, np.int32), indptr),
            shape=(len(texts), max(len(vocab), 1)),
        )
        batch.sort_indices()  # by term within each text, in place (no term repeats in a text)
        first = self._columns.used
        for text, number in zip(texts, range(self._sizes.used, self._sizes.used + len(texts)),
                                strict=True):
            self._index[text] = number
        self._starts.extend(first + indptr[:-1])
        self._sizes.extend(np.diff(indptr))
        self._columns.extend(batch.indices)
        self._counts.extend(batch.data)

    def matrix(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """Unit-length TF-IDF rows for ``texts`` (idf fitted on these texts only).

        The entries are gathered, weighted and scaled in runs of whole rows of
        about :data:`_ENTRIES_PER_RUN` entries, so the arrays held besides the
        result stay small however many texts there are; each row's length is
        summed within one run, in the same order as over all rows at once, so the
        values are the same to the bit.

        With ``keep_last``, the matrix just built is kept until the next call, which
        gets it back (the same object: treat it as read-only) when it asks for the
        same texts in the same order: health builds the units' matrix for Panel B,
        then again for the near-duplicate search. Any other call lets it go first.
        """
        wanted = texts if isinstance(texts, list) else list(texts)
        last, self._last = self._last, None
        if last is not None and last[0] == wanted:  # compares identities first: cheap
            return last[1]
        del last
        result = self._build(wanted)
        if self._keep_last:
            self._last = (wanted, result)
        return result

    def _build(self, texts: Sequence[str]) -> sparse.csr_matrix:
        index = self._index
        new = [t for t in dict.fromkeys(texts) if t not in index]
        if new:
            self._add(new)
        numbers = np.fromiter((index[t] for t in texts), np.int64, count=len(texts))
        n = len(texts)
        sizes = self._sizes.data[numbers]
        starts = self._starts.data[numbers]
        indptr = np.zeros(n + 1, dtype=np.int64)
        indptr[1:] = np.cumsum(sizes)
        runs = _runs(indptr)
        indices = np.empty(int(indptr[-1]), np.int32)
        data = np.empty(int(indptr[-1]), np.float64)
        for a, b in runs:
            lo, hi = indptr[a], indptr[b]
            gather = np.repeat(starts[a:b] - indptr[a:b], sizes[a:b])
            gather += np.arange(lo, hi)
            indices[lo:hi] = self._columns.data[gather]
            data[lo:hi] = self._counts.data[gather]
        width = max(len(self._vocab), 1)
        df = np.bincount(indices, minlength=width)
        idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        for a, b in runs:
            lo, hi = indptr[a], indptr[b]
            part = data[lo:hi]
            part *= idf[indices[lo:hi]]
            row_of = np.repeat(np.arange(b - a), sizes[a:b])
            lengths = np.sqrt(np.bincount(row_of, weights=part * part, minlength=b - a))
            lengths[lengths == 0] = 1.0
            part /= lengths[row_of]
        return sparse.csr_matrix((data, indices, indptr), shape=(n, width))


_ENTRIES_PER_RUN = 1 << 22
"""Entries :meth:`TfidfCache.matrix` works on at once (about 4 million)."""


def _runs(indptr: np.ndarray) -> list[tuple[int, int]]:
    """Rows ``[a, b)`` in runs of about :data:`_ENTRIES_PER_RUN` entries (one row at least)."""
    n = len(indptr) - 1
    runs: list[tuple[int, int]] = []
    a = 0
    while a < n:
        b = int(np.searchsorted(indptr, indptr[a] + _ENTRIES_PER_RUN, side="right")) - 1
        b = min(max(b, a + 1), n)
        runs.append((a, b))
        a = b
    return runs


def cosine_rows(matrix: sparse.csr_matrix, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Cosine of row pairs ``(left[k], right[k])`` of a unit-row matrix."""
    if len(left) == 0:
        return np.zeros(0)
    products = matrix[left].multiply(matrix[right])
    return np.asarray(products.sum(axis=1)).ravel()
