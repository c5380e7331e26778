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
from itertools import groupby, repeat

import numpy as np
from scipy import sparse

__all__ = ["ENGLISH_STOP_WORDS", "TfidfCache", "analyzer", "column_counts", "cosine_rows",
           "row_runs", "term_counts"]

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
    found by testing the length of every distinct word, unless the text has
    fewer distinct words than that). Any other text goes through the regular
    expression.
    """
    if not text.isascii():
        return Counter(_TOKEN.findall(text.lower()))
    counts = Counter(text.translate(_ASCII_WORDS).split())
    if len(counts) < len(_ASCII_SINGLES):  # a short text: test its few words' lengths instead
        singles = [word for word in counts if len(word) == 1]
    else:
        singles = [word for word in _ASCII_SINGLES if word in counts]
    for word in singles:
        counts.pop(word)
    return counts


def _words(text: str) -> list[str]:
    """The text's words in order: its tokens, and for an ASCII text its one-character runs too.

    The same split as :func:`term_counts` before it counts: an ASCII text goes
    through ``str.translate`` and ``str.split`` (which leave the runs of one
    character in place for the caller to drop), any other text through the
    regular expression (which finds none).
    """
    if text.isascii():
        return text.translate(_ASCII_WORDS).split()
    return _TOKEN.findall(text.lower())


_SEPARATOR = "\x00"
"""The word :func:`_joined_words` puts between two texts: a NUL, which no text it joins
holds (texts holding one are split one by one)."""

_JOIN = f" {_SEPARATOR} "

_ASCII_WORDS_SEPARATED = {**_ASCII_WORDS, 0: _SEPARATOR}
""":data:`_ASCII_WORDS`, but keeping the separator (NUL, ASCII code 0) as it is."""

_TOKEN_OR_SEPARATOR = re.compile(r"(?u)\b\w\w+\b|\x00")
""":data:`_TOKEN`, or the separator."""


def _joined_words(texts: Sequence[str]) -> list[str]:
    """The :func:`_words` of each text in one list, :data:`_SEPARATOR` between two texts.

    Texts that follow one another and are all ASCII (or all not) are joined by a
    space, the separator and a space, and split at once: one ``translate`` and
    ``split`` (or one regular expression) for many short texts instead of a call
    each. The spaces keep every word inside its text, the separator marks where a
    text ends, and lowercasing a joined text lowercases each text as alone (its
    only context rule, for a final capital sigma, stops at a space). Texts of a
    run that hold a NUL themselves are split one by one.
    """
    words: list[str] = []
    for k, (ascii_, run) in enumerate(groupby(texts, key=str.isascii)):
        group = list(run)
        if k:
            words.append(_SEPARATOR)
        joined = _JOIN.join(group)
        if joined.count(_SEPARATOR) != len(group) - 1:  # a text holds a NUL of its own
            for j, text in enumerate(group):
                if j:
                    words.append(_SEPARATOR)
                words += _words(text)
        elif ascii_:
            words += joined.translate(_ASCII_WORDS_SEPARATED).split()
        else:
            words += _TOKEN_OR_SEPARATOR.findall(joined.lower())
    return words


def _order_of_places(places: np.ndarray, size: int) -> np.ndarray:
    """``np.argsort(places)`` for distinct places in ``[0, size)``, by one scatter, no sort."""
    slot = np.full(size, -1, np.int64)
    slot[places] = np.arange(len(places), dtype=np.int64)
    return slot[slot >= 0]


_DROPPED = -2
"""What a term cache's word lookup gives a word it never counts (a stop word it drops, or
a one-character run)."""

_UNSEEN = -1
"""What the lookup gives a word not numbered yet."""


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

_BATCH_CHARS = 1 << 20
"""Most characters counted in one batch (about a million; a longer text is a batch alone)."""

_BATCH_JOINED = 500
"""Texts :meth:`TfidfCache.add_joined` counts at once (each a whole file's body, whose
entries pass through a dozen arrays before they are kept)."""


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
        self._lookup: dict[str, int] = dict.fromkeys((*self._stop, *_ASCII_SINGLES), _DROPPED)
        """Each term's number as in ``_vocab``, and :data:`_DROPPED` for the words never counted."""
        self._index: dict[str, int] = {}  # text -> its number in the arrays below
        self._starts = _Buffer(np.int64)  # text k's entries: [starts[k], starts[k] + sizes[k])
        self._sizes = _Buffer(np.int64)
        self._columns = _Buffer(np.int32)  # 4-byte terms and counts: one entry per term of a text
        self._counts = _Buffer(np.float32)
        self._ranks = _Buffer(np.uint16)  # each entry's place in its text's first-seen order
        self._last: tuple[list[str], sparse.csr_matrix] | None = None
        """The texts of the last matrix built and that matrix, kept for one more call."""

    def _add(self, texts: Sequence[str]) -> None:
        """Count the terms of ``texts`` (none of them cached yet) and keep the counts.

        Texts are counted in batches of :data:`_BATCH_TEXTS` texts and
        :data:`_BATCH_CHARS` characters at most (one text at least), so the list of
        words held before they go into the arrays stays small whatever the store's
        size, and so do the pages those many short strings leave behind them.
        """
        # Each batch ends before the first text that would take it past either bound, as a
        # text-by-text loop would end it: the characters up to each text are summed once.
        reach = np.zeros(len(texts) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, texts), np.int64, count=len(texts)), out=reach[1:])
        start = 0
        while start < len(texts):
            end = int(np.searchsorted(reach, reach[start] + _BATCH_CHARS, side="right")) - 1
            end = max(start + 1, min(end, start + _BATCH_TEXTS))
            self._add_batch(texts[start:end])
            start = end

    def _add_batch(self, texts: Sequence[str]) -> None:
        """Count a batch of texts from one list of all their words.

        Each word is looked up once (no counting dictionary per text); the words
        not seen before are numbered in the order they first appear, which is the
        order counting text after text gives them. The entries, one per (text,
        term), come from one sort of the words by (text, term): the sort is stable,
        so each run's head is the term's first place in its text, which gives the
        term's rank in that text's first-seen order.
        """
        words: list[str] = []
        lengths = np.zeros(len(texts), np.int64)
        for k, text in enumerate(texts):
            found = _words(text)
            words += found
            lengths[k] = len(found)
        ids = self._ids(words)
        row = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        counted = ids >= 0
        ids, row = ids[counted], row[counted]
        del counted, words
        key = row * max(len(self._vocab), 1) + ids
        order = np.argsort(key, kind="stable")
        key = key[order]
        heads = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else order[:0]
        del key
        counts = np.diff(np.r_[heads, len(order)]).astype(np.float32)
        first = order[heads]  # each entry's first place among the batch's words
        del order, heads
        sizes = np.bincount(row[first], minlength=len(texts)).astype(np.int64)
        starts = np.cumsum(sizes) - sizes
        by_place = _order_of_places(first, len(ids))  # the entries in first-seen order
        ranks = np.empty(len(first), np.int64)
        ranks[by_place] = np.arange(len(first), dtype=np.int64) - np.repeat(starts, sizes)
        number = self._sizes.used
        self._keep(ids[first].astype(np.int32), counts, ranks, sizes)
        for text, k in zip(texts, range(number, number + len(texts)), strict=True):
            self._index[text] = k

    def _ids(self, words: list[str]) -> np.ndarray:
        """Each word's term number (:data:`_DROPPED` for one never counted), numbering new ones.

        New words get the next numbers in the order they first appear in ``words``.
        """
        lookup = self._lookup
        ids = np.fromiter(map(lookup.get, words, repeat(_UNSEEN)), np.int64, count=len(words))
        new = np.flatnonzero(ids == _UNSEEN)
        if len(new):
            fresh = list(map(words.__getitem__, new.tolist()))
            for word in dict.fromkeys(fresh):
                self._term(word)
            ids[new] = np.fromiter(map(lookup.__getitem__, fresh), np.int64, count=len(fresh))
        return ids

    def _term(self, word: str) -> int:
        """Give ``word`` the next term number; that number."""
        vocab = self._vocab
        self._lookup[word] = vocab[word] = number = len(vocab)
        return number

    def _append(self, ids: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> None:
        """Keep rows given as terms in first-seen order, their counts, and each row's size.

        Each row's entries are stored sorted by term, with the place each term had
        in the row (its rank in first-seen order, :data:`MAX_RANK` at most).
        """
        indptr = np.zeros(len(sizes) + 1, np.int64)
        indptr[1:] = np.cumsum(sizes)
        order = sparse.csr_matrix(  # an entry's place, sorted by term within each row
            (np.arange(len(ids), dtype=np.int64), ids, indptr),
            shape=(len(sizes), max(len(self._vocab), 1)),
        )
        order.sort_indices()  # in place (no term repeats in a row)
        ranks = order.data - np.repeat(indptr[:-1], sizes)
        self._keep(order.indices, values[order.data], ranks, sizes)

    def _keep(self, columns: np.ndarray, counts: np.ndarray, ranks: np.ndarray,
              sizes: np.ndarray) -> None:
        """Store rows whose entries are sorted by term, with their counts and first-seen ranks."""
        first = self._columns.used
        starts = np.zeros(len(sizes), np.int64)
        np.cumsum(sizes[:-1], out=starts[1:])
        self._starts.extend(first + starts)
        self._sizes.extend(sizes)
        self._columns.extend(columns)
        self._counts.extend(counts)
        self._ranks.extend(np.minimum(ranks, MAX_RANK))

    def add_joined(self, texts: Sequence[Sequence[str]], counted: TfidfCache) -> np.ndarray:
        """Count texts given as pieces, reusing the counts ``counted`` holds; their numbers.

        Each text is the concatenation of its pieces, cut where no word can run
        across a cut (whitespace on one side of each, as :class:`FileSummary` cuts a
        body): its tokens are then its pieces' tokens one after the other. A piece
        ``counted`` holds is not read again: its terms, counts and first-seen ranks
        come from there; any other piece is counted here. A text's terms are ordered
        by (piece, rank in the piece), which is where each is first seen in the
        whole text, so the terms get the numbers, and the rows the entries, that
        counting the joined texts would give. The texts are not kept (no
        :meth:`matrix` call finds them); :meth:`rows_matrix` takes the numbers.

        Raises:
            ValueError: ``counted`` drops stop words this cache keeps.
        """
        if not counted._stop <= self._stop:
            raise ValueError("counted drops stop words this cache keeps")
        numbers = []
        joined = _Joined(self, counted)
        for start in range(0, len(texts), _BATCH_JOINED):
            first = self._sizes.used
            joined.add(texts[start : start + _BATCH_JOINED])
            numbers.append(np.arange(first, self._sizes.used, dtype=np.int64))
        return np.concatenate(numbers) if numbers else np.zeros(0, np.int64)

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
        return self.rows_matrix(self.numbers(texts))

    def numbers(self, texts: Sequence[str]) -> np.ndarray:
        """The numbers of ``texts`` in the cache (texts not seen before are counted first)."""
        index = self._index
        new = [t for t in dict.fromkeys(texts) if t not in index]
        if new:
            self._add(new)
        return np.fromiter(map(index.__getitem__, texts), np.int64, count=len(texts))

    def rows_matrix(self, numbers: np.ndarray) -> sparse.csr_matrix:
        """:meth:`matrix` of the texts the cache numbered so (idf fitted on these rows)."""
        indptr, indices, data = self._gathered(numbers)
        width = max(len(self._vocab), 1)
        df = column_counts(indices, width)
        return self._weighted(indptr, indices, data, _idf(len(numbers), df), width)

    def pair_cosines(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """The cosine of the texts numbered ``left[k]`` and ``right[k]``, for every ``k``.

        The vectors are those of :meth:`rows_matrix` of ``left`` and ``right`` one
        after the other (idf fitted on all those rows), and each cosine is the sum
        of the row pair's elementwise product, as scipy sums it over that matrix;
        but the rows are built and multiplied a run of pairs at a time, so no
        matrix of every row is held. Each row is weighted, scaled and multiplied
        by itself only, so the cosines are the same to the bit.

        Raises:
            ValueError: ``left`` and ``right`` differ in length.
        """
        if len(left) != len(right):
            raise ValueError(f"{len(left)} rows on the left, {len(right)} on the right")
        width = max(len(self._vocab), 1)
        df = np.zeros(width, np.int64)
        for side in (left, right):
            sizes = self._sizes.data[side]
            indptr = np.zeros(len(side) + 1, np.int64)
            np.cumsum(sizes, out=indptr[1:])
            for a, b in _runs(indptr):
                df += np.bincount(self._gathered(side[a:b])[1], minlength=width)
        idf = _idf(len(left) + len(right), df)
        sizes = self._sizes.data[left] + self._sizes.data[right]
        indptr = np.zeros(len(left) + 1, np.int64)
        np.cumsum(sizes, out=indptr[1:])
        cosines = np.zeros(len(left))
        for a, b in _runs(indptr):
            rows = [self._weighted(*self._gathered(side[a:b]), idf, width)
                    for side in (left, right)]
            cosines[a:b] = np.asarray(rows[0].multiply(rows[1]).sum(axis=1)).ravel()
        return cosines

    def _gathered(self, numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows numbered so, one after the other: row pointers, terms and counts."""
        sizes = self._sizes.data[numbers]
        starts = self._starts.data[numbers]
        indptr = np.zeros(len(numbers) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        indices = np.empty(int(indptr[-1]), np.int32)
        data = np.empty(int(indptr[-1]), np.float64)
        for a, b in _runs(indptr):
            lo, hi = indptr[a], indptr[b]
            gather = np.repeat(starts[a:b] - indptr[a:b], sizes[a:b])
            gather += np.arange(lo, hi)
            indices[lo:hi] = self._columns.data[gather]
            data[lo:hi] = self._counts.data[gather]
        return indptr, indices, data

    @staticmethod
    def _weighted(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, idf: np.ndarray,
                  width: int) -> sparse.csr_matrix:
        """Rows of counts weighted by ``idf`` and scaled to unit length (``data`` in place)."""
        sizes = np.diff(indptr)
        for a, b in _runs(indptr):
            lo, hi = indptr[a], indptr[b]
            part = data[lo:hi]
            part *= idf[indices[lo:hi]]
            row_of = np.repeat(np.arange(b - a), sizes[a:b])
            lengths = np.sqrt(np.bincount(row_of, weights=part * part, minlength=b - a))
            lengths[lengths == 0] = 1.0
            part /= lengths[row_of]
        return sparse.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, width))


def _idf(rows: int, df: np.ndarray) -> np.ndarray:
    """Smoothed idf over ``rows`` rows, given each term's document count."""
    return np.log((1.0 + rows) / (1.0 + df)) + 1.0


MAX_RANK = (1 << 16) - 1
"""Largest first-seen rank kept (ranks are stored in two bytes); a text with more
distinct terms is counted again where its ranks are asked for."""

MAX_RANKED_CHARS = MAX_RANK
"""A text this long or shorter has fewer than :data:`MAX_RANK` distinct terms (a term
takes two characters and one more or the end after it, and lowercasing turns a
character into three at most), so its ranks were kept whole."""


class _Joined:
    """:meth:`TfidfCache.add_joined`'s work: texts counted from their pieces, in batches.

    Terms are numbered two ways here: the pieces' numbers (``counted``'s, then
    numbers past them for words it lacks) and the target cache's own.
    """

    def __init__(self, cache: TfidfCache, counted: TfidfCache) -> None:
        self.cache, self.counted = cache, counted
        self.words: list[str] = list(counted._vocab)  # pieces' number -> word
        self.lookup: dict[str, int] = dict(counted._vocab)  # word -> pieces' number
        stop = [w in cache._stop for w in self.words]
        # One-character runs and the separator of joined pieces: numbered only to be dropped.
        for word in (*_ASCII_SINGLES, _SEPARATOR):
            self.lookup[word] = len(self.words)
            self.words.append(word)
            stop.append(True)
        self.separator = self.lookup[_SEPARATOR]
        self.stop = _Buffer(np.bool_)  # per pieces' number: dropped
        self.stop.extend(np.array(stop, bool))
        vocab = cache._vocab
        self.own = _Buffer(np.int64)  # per pieces' number: the cache's own, -1 while none
        self.own.extend(np.array([vocab.get(w, -1) for w in self.words], np.int64))

    def _numbered(self, words: list[str]) -> np.ndarray:
        """The pieces' numbers of ``words`` (words new to both get the next ones).

        Which new word gets which number does not matter: the cache numbers terms by
        where they are first seen, not by these numbers.
        """
        lookup = self.lookup
        found = np.fromiter(map(lookup.get, words, repeat(-1)), np.int64, count=len(words))
        new = np.flatnonzero(found < 0)
        if len(new):
            fresh = list(map(words.__getitem__, new.tolist()))
            added = [w for w in dict.fromkeys(fresh) if w not in lookup]
            for word in added:
                lookup[word] = len(self.words)
                self.words.append(word)
            stop, vocab = self.cache._stop, self.cache._vocab
            self.stop.extend(np.array([w in stop for w in added], bool))
            self.own.extend(np.array([vocab.get(w, -1) for w in added], np.int64))
            found[new] = np.fromiter(map(lookup.__getitem__, fresh), np.int64, count=len(fresh))
        return found

    def add(self, texts: Sequence[Sequence[str]]) -> None:
        """Count a batch of texts given as pieces into the target cache.

        A piece ``counted`` holds brings its entries (term, count, rank); any other
        piece brings each of its words as an entry of count one, in order, so the
        merge below, which sums a text's entries per term and keeps the first place
        of each, does the counting of those pieces too.
        """
        counted = self.counted
        pieces = [piece for text in texts for piece in text]
        owner = np.repeat(np.arange(len(texts), dtype=np.int64),
                          np.fromiter(map(len, texts), np.int64, count=len(texts)))
        # Per piece: counted's number of it, or -1 (read here; too long for its ranks too).
        held_at = np.fromiter(map(counted._index.get, pieces, repeat(-1)), np.int64,
                              count=len(pieces))
        held_at[np.fromiter(map(len, pieces), np.int64, count=len(pieces))
                > MAX_RANKED_CHARS] = -1
        is_held = held_at >= 0
        read = np.flatnonzero(~is_held)
        # The pieces read here, split at once; each piece's words end with a separator
        # (but the last piece's), a word dropped like a stop word.
        words = _joined_words(list(map(pieces.__getitem__, read.tolist())))
        numbers = self._numbered(words)
        del words
        ends = np.flatnonzero(numbers == self.separator) + 1
        sizes = np.diff(np.r_[0, ends, len(numbers)]) if len(read) else ends
        # Every piece's entries laid out in (text, piece, first-seen rank) order.
        size = np.zeros(len(held_at), np.int64)
        size[is_held] = counted._sizes.data[held_at[is_held]]
        size[read] = sizes
        base = np.zeros(len(size), np.int64)
        base[1:] = np.cumsum(size)[:-1]
        total = int(size.sum())
        term = np.empty(total, np.int64)
        count = np.empty(total, np.float64)
        held_size = size[is_held]
        before = np.cumsum(held_size) - held_size  # held entries before each held piece
        gather = np.repeat(counted._starts.data[held_at[is_held]] - before, held_size)
        gather += np.arange(len(gather), dtype=np.int64)  # every held entry, as stored
        place = np.repeat(base[is_held], held_size) + counted._ranks.data[gather]
        term[place] = counted._columns.data[gather]
        count[place] = counted._counts.data[gather]
        here = np.ones(total, bool)
        here[place] = False
        term[here] = numbers
        count[here] = 1.0
        del numbers
        text = np.repeat(owner, size)
        keep = ~self.stop.data[term]
        term, count, text = term[keep], count[keep], text[keep]
        # One entry per (text, term), where it is first seen, its counts summed.
        # A stable sort (faster here than the default): each run's head is its first place.
        # The counts are whole numbers, so their sums are exact in any order.
        key = text * len(self.words) + term
        order = np.argsort(key, kind="stable")
        key = key[order]
        heads = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else order[:0]
        first = order[heads]
        summed = np.add.reduceat(count[order], heads) if len(heads) else count[:0]
        order = _order_of_places(first, len(term))  # no two are equal
        first, summed = first[order], summed[order]
        term, text = term[first], text[first]
        own = self.own.data
        fresh, seen = np.unique(term[own[term] < 0], return_index=True)
        for number in fresh[np.argsort(seen, kind="stable")].tolist():  # in order of appearance
            own[number] = self.cache._term(self.words[number])
        self.cache._append(own[term].astype(np.int32), summed.astype(np.float32),
                           np.bincount(text, minlength=len(texts)).astype(np.int64))


_ENTRIES_PER_RUN = 1 << 20
"""Entries :meth:`TfidfCache.matrix` works on at once (about a million)."""


def row_runs(indptr: np.ndarray, entries: int) -> list[tuple[int, int]]:
    """Rows ``[a, b)`` of a CSR matrix in runs of about ``entries`` entries (one row at least)."""
    n = len(indptr) - 1
    runs: list[tuple[int, int]] = []
    a = 0
    while a < n:
        b = int(np.searchsorted(indptr, indptr[a] + entries, side="right")) - 1
        b = min(max(b, a + 1), n)
        runs.append((a, b))
        a = b
    return runs


_COUNT_CHUNK = 1 << 20
"""Column numbers :func:`column_counts` counts at once."""


def column_counts(indices: np.ndarray, width: int, *, chunk: int = _COUNT_CHUNK) -> np.ndarray:
    """``np.bincount(indices, minlength=width)``, a run of ``chunk`` numbers at a time.

    ``bincount`` copies 4-byte column numbers (a CSR matrix's ``indices``) into
    8-byte ones before it counts: over every entry of a large matrix that copy is
    twice the size of the indices themselves (some 200 MB at 100,000 files). Counts
    are whole numbers, so adding the runs' counts gives the same array.
    """
    counts = np.zeros(max(width, 0), np.int64)
    for start in range(0, len(indices), chunk):
        part = np.bincount(indices[start : start + chunk], minlength=width)
        if len(part) > len(counts):  # a number at or past ``width``, as bincount allows
            part[: len(counts)] += counts
            counts = part
        else:
            counts[: len(part)] += part
    return counts


def _runs(indptr: np.ndarray) -> list[tuple[int, int]]:
    """:func:`row_runs` of about :data:`_ENTRIES_PER_RUN` entries."""
    return row_runs(indptr, _ENTRIES_PER_RUN)


def cosine_rows(matrix: sparse.csr_matrix, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Cosine of row pairs ``(left[k], right[k])`` of a unit-row matrix."""
    if len(left) == 0:
        return np.zeros(0)
    products = matrix[left].multiply(matrix[right])
    return np.asarray(products.sum(axis=1)).ravel()
