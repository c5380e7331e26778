"""Evidence ids: parse the benchmarks' dialogue ids, however written, into locators.

LoCoMo and REALTALK cite supporting turns as dialogue ids ``D{n}:{m}``. Most are
clean; some are not: several ids in one string (``D8:6; D9:17``, ``D9:1 D4:4``),
stray characters (``D:11:26``, ``D 2:18``, ``D5:3.``, ``D17;39``, ``23:29``),
ranges (``D12:3-D12:5``), zero padding (``D30:05``) and empty strings. Every id
found is mapped through the conversation's own table of dialogue ids to a
locator; what could not be mapped is kept in an :class:`EvidenceNote`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memdir.bench._schema import EvidenceNote

__all__ = ["canonical_id", "resolve_evidence"]

_CLEAN = re.compile(r"^D(\d+):(\d+)$")
_ID = re.compile(
    r"(?:D\s*:?\s*)?(\d+)\s*[:;]\s*(\d+)"
    r"(?:\s*-\s*(?:D\s*)?(?:(\d+)\s*:\s*)?(\d+))?"
)


def canonical_id(prefix: int, number: int) -> str:
    """The clean form of a dialogue id."""
    return f"D{prefix}:{number}"


def _expand(match: re.Match[str]) -> list[str] | None:
    """The ids a match names; None for a range that crosses into another prefix."""
    first, second = int(match.group(1)), int(match.group(2))
    if match.group(4) is None:
        return [canonical_id(first, second)]
    end_prefix = int(match.group(3)) if match.group(3) else first
    end = int(match.group(4))
    if end_prefix != first or end < second:
        return None
    return [canonical_id(first, k) for k in range(second, end + 1)]


def resolve_evidence(
    question_id: str, raw: list[str], table: Mapping[str, str]
) -> tuple[list[str], list[EvidenceNote]]:
    """Turn a question's raw evidence strings into locators.

    Args:
        question_id: The question, for the notes.
        raw: The evidence strings as the benchmark wrote them.
        table: The conversation's dialogue ids (clean form) to locators.

    Returns:
        The locators (deduplicated, in citation order) and one note for each
        string that was not a clean, known id.
    """
    locators: list[str] = []
    notes: list[EvidenceNote] = []

    def add(found: list[str]) -> None:
        for loc in found:
            if loc not in locators:
                locators.append(loc)

    for text in raw:
        clean = _CLEAN.match(text)
        if clean and text in table:
            add([table[text]])
            continue
        found, missing, bad_range = _scan(text, table)
        add(found)
        notes.append(_note(question_id, text, found, missing, bad_range))
    return locators, notes


def _scan(text: str, table: Mapping[str, str]) -> tuple[list[str], list[str], bool]:
    found: list[str] = []
    missing: list[str] = []
    bad_range = False
    for match in _ID.finditer(text):
        ids = _expand(match)
        if ids is None:
            bad_range = True
            continue
        hits = [table[i] for i in ids if i in table]
        if match.group(4) is None and not hits:
            missing.extend(ids)
        elif not hits:
            missing.append(match.group(0))
        found.extend(hits)
    return found, missing, bad_range


def _note(
    question_id: str, text: str, found: list[str], missing: list[str], bad_range: bool
) -> EvidenceNote:
    if not text.strip():
        return EvidenceNote(
            question_id=question_id, raw=text, locators=[], action="dropped",
            detail="empty evidence string",
        )
    problems = []
    if missing:
        problems.append("no such turn: " + ", ".join(missing))
    if bad_range:
        problems.append("a range that spans sessions")
    if not found and not missing and not bad_range:
        problems.append("no dialogue id could be read")
    if problems:
        action = "unresolved"
        detail = "; ".join(problems)
        if found:
            detail += " (the rest was read as " + ", ".join(found) + ")"
    else:
        action = "normalised"
        detail = "read as " + ", ".join(found)
    return EvidenceNote(
        question_id=question_id, raw=text, locators=found, action=action, detail=detail
    )
