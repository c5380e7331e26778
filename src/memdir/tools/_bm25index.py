"""A BM25 index over a store's files: derived state, rebuilt when the files change.

The files are the truth; the index is a cache of them. A search first checks
whether the files may have changed: it takes a fingerprint of the store (every
markdown file's path, inode, mtime, change time and size, from one directory walk) and
rebuilds the index when it differs from the one the index was built from. That
walk costs one ``stat`` per file (tens of milliseconds at 5,000 files), so it is
skipped while the store's :attr:`~memdir.store.Store.generation` (changes made
through memdir in this process, the shell tool included) is unchanged and the
last walk is less than :data:`RESCAN_SECONDS` old; edits by other processes
are therefore seen within that many seconds. Files whose fingerprint did not change keep their
cached term counts, so a rebuild after a few edits re-reads only the edited files.

The term counts are also saved beside the store, in its hidden state folder
(``.memdir/bm25-index.npz``, never visible under ``/memories``), so the first
search of a new process re-reads only the files that changed since the save
instead of tokenizing the whole store again (seconds at 20 MB). The file is
derived data: it is written whole to a temporary file and renamed into place
(a concurrent reader sees the old or the new one, never half of one), carries
the tokenizer it was made with and a format version, and is ignored, with a
logged warning, when it is unreadable or does not fit; the next save replaces it.

Tokenizing follows bm25s's default (lower case, words of two or more word
characters, English stopwords removed). An English stemmer is applied only when
PyStemmer is installed; :attr:`Tokenizer.stemmer` says which is in force so a
run can pin it.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
import tempfile
import threading
import time
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from memdir.store import ROOT, Store, StoreError
from memdir.store._store import STATE_DIR
from memdir.tools._bm25matrix import DocTerms, TermMatrix, doc_terms

__all__ = [
    "INDEX_FILE",
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
INDEX_FILE: Final = "bm25-index.npz"
"""The saved term counts, in the store's state folder."""
_FORMAT: Final = 2
"""Version of the saved file and of what :func:`index_text` indexes; bump on change.

2 keeps each file's change time beside its mtime (a format-1 file is replaced)."""
_SAVE_AFTER: Final = 32
"""Save again once this many files were tokenized since the last save (or load)."""
_log = logging.getLogger(__name__)


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
    ctime_ns: int
    """An edit in place that keeps the size and puts the mtime back still moves this."""
    size: int


