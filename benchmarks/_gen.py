"""A seeded generator of realistic memory stores for the benchmarks.

Files have frontmatter, a title, a few ``##`` sections (some with ``###``
subsections), paragraphs of words drawn with Zipf-like frequencies from a fixed
pseudo-vocabulary plus common English words, bullet lists, and now and then a
cross-reference. Folders nest up to three levels. The same seed gives the same
store byte for byte.

:func:`make_scale_store` writes the stores of the scale benchmark
(``benchmarks/scale.py``): the folder tree grows with the file count (about one
folder per 25 files, nested up to five levels), cross-references point at any
earlier file (some at one of its sections, about one in a hundred at nothing),
and a few files carry a section copied from an earlier file, verbatim or with a
few words changed, so the health report's near-duplicate check has real work.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["GeneratedStore", "ScaleStore", "make_big_file", "make_scale_store", "make_store",
           "vocabulary"]

_COMMON = (
    "the of and to in is was for on that with as it at by from this have had "
    "meeting project family trip birthday dinner weekend doctor school garden music "
    "book movie friend work plan budget travel house car dog cat coffee tea city"
).split()
_ONSETS = ["b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
           "br", "ch", "dr", "gl", "pr", "st", "tr", "sh", "th"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou"]
_CODAS = ["", "n", "r", "l", "s", "t", "m", "x", "nd", "rk"]


def vocabulary(size: int, seed: int = 7) -> list[str]:
    """The common words (most frequent first), then distinct pronounceable pseudo-words."""
    rng = np.random.default_rng(seed)
    words: dict[str, None] = {}
    while len(words) < size:
        syllables = int(rng.integers(2, 4))
        word = "".join(
            _ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))]
            + _CODAS[rng.integers(len(_CODAS))]
            for _ in range(syllables)
        )
        words.setdefault(word)
    return _COMMON + [w for w in words if w not in _COMMON]


@dataclass(frozen=True)
class GeneratedStore:
    """What was generated: the root, the files' virtual paths, and the word list."""

    root: Path
    paths: list[str]
    vocab: list[str]
    total_bytes: int


class _Writer:
    """Text from a precomputed stream of Zipf-distributed words (fast and seeded)."""

    def __init__(self, seed: int, vocab: list[str], words_needed: int) -> None:
        self.rng = random.Random(seed)
        self._np = np.random.default_rng(seed)
        self.vocab = vocab
        ranks = np.arange(1, len(vocab) + 1, dtype=np.float64)
        weights = 1.0 / ranks**1.05
        self.p = weights / weights.sum()
        self._chunk = max(10_000, words_needed)
        self._stream: list[str] = []
        self._pos = 0

    def words(self, n: int) -> list[str]:
        if self._pos + n > len(self._stream):
            idx = self._np.choice(len(self.vocab), size=self._chunk, p=self.p)
            self._stream = [self.vocab[i] for i in idx.tolist()]
            self._pos = 0
        out = self._stream[self._pos : self._pos + n]
        self._pos += n
        return out

    def sentence(self, lo: int = 6, hi: int = 18) -> str:
        return " ".join(self.words(self.rng.randrange(lo, hi))).capitalize() + "."

    def paragraph(self) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randrange(2, 7)))

    def block(self, others: list[str]) -> str:
        if self.rng.random() < 0.2:
            items = [f"- {self.sentence(4, 10)}" for _ in range(self.rng.randrange(2, 6))]
            text = "\n".join(items)
        else:
            text = self.paragraph()
        if others and self.rng.random() < 0.05:
            text += f" See {self.rng.choice(others)}."
        return text

    def body(self, target: int, others: list[str]) -> str:
        parts = [f"# {self.sentence(2, 6).rstrip('.')}", self.paragraph()]
        size = sum(len(p) + 2 for p in parts)
        while size < target:
            level = 3 if self.rng.random() < 0.25 else 2
            new = [f"{'#' * level} {self.sentence(2, 5).rstrip('.')}"]
            new += [self.block(others) for _ in range(self.rng.randrange(1, 4))]
            parts += new
            size += sum(len(p) + 2 for p in new)
        return "\n\n".join(parts)


