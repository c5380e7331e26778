"""Where a skill-library entry records its sources: ``metadata.sources`` or a Sources section.

The skill setting asks every entry to name the attempts it was drawn from, each
with its outcome. The curator may keep that list in either of two places: the
header's ``metadata.sources`` (``[{task: t1, outcome: success}]``), or a section
of the body headed ``Sources`` (at any heading level) with one attempt per list
item. An item names the task, then its outcome, in any of these forms::

    - {task: trial-0012, outcome: success}
    - task: trial-0012, outcome: failure
    - trial-0012: success
    - trial-0012 (failure)
    - put a clean plate in countertop - success

Both places may be used at once; the entry's sources are then both lists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["SourcesSection", "body_without_sources", "find_sources_section"]

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<rest>.*\S)\s*$")
_KEYED = re.compile(r"^task:\s*(?P<task>.+?)\s*,\s*outcome:\s*(?P<outcome>[a-z]+)$", re.I)
_PLAIN = re.compile(
    r"^(?P<task>.+?)\s*(?::|,|\(|\s[-\u2013\u2014]|[\u2013\u2014])\s*(?:outcome:\s*)?"
    r"(?P<outcome>success|failure)\s*\)?\.?$", re.I)
_QUOTES = "\"'`"


@dataclass(frozen=True, slots=True)
class SourcesSection:
    """The body's Sources section: the attempts it lists, and lines that list none."""

    start: int
    """0-based line index of the section's heading in the body."""
    end: int
    """0-based index of the first line after the section."""
    pairs: list[tuple[str, str]] = field(default_factory=list)
    """(task, outcome) per item, in order."""
    problems: list[str] = field(default_factory=list)
    """Each non-blank line of the section that names no task and outcome."""


def _pair(line: str) -> tuple[str, str] | None:
    bullet = _BULLET.match(line)
    if bullet is None:
        return None
    rest = bullet["rest"].strip()
    if rest.startswith("{") and rest.endswith("}"):
        rest = rest[1:-1].strip()
    found = _KEYED.match(rest) or _PLAIN.match(rest)
    if found is None:
        return None
    outcome = found["outcome"].lower()
    task = found["task"].strip().strip(_QUOTES).strip()
    if outcome not in ("success", "failure") or not task:
        return None
    return task, outcome


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(index, level, text) of every heading outside fenced code."""
    found = []
    fenced = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        heading = None if fenced else _HEADING.match(line)
        if heading is not None:
            found.append((index, len(heading[1]), heading[2]))
    return found


def find_sources_section(body: str) -> SourcesSection | None:
    """The first section headed ``Sources`` in ``body`` (None when there is none).

    The section runs from its heading to the next heading of the same or a
    higher level, or to the end of the body.
    """
    lines = body.splitlines()
    headings = _headings(lines)
    for position, (start, level, text) in enumerate(headings):
        if text.strip().lower() != "sources":
            continue
        end = next((i for i, lv, _ in headings[position + 1:] if lv <= level), len(lines))
        pairs: list[tuple[str, str]] = []
        problems: list[str] = []
        for line in lines[start + 1:end]:
            if not line.strip():
                continue
            pair = _pair(line)
            if pair is None:
                problems.append(line.strip())
            else:
                pairs.append(pair)
        return SourcesSection(start, end, pairs, problems)
    return None


def body_without_sources(body: str) -> str:
    """``body`` with its Sources section (heading and items) cut out."""
    section = find_sources_section(body)
    if section is None:
        return body
    lines = body.splitlines()
    return "\n".join(lines[:section.start] + lines[section.end:])