def _scan(store: Store) -> list[_FileKey]:
    """Every memory file of ``store`` (the store's own walk decides which), sorted by path."""
    try:
        nodes = store.tree()
    except StoreError:
        return []
    out = [_FileKey(n.virtual, n.ino, n.mtime_ns, n.ctime_ns, n.size) for n in nodes
           if n.kind == "memory"]
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
        saved: Where to keep the term counts between processes (None: memory only).
    """

    def __init__(
        self,
        store: Store,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        rescan_seconds: float = RESCAN_SECONDS,
        saved: Path | None = None,
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
        self.saved = saved
        self.tokenized = 0
        """Files tokenized by this index (the rest came from the saved file or the cache)."""
        self._unsaved = 0
        self._loaded = False
        self._file_ok = False
        """Whether the saved file is known to be usable (loaded or written by this index)."""

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
        if not self._loaded:
            self._loaded = True
            if self.saved is not None:
                self._load(self.saved)
        docs: list[DocTerms] = []
        terms: dict[str, tuple[_FileKey, DocTerms]] = {}
        for key in keys:
            cached = self._terms.get(key.virtual)
            if cached is not None and cached[0] == key:
                counted = cached[1]
            else:
                tokens = self.tokenizer(index_text(key.virtual, _read(self.store, key.virtual)))
                counted = doc_terms(tokens, self._vocab)
                self.tokenized += 1
                self._unsaved += 1
            terms[key.virtual] = (key, counted)
            docs.append(counted)
        self._terms = terms
        self._paths = [k.virtual for k in keys]
        self._matrix = TermMatrix(docs, len(self._vocab), self._k1, self._b)
        self._keys = keys
        self.builds += 1
        if self.saved is not None and self._unsaved and (
            self._unsaved >= _SAVE_AFTER or not self._file_ok
        ):
            self._save(self.saved)
        return True

    def _save(self, target: Path) -> None:
        """Write the term counts to ``target`` whole (temporary file, then rename)."""
        entries = [self._terms[p] for p in self._paths]
        meta = {
            "format": _FORMAT,
            "stemmer": self.tokenizer.stemmer,
            "vocab": list(self._vocab),
            "files": [[k.virtual, k.ino, k.mtime_ns, k.ctime_ns, k.size, d.length]
                      for k, d in entries],
        }
        empty = np.zeros(0, dtype=np.int64)
        header = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
        sizes = np.array([len(d.ids) for _, d in entries], dtype=np.int64)
        # 32-bit on disk halves the file; ids and counts stay far below 2**31.
        ids = (np.concatenate([d.ids for _, d in entries]) if entries else empty).astype(np.int32)
        counts = (np.concatenate([d.counts for _, d in entries]) if entries else empty
                  ).astype(np.int32)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".bm25-", suffix=".part", dir=target.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    np.savez(handle, meta=header, sizes=sizes, ids=ids, counts=counts)
                os.replace(temp, target)
            except BaseException:
                os.unlink(temp)
                raise
        except OSError as exc:
            _log.warning("could not save the search index to %s (%s); it is rebuilt "
                         "in memory on each start", target, exc)
            return
        self._unsaved = 0
        self._file_ok = True

    def _load(self, source: Path) -> None:
        """Take the term counts saved in ``source``, or ignore it (with a warning) if unusable."""
        try:
            saved = _read_saved(source)
            meta = json.loads(saved["meta"].tobytes().decode("utf-8"))
            if not isinstance(meta, dict):
                raise ValueError("its header is not a mapping")
            sizes = saved["sizes"].astype(np.int64)
            ids = saved["ids"].astype(np.int64)
            counts = saved["counts"].astype(np.int64)
            if meta.get("format") != _FORMAT or meta.get("stemmer") != self.tokenizer.stemmer:
                return  # made by another version or tokenizer: replaced at the next save
            vocab, files = meta["vocab"], meta["files"]
            if not isinstance(files, list) or not isinstance(vocab, list) or not all(
                    isinstance(term, str) for term in vocab):
                raise ValueError("its header's vocab or files is not a list")
            fits = (len(files) == len(sizes) and int(sizes.sum()) == len(ids) == len(counts)
                    and (not len(sizes) or int(sizes.min()) >= 0))
            if not fits or (len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= len(vocab))):
                raise ValueError("its arrays do not fit together")
            bounds = np.cumsum(sizes)[:-1]
            terms: dict[str, tuple[_FileKey, DocTerms]] = {}
            pieces = zip(np.split(ids, bounds), np.split(counts, bounds), strict=True) \
                if files else iter(())
            for (virtual, ino, mtime_ns, ctime_ns, size, length), (i, c) in zip(
                    files, pieces, strict=True):
                key = _FileKey(virtual, int(ino), int(mtime_ns), int(ctime_ns), int(size))
                terms[virtual] = (key, DocTerms(i, c, int(length)))
        except FileNotFoundError:
            return
        except (OSError, EOFError, ValueError, KeyError, TypeError, RecursionError,
                zipfile.BadZipFile) as exc:
            _log.warning("ignoring the saved search index %s (%s); rebuilding it", source, exc)
            return
        self._vocab = {term: i for i, term in enumerate(vocab)}
        self._terms = terms
        self._file_ok = True

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


_ARRAYS: Final = ("meta", "sizes", "ids", "counts")


def _read_saved(source: Path) -> dict[str, np.ndarray]:
    """The four arrays of a saved index, each checked against the bytes holding it first.

    The index is saved uncompressed (``np.savez``), so none of its arrays can unpack to
    more bytes than the whole file has, and each array's header must ask for no more
    than its own bytes hold: a crafted file (a deflate bomb, a header claiming a
    billion entries) is refused before any memory is given to it, where ``np.load``
    would allocate what the header asks and then read.

    Raises:
        ValueError: An array is missing, unpacks past the file's size, is not a flat
            array of integers, or its header asks for more than its bytes hold.
        zipfile.BadZipFile: The file is not a zip archive.
    """
    limit = source.stat().st_size
    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(source) as archive:
        for name in _ARRAYS:
            try:
                info = archive.getinfo(name + ".npy")
            except KeyError:
                raise ValueError(f"it has no {name} array") from None
            if info.file_size > limit:
                raise ValueError(f"its {name} array unpacks to {info.file_size:,} bytes, "
                                 f"more than the file's {limit:,}")
            with archive.open(info) as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(member)
                elif version == (2, 0):
                    shape, _, dtype = np.lib.format.read_array_header_2_0(member)
                else:
                    raise ValueError(f"its {name} array has format {version}, not 1.0 or 2.0")
                if len(shape) != 1 or dtype.kind not in "iu":
                    raise ValueError(f"its {name} array is not a flat array of integers")
                need = shape[0] * dtype.itemsize
                if need > info.file_size:
                    raise ValueError(f"its {name} array asks for {need:,} bytes and holds "
                                     f"{info.file_size:,}")
                data = member.read(need)
            if len(data) != need:
                raise ValueError(f"its {name} array is cut short")
            arrays[name] = np.frombuffer(data, dtype=dtype)
    return arrays


def index_for(store: Store) -> FileIndex:
    """The shared index of a store's root (one per root, the last few roots kept)."""
    with _INDEXES_LOCK:
        index = _INDEXES.get(store.root)
        if index is None:
            index = FileIndex(store, saved=store.root / STATE_DIR / INDEX_FILE)
            _INDEXES[store.root] = index
            while len(_INDEXES) > _CACHED_STORES:
                _INDEXES.popitem(last=False)
        _INDEXES.move_to_end(store.root)
        return index
