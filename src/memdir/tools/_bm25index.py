"""A BM25 index over a store's files: derived state, rebuilt when the files change.

The files are the truth; the index is a cache of them. A search first checks
whether the files may have changed: it takes a fingerprint of the store (every
markdown file's path, inode, mtime and size, from one directory walk) and
rebuilds the index when it differs from the one the index was built from. That
walk costs one ``stat`` per file (tens of milliseconds at 5,000 files), so it is
skipped while the store's :attr:`~memdir.store.Store.generation` (changes made
through memdir in this process, the shell tool included) is unchanged and the
last walk is less than :data:`RESCAN_SECONDS` old; edits by other processes
are therefore seen within that many seconds. Files whose fingerprint did not change keep their
cached term counts, so a rebuild after a few edits re-reads only the edited files.
The index lives in memory only: rebuilding it from cached term counts takes about
a tenth of a second for 5,000 files (see ``_bm25matrix``), so persisting it
would buy little beyond a faster first search after a restart.

Tokenizing follows bm25s's default (lower case, words of two or more word
characters, English stopwords removed). An English stemmer is applied only when
PyStemmer is installed; :attr:`Tokenizer.stemmer` says which is in force so a
run can pin it.
"""

from __future__ import annotations

import importlib
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from memdir.store import ROOT, Store, StoreError
from memdir.tools._bm25matrix import DocTerms, TermMatrix, doc_terms

__all__ = [
    "RESCAN_SECONDS",
    "FileIndex",
    "Hit",
    "LineMatch",
    "Tokenizer",
    "index_for",
    "index_text",
]

_WORD: Final = re.compile(r"(?u)\b\w\w+\b")
_FRONTMATTER_KEY: Final = re.compile(r"(?m)^[ \t]*[\w-]+:")
_CACHED_STORES: Final = 8
RESCAN_SECONDS: Final = 2.0
"""Longest time a search trusts its last walk of the files when memdir made no change."""


def _load_stemmer() -> tuple[Callable[[str], str] | None, str]:
    try:
        stemmer_module = importlib.import_module("Stemmer")  # PyStemmer, optional
    except ImportError:
        return None, "none"
    stem = stemmer_module.Stemmer("english")
    return stem.stemWord, "snowball-english (PyStemmer)"


class Tokenizer:
    """Text to index terms: lower case, 2+ character words, no English stopwords."""

    def __init__(self) -> None:
        self._stem, self.stemmer = _load_stemmer()
        self._stop = frozenset(STOPWORDS_EN)
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


@dataclass(frozen=True, slots=True)
class _FileKey:
    virtual: str
    ino: int
    mtime_ns: int
    size: int


def _scan(store: Store) -> list[_FileKey]:
    """Every memory file of ``store`` (the store's own walk decides which), sorted by path."""
    try:
        nodes = store.tree()
    except StoreError:
        return []
    out = [_FileKey(n.virtual, n.ino, n.mtime_ns, n.size) for n in nodes if n.kind == "memory"]
    out.sort(key=lambda k: k.virtual)
    return out


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


