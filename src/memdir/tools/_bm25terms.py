"""What BM25 counts, without numpy: index terms, a term's idf, a hit, a file's best lines.

Kept apart from the index (:mod:`memdir.tools._bm25index`, which holds its
postings in numpy arrays) so that a new process whose saved index it can trust
as it is (:mod:`memdir.tools._bm25light`) tokenizes, weighs and shows lines
exactly as the index does, by the same code, without importing numpy.

Tokenizing follows bm25s's default (lower case, words of two or more word
characters, English stopwords removed). An English stemmer is applied only when
PyStemmer is installed; :attr:`Tokenizer.stemmer` says which is in force so a
run can pin it.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memdir.store import ROOT

__all__ = ["B", "K1", "Hit", "LineMatch", "Tokenizer", "best_lines", "idf", "index_text"]

K1: Final = 1.5
"""BM25 term-frequency saturation (bm25s's default)."""
B: Final = 0.75
"""BM25 length normalisation (bm25s's default)."""

_WORD: Final = re.compile(r"\w\w+")
"""Words of two or more word characters: bm25s's ``(?u)\\b\\w\\w+\\b`` without the word
boundaries, which a greedy run of word characters implies (and twice as fast)."""
_FRONTMATTER_KEY: Final = re.compile(r"(?m)^[ \t]*[\w-]+:")


def _english_stopwords() -> frozenset[str]:
    """bm25s's English stopword list, read without importing bm25s itself.

    ``import bm25s`` loads scipy and more (half a second of a new process's start);
    its stopword module is plain data, so it is executed on its own. Where bm25s is
    laid out otherwise, the ordinary import is used.
    """
    spec = importlib.util.find_spec("bm25s")
    where = list(spec.submodule_search_locations or []) if spec is not None else []
    if where and "bm25s.stopwords" not in sys.modules:
        own = importlib.util.spec_from_file_location(
            "memdir._bm25s_stopwords", Path(where[0]) / "stopwords.py")
        if own is not None and own.loader is not None:
            module = importlib.util.module_from_spec(own)
            try:
                own.loader.exec_module(module)
                return frozenset(module.STOPWORDS_EN)
            except (OSError, AttributeError):
                pass  # another layout: the ordinary import below
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def _load_stemmer() -> tuple[Callable[[str], str] | None, str]:
    try:
        stemmer_module = importlib.import_module("Stemmer")  # PyStemmer, optional
    except ImportError:
        return None, "none"
    stem = stemmer_module.Stemmer("english")
    return stem.stemWord, "snowball-english (PyStemmer)"


_STOPWORDS: Final = _english_stopwords()


class Tokenizer:
    """Text to index terms: lower case, 2+ character words, no English stopwords."""

    def __init__(self) -> None:
        self._stem, self.stemmer = _load_stemmer()
        self._stop = _STOPWORDS
        self._memo: dict[str, str] = {}

    def __call__(self, text: str) -> list[str]:
        """The index terms of ``text``, in order, repeats kept."""
        words = [w for w in _WORD.findall(text.lower()) if w not in self._stop]
        if self._stem is None:
            return words
        memo = self._memo
        out = []
        for w in words:
            s = memo.get(w)
            if s is None:
                s = memo[w] = self._stem(w)
            out.append(s)
        return out

    def counts(self, text: str) -> tuple[dict[str, int], int]:
        """Each distinct index term of ``text`` with its count, and the count of all.

        The same terms as :meth:`__call__`, counted in C rather than mapped one by one.
        """
        counted = Counter(_WORD.findall(text.lower()))
        for word in self._stop.intersection(counted):
            del counted[word]
        if self._stem is not None:
            memo, stemmed = self._memo, Counter[str]()
            for word, n in counted.items():
                term = memo.get(word)
                if term is None:
                    term = memo[word] = self._stem(word)
                stemmed[term] += n
            counted = stemmed
        return counted, counted.total()


def idf(n_files: int, df: int) -> float:
    """A term's inverse document frequency, ``ln(1 + (N - df + 0.5) / (df + 0.5))``.

    One Python float operation after another (the C library's ``log1p``), so
    every caller gets the same bits: the index scoring its arrays, the lines
    shown for each hit, and a search answered without numpy.

    Args:
        n_files: How many files are indexed (N).
        df: How many of them hold the term (at least 1).
    """
    return math.log1p((n_files - df + 0.5) / (df + 0.5))


@dataclass(frozen=True, slots=True)
class LineMatch:
    """A line of a file that shares terms with the query (line numbers from 1)."""

    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    """A ranked file."""

    path: str
    score: float


def index_text(virtual: str, text: str) -> str:
    """What gets indexed for a file: its path words, then its header values and body.

    Frontmatter keys (``name:``, ``description:``) are dropped because every file
    has them; their values stay.
    """
    words = virtual.removeprefix(ROOT).removesuffix(".md").replace("-", " ").replace("_", " ")
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end > 0:
            header = _FRONTMATTER_KEY.sub(" ", text[3:end])
            return f"{words.replace('/', ' ')}\n{header}\n{text[end + 4:]}"
    return f"{words.replace('/', ' ')}\n{text}"


def best_lines(tokenizer: Tokenizer, weight: Callable[[str], float], text: str, query: str,
               limit: int = 3) -> list[LineMatch]:
    """The lines of ``text`` that share the most (rarest) terms with ``query``.

    Costs one pass over ``text``; only lines holding a query term's text are tokenized.

    Args:
        tokenizer: What turns text into terms.
        weight: Each term's idf (0 for a term no file holds).
        text: A whole file.
        query: The query text.
        limit: How many lines at most, returned in file order.
    """
    wanted = {t: weight(t) for t in tokenizer(query)}
    if not wanted:
        return []
    # A line can only hold a term if it holds the term's text, so most lines are
    # skipped without tokenizing. A stem may change the word's last letter
    # (happy -> happi), so with a stemmer the last letter is left out.
    stems = tokenizer.stemmer != "none"
    needles = tuple(t[:-1] if stems and len(t) > 2 else t for t in wanted)
    scored: list[tuple[float, int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        low = line.lower()
        if not any(n in low for n in needles):
            continue
        terms = set(tokenizer(line))
        # Summed in the query's order, not the set's: a set's order follows the
        # process's string hashes, and so would the sum's last bit.
        present = [t for t in wanted if t in terms]
        if present:
            weight_sum = sum(wanted[t] for t in present) + 1e-9 * len(present)
            scored.append((weight_sum, number, line))
    scored.sort(key=lambda s: (-s[0], s[1]))
    chosen = sorted(scored[:limit], key=lambda s: s[1])
    return [LineMatch(number, line) for _, number, line in chosen]
