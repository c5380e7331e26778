"""Alarms: near-duplicate content, stale descriptions, stale facts, lost source locators.

Each check is a heuristic meant to point a person (or the management agent) at
places worth a look; none of them proves a defect.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from memdir.metrics._pairs import similar_pairs
from memdir.metrics._taxonomy import MIN_UNIT_CHARS
from memdir.metrics._text import TfidfCache
from memdir.metrics._tree import StoreTree

__all__ = [
    "DescriptionMismatch",
    "DuplicatePair",
    "LostFacts",
    "StaleFact",
    "extract_locators",
    "find_duplicates",
    "find_stale_descriptions",
    "find_stale_facts",
    "lost_facts",
    "reference_locators",
]

@dataclass(frozen=True, slots=True)
class DuplicatePair:
    """Two units in different files whose texts are nearly the same (TF-IDF cosine)."""

    a: str
    b: str
    cosine: float


DUPLICATE_SKETCH = 4
"""Rarest terms per unit the near-duplicate search pairs on once postings grow long."""


def find_duplicates(tree: StoreTree, threshold: float = 0.9, *,
                    min_chars: int = MIN_UNIT_CHARS,
                    cache: TfidfCache | None = None,
                    exact: bool = False) -> list[DuplicatePair]:
    """Pairs of content units in different files with cosine at or above ``threshold``.

    No pair is compared unless the two units share a rare term (prefix
    filtering, see :func:`memdir.metrics._pairs.similar_pairs`), and every pair
    reported has its cosine computed exactly. With ``exact`` the search finds every
    pair all-pairs comparison finds; by default, terms held by many units pair
    their units only when they share two of their :data:`DUPLICATE_SKETCH` rarest
    terms, so the work stays linear in the number of units as the store grows
    (copies and edited copies are still found: the scale benchmark measures recall).
    """
    units = [u for u in tree.units if len(u.text) >= min_chars]
    if len(units) < 2:
        return []
    matrix = (cache or TfidfCache()).matrix([u.text for u in units])
    file_ids: dict[str, int] = {}
    files = np.array([file_ids.setdefault(u.file, len(file_ids)) for u in units], np.int64)
    a, b, cos = similar_pairs(matrix, max(threshold, 1e-12), apart=files,
                              sketch=None if exact else DUPLICATE_SKETCH)
    found = [DuplicatePair(units[i].key, units[j].key, float(c))
             for i, j, c in zip(a.tolist(), b.tolist(), cos.tolist(), strict=True)]
    return sorted(found, key=lambda p: (-p.cosine, p.a, p.b))


@dataclass(frozen=True, slots=True)
class DescriptionMismatch:
    """A file whose description shares little weighted vocabulary with its body."""

    path: str
    description: str
    cosine: float


def find_stale_descriptions(tree: StoreTree, threshold: float = 0.02, *,
                            min_chars: int = MIN_UNIT_CHARS,
                            cache: TfidfCache | None = None) -> list[DescriptionMismatch]:
    """Files whose description-to-body TF-IDF cosine is below ``threshold``.

    The vectors are fitted on all bodies and descriptions together, English stop
    words left out, so a description that shares none of its file's content words
    scores 0. Files without
    a description, or with a body under ``min_chars`` characters, are skipped
    (lint reports a missing description).

    A body is counted from its pieces (:attr:`FileSummary.parts`): a unit whose
    terms ``cache`` (a term cache that keeps stop words, e.g. the units' one)
    already counted is not read again; the vectors are those of the bodies counted
    whole, to the bit (see :meth:`TfidfCache.add_joined`), and each cosine is
    computed a run of files at a time (:meth:`TfidfCache.pair_cosines`), so no
    matrix of every body is held.
    """
    files = tree.files
    paths = [p for p, s in files.items()
             if s.description.strip() and _long_enough(s.parts, min_chars)]
    if not paths:
        return []
    vectors = TfidfCache(stop_words="english")
    bodies = vectors.add_joined([files[p].parts for p in paths], cache or TfidfCache())
    described = vectors.numbers([files[p].description for p in paths])
    cos = vectors.pair_cosines(bodies, described)
    return [
        DescriptionMismatch(p, tree.files[p].description, float(c))
        for p, c in zip(paths, cos.tolist(), strict=True)
        if c < threshold
    ]


def _long_enough(parts: tuple[str, ...], min_chars: int) -> bool:
    """``len(body.strip()) >= min_chars`` for the body joined from ``parts``, without joining it."""
    total = sum(map(len, parts))
    if total < min_chars:
        return False
    lead = 0
    for part in parts:  # the body's leading whitespace: whole blank pieces, then part of one
        stripped = len(part.lstrip())
        lead += len(part) - stripped
        if stripped:
            break
    trail = 0
    for part in reversed(parts):
        stripped = len(part.rstrip())
        trail += len(part) - stripped
        if stripped:
            break
    return (total - lead - trail if lead < total else 0) >= min_chars


@dataclass(frozen=True, slots=True)
class StaleFact:
    """The same subject stated twice in one file with different values and no time marker."""

    path: str
    subject: str
    lines: tuple[int, ...]
    values: tuple[str, ...]


_KEY_VALUE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?P<key>[A-Za-z][^:*_\[\]\n]{0,38}?)(?:\*\*|__)?\s*:\s+"
    r"(?P<value>\S.{0,79})\s*$"
)
_TIME_MARKER = re.compile(
    r"\b(?:formerly|previously|earlier|until|since|used to|no longer|former|past|before|"
    r"after|now|then|was|were|changed|moved|old|superseded|as of|"
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|"
    r"sep(?:tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|(?:19|20)\d\d)\b"
    r"|\d{4}-\d{2}(?:-\d{2})?",
    re.IGNORECASE,
)


def find_stale_facts(tree: StoreTree) -> list[StaleFact]:
    """Find subjects given two or three different values in one file, none of them dated.

    The check reads ``subject: value`` lines (bullets and bold subjects included).
    A subject repeated more than three times (a transcript's speaker, say) is not a
    fact line; a group where any line carries a time marker (a date, a year, a month,
    or words such as formerly, until, now) is taken as an update
    that was recorded with its timing, which is what the contract asks for.
    """
    found: list[StaleFact] = []
    for path, summary in tree.files.items():
        groups: dict[str, list[tuple[int, str]]] = defaultdict(list)
        body = summary.body
        if ":" not in body:  # every fact line holds a colon; most bodies hold none or few
            continue
        for offset, line in enumerate(body.split("\n")):
            if ":" not in line:  # far cheaper than the pattern, which needs a colon too
                continue
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
            if any(_TIME_MARKER.search(text) for _, text in entries):
                continue
            found.append(StaleFact(path, key, tuple(n for n, _ in entries),
                                   tuple(t for _, t in entries)))
    return found


_TOKEN = r"[A-Z]{1,3}\d+(?:[A-Z]{1,3}\d+)*"
_BRACKET = re.compile(rf"\[\s*({_TOKEN}(?:\s*[,;]\s*{_TOKEN})*)\s*\]")
_SPLIT = re.compile(r"\s*[,;]\s*")


def extract_locators(text: str) -> set[str]:
    """Source locators in brackets: ``[S5T3]``, ``[B4M7]``, ``[M12]``, ``[S5T3, S5T4]``."""
    found: set[str] = set()
    for match in _BRACKET.finditer(text):
        found.update(part for part in _SPLIT.split(match.group(1)) if part)
    return found


_BARE = re.compile(rf"(?<![A-Za-z0-9]){_TOKEN}(?![A-Za-z0-9])")


def reference_locators(text: str) -> set[str]:
    """Locators of a reference text: bracketed ones, or else a bare list (``S5T3`` per line)."""
    found = extract_locators(text)
    return found if found else set(_BARE.findall(text))


@dataclass(frozen=True, slots=True)
class LostFacts:
    """Reference locators that no longer appear anywhere in the store."""

    reference: int
    missing: list[str]

    @property
    def share(self) -> float:
        """Missing locators over reference locators (0 when there is no reference)."""
        return len(self.missing) / self.reference if self.reference else 0.0


def _locator_order(locator: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.findall(r"\d+|\D+", locator))


def lost_facts(reference: Iterable[str], texts: Iterable[str]) -> LostFacts:
    """Compare reference locators with those the store's texts still carry."""
    wanted = set(reference)
    present: set[str] = set()
    for text in texts:
        present |= extract_locators(text)
    missing = sorted(wanted - present, key=_locator_order)
    return LostFacts(len(wanted), missing)