def _folders(writer: _Writer) -> list[str]:
    names = iter(dict.fromkeys(w for w in writer.words(20_000) if len(w) > 5))
    tops = [next(names) for _ in range(8)]
    folders: list[str] = list(tops)
    for top in tops:
        for _ in range(writer.rng.randrange(3, 7)):
            mid = f"{top}/{next(names)}"
            folders.append(mid)
            for _ in range(writer.rng.randrange(0, 4)):
                folders.append(f"{mid}/{next(names)}")
    return folders


def make_store(
    root: Path, files: int = 5000, total_bytes: int = 20_000_000, seed: int = 1
) -> GeneratedStore:
    """Write ``files`` markdown files of about ``total_bytes`` in all under ``root``."""
    rng = np.random.default_rng(seed)
    vocab = vocabulary(6000, seed)
    writer = _Writer(seed, vocab, total_bytes // 7)
    folders = _folders(writer)
    sizes = rng.lognormal(mean=0.0, sigma=0.6, size=files)
    # Bodies overshoot their target by about one block; aim a little low.
    sizes = (sizes / sizes.sum() * total_bytes * 0.89).astype(int)
    paths: list[str] = []
    counter = itertools.count()
    written = 0
    for size in sizes:
        folder = writer.rng.choice(folders)
        stem = f"{writer.words(1)[0]}-{next(counter)}"
        virtual = f"/memories/{folder}/{stem}.md"
        desc = writer.sentence(5, 12)
        header = f"---\nname: {stem}\ndescription: {desc}\n---\n"
        text = header + writer.body(int(size), paths[-50:])
        host = root / folder / f"{stem}.md"
        host.parent.mkdir(parents=True, exist_ok=True)
        data = (text + "\n").encode("utf-8")
        host.write_bytes(data)
        written += len(data)
        paths.append(virtual)
    return GeneratedStore(root, paths, vocab, written)


def make_big_file(path: Path, target_bytes: int = 1_000_000, seed: int = 2) -> list[str]:
    """Write one file of about ``target_bytes`` with many sections; return its ## headings."""
    writer = _Writer(seed, vocabulary(6000, seed), target_bytes // 7)
    lines = ["---", f"name: {path.stem}", "description: A very long file", "---", "# Big file", ""]
    headings: list[str] = []
    size = 0
    number = 0
    while size < target_bytes:
        number += 1
        title = f"Part {number} {writer.sentence(2, 4).rstrip('.')}"
        headings.append(title)
        block = [f"## {title}", ""]
        for _ in range(3):
            block += [writer.paragraph(), ""]
        if number % 3 == 0:
            block += [f"### Details {number}", "", writer.paragraph(), ""]
        lines += block
        size += sum(len(b) + 1 for b in block)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return headings


@dataclass(frozen=True)
class ScaleStore:
    """A scale-benchmark store: the root, its files, and what was planted in it.

    Attributes:
        root: The store's folder.
        paths: Every file's agent path, in the order written.
        vocab: The word list the text was drawn from (most frequent first).
        total_bytes: Bytes written.
        folders: Every folder, relative to the root.
        duplicates: (copy, source) agent paths of files given a verbatim copy of a section.
        near_duplicates: (copy, source) agent paths of files given an edited copy.
        dangling: Agent paths of files holding a reference to a file that does not exist.
    """

    root: Path
    paths: list[str]
    vocab: list[str]
    total_bytes: int
    folders: list[str]
    duplicates: list[tuple[str, str]]
    near_duplicates: list[tuple[str, str]]
    dangling: list[str]


def _scale_folders(writer: _Writer, count: int) -> list[str]:
    """``count`` distinct folders, nested up to five levels, shallow ones more often."""
    names = (w for w in writer.words(50 * count + 20_000) if len(w) > 4)
    used: set[str] = set()
    folders: list[str] = []
    tops = max(4, min(12, count // 4 or 1))
    while len(folders) < count:
        parent = ""
        if len(folders) >= tops:
            parent = writer.rng.choice(folders)
            while parent.count("/") >= 4 or writer.rng.random() < 0.3 * parent.count("/"):
                parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
        name = next(names, None) or f"folder{len(folders)}"
        path = f"{parent}/{name}" if parent else name
        if path not in used:
            used.add(path)
            folders.append(path)
    return folders


def _edit_words(writer: _Writer, text: str, share: float) -> str:
    """``text`` with about ``share`` of its words replaced by others (lines kept)."""
    out = []
    for line in text.split("\n"):
        words = line.split(" ")
        for k, word in enumerate(words):
            if word and not word.startswith(("#", "-", "/")) and writer.rng.random() < share:
                words[k] = writer.words(1)[0]
        out.append(" ".join(words))
    return "\n".join(out)


def make_scale_store(root: Path, files: int, *, mean_bytes: int = 4000, seed: int = 1,
                     copy_share: float = 0.02, ref_share: float = 0.05,
                     stale_share: float = 0.01) -> ScaleStore:
    """Write a store of ``files`` files of about ``mean_bytes`` each under ``root``.

    The same arguments give the same store byte for byte. About ``copy_share`` of
    the files get one section copied verbatim from an earlier file, as many again
    an edited copy (5% of its words changed); a text block cites an earlier file
    with probability ``ref_share`` (a quarter of those name one of its sections,
    one in twenty-five names a file that does not exist). A description names the
    title and a few of the body's words, except for ``stale_share`` of the files,
    whose description is a sentence about nothing in the file.
    """
    rng = np.random.default_rng(seed)
    vocab = vocabulary(6000, seed)
    writer = _Writer(seed, vocab, 1_000_000)
    folders = _scale_folders(writer, max(8, files // 25))
    sizes = rng.lognormal(mean=0.0, sigma=0.6, size=files)
    sizes = (sizes / sizes.sum() * mean_bytes * files * 0.85).astype(int)
    paths: list[str] = []
    first_heading: list[str] = []
    recent: list[tuple[str, str]] = []  # (path, a section's text) of recent files
    duplicates: list[tuple[str, str]] = []
    near: list[tuple[str, str]] = []
    dangling: list[str] = []
    written = 0
    for number, size in enumerate(sizes.tolist()):
        folder = folders[min(int(writer.rng.paretovariate(1.2)) - 1, len(folders) - 1)
                         if writer.rng.random() < 0.3 else writer.rng.randrange(len(folders))]
        stem = f"{writer.words(1)[0]}-{number}"
        virtual = f"/memories/{folder}/{stem}.md"
        refs: list[str] = []
        if paths:
            for _ in range(max(1, int(size) // 600)):
                if writer.rng.random() >= ref_share:
                    continue
                pick = writer.rng.randrange(len(paths))
                roll = writer.rng.random()
                if roll < 0.04:
                    refs.append(f"see /memories/{folder}/gone-{number}.md")
                    dangling.append(virtual)
                elif roll < 0.3 and first_heading[pick]:
                    refs.append(f"see {paths[pick]} > ## {first_heading[pick]}")
                else:
                    refs.append(f"see {paths[pick]}")
        body = writer.body(int(size), [])
        blocks = body.split("\n\n")
        texts = [k for k, b in enumerate(blocks) if not b.startswith("#")]
        for ref in refs:  # each reference ends a random paragraph
            blocks[writer.rng.choice(texts)] += f" See {ref.removeprefix('see ')}."
        roll = writer.rng.random()
        if recent and roll < 2 * copy_share:
            source, section = recent[writer.rng.randrange(len(recent))]
            if roll < copy_share:
                duplicates.append((virtual, source))
            else:
                section = _edit_words(writer, section, 0.05)
                near.append((virtual, source))
            blocks.append(section)
        body = "\n\n".join(blocks)
        sections = [b for b in blocks if b.startswith("## ")]
        first_heading.append(sections[0][3:].split("\n")[0] if sections else "")
        start = body.find("\n\n## ")
        if start >= 0:
            end = body.find("\n\n## ", start + 4)
            recent.append((virtual, body[start + 2 : end if end > 0 else len(body)]))
            recent = recent[-200:]
        if writer.rng.random() < stale_share:
            desc = writer.sentence(5, 12)  # about nothing in particular: may read as stale
        else:  # the title's words and a few of the body's rarer ones
            rare = [w for w in body.split() if len(w) > 7 and w.isalpha()][:40]
            picked = writer.rng.sample(rare, min(3, len(rare)))
            desc = f"{blocks[0].lstrip('# ')} - {', '.join(picked)}."
        text = f"---\nname: {stem}\ndescription: {desc}\n---\n{body}\n"
        host = root / folder / f"{stem}.md"
        host.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        host.write_bytes(data)
        written += len(data)
        paths.append(virtual)
    return ScaleStore(root, paths, vocab, written, folders, duplicates, near, dangling)