class FileIndex:
    """BM25 over every markdown file of one store, kept in step with the files.

    Thread-safe: searches may run in worker threads.

    Args:
        store: The store to index.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        rescan_seconds: How long to trust the last walk of the files while the
            store's generation is unchanged (0: walk before every search).
    """

    def __init__(
        self,
        store: Store,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        rescan_seconds: float = RESCAN_SECONDS,
    ) -> None:
        self.store = store
        self.rescan_seconds = rescan_seconds
        self.tokenizer = Tokenizer()
        self._k1 = k1
        self._b = b
        self._lock = threading.Lock()
        self._keys: list[_FileKey] | None = None
        self._vocab: dict[str, int] = {}
        self._terms: dict[str, tuple[_FileKey, DocTerms]] = {}
        self._paths: list[str] = []
        self._matrix: TermMatrix | None = None
        self._checked: tuple[int, float] | None = None
        """Store generation and monotonic time of the last walk of the files."""
        self.builds = 0

    def __len__(self) -> int:
        return len(self._paths)

    @property
    def paths(self) -> list[str]:
        """The indexed files, in index order (as of the last refresh)."""
        return list(self._paths)

    def refresh(self) -> bool:
        """Bring the index in step with the files; return whether it was rebuilt."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> bool:
        generation, now = self.store.generation, time.monotonic()
        if (
            self._checked is not None
            and self._checked[0] == generation
            and now - self._checked[1] < self.rescan_seconds
        ):
            return False
        keys = _scan(self.store)
        self._checked = (generation, now)
        if keys == self._keys:
            return False
        docs: list[DocTerms] = []
        terms: dict[str, tuple[_FileKey, DocTerms]] = {}
        for key in keys:
            cached = self._terms.get(key.virtual)
            if cached is not None and cached[0] == key:
                counted = cached[1]
            else:
                tokens = self.tokenizer(index_text(key.virtual, _read(self.store, key.virtual)))
                counted = doc_terms(tokens, self._vocab)
            terms[key.virtual] = (key, counted)
            docs.append(counted)
        self._terms = terms
        self._paths = [k.virtual for k in keys]
        self._matrix = TermMatrix(docs, len(self._vocab), self._k1, self._b)
        self._keys = keys
        self.builds += 1
        return True

    def search(self, query: str | Sequence[str], k: int, under: str = ROOT) -> list[Hit]:
        """The ``k`` best files for ``query`` at or below ``under``, best first.

        Files that share no term with the query are never returned. Ties keep
        path order. Call :meth:`refresh` first for results that reflect the files
        as they are now (the tools do).

        Args:
            query: The query text, or its terms already tokenized.
            k: How many files at most.
            under: A folder (virtual path) that limits the search.
        """
        with self._lock:
            if self._matrix is None:
                return []
            terms = self.tokenizer(query) if isinstance(query, str) else list(query)
            ids = [self._vocab[t] for t in dict.fromkeys(terms) if t in self._vocab]
            scores = self._matrix.scores(ids)
            if under != ROOT:
                prefix = under.rstrip("/") + "/"
                mask = np.fromiter(
                    (p.startswith(prefix) for p in self._paths), dtype=bool, count=len(self._paths)
                )
                scores = np.where(mask, scores, 0.0)
            return _top(scores, self._paths, k)

    def idf(self, term: str) -> float:
        """A term's inverse document frequency (0 for a term no file contains)."""
        i = self._vocab.get(term)
        matrix = self._matrix
        if i is None or matrix is None or i >= len(matrix.df) or matrix.df[i] == 0:
            return 0.0
        return float(matrix.idf[i])

    def best_lines(self, text: str, query: str, limit: int = 3) -> list[LineMatch]:
        """The lines of ``text`` that share the most (rarest) terms with ``query``.

        Args:
            text: A whole file.
            query: The query text.
            limit: How many lines at most, returned in file order.
        """
        wanted = {t: self.idf(t) for t in self.tokenizer(query)}
        if not wanted:
            return []
        # A line can only hold a term if it holds the term's text, so most lines are
        # skipped without tokenizing. A stem may change the word's last letter
        # (happy -> happi), so with a stemmer the last letter is left out.
        stems = self.tokenizer.stemmer != "none"
        needles = tuple(t[:-1] if stems and len(t) > 2 else t for t in wanted)
        scored: list[tuple[float, int, str]] = []
        for number, line in enumerate(text.split("\n"), start=1):
            low = line.lower()
            if not any(n in low for n in needles):
                continue
            present = set(self.tokenizer(line)) & wanted.keys()
            if present:
                weight = sum(wanted[t] for t in present) + 1e-9 * len(present)
                scored.append((weight, number, line))
        scored.sort(key=lambda s: (-s[0], s[1]))
        chosen = sorted(scored[:limit], key=lambda s: s[1])
        return [LineMatch(number, line) for _, number, line in chosen]


def _top(scores: np.ndarray[Any, Any], paths: list[str], k: int) -> list[Hit]:
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return []
    if positive.size > k:
        part = np.argpartition(-scores[positive], k - 1)[:k]
        positive = positive[part]
    order = sorted(positive.tolist(), key=lambda i: (-float(scores[i]), i))
    return [Hit(paths[i], float(scores[i])) for i in order]


def _read(store: Store, virtual: str) -> str:
    try:
        return store.read_bytes(virtual).decode("utf-8", errors="replace")
    except StoreError:
        return ""  # removed or replaced since the walk


_INDEXES: OrderedDict[Path, FileIndex] = OrderedDict()
_INDEXES_LOCK = threading.Lock()


def index_for(store: Store) -> FileIndex:
    """The shared index of a store's root (one per root, the last few roots kept)."""
    with _INDEXES_LOCK:
        index = _INDEXES.get(store.root)
        if index is None:
            index = FileIndex(store)
            _INDEXES[store.root] = index
            while len(_INDEXES) > _CACHED_STORES:
                _INDEXES.popitem(last=False)
        _INDEXES.move_to_end(store.root)
        return index
