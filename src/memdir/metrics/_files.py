"""One memory file reduced to what the metrics need: headings, content units, references.

A summary depends only on the file's text, so it can be cached by content (a git
blob id or a digest) and reused across every snapshot that holds the same file.
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir.store import XRef, parse_document, sections

__all__ = ["FileSummary", "HeadingInfo", "UnitText", "summarize"]


@dataclass(frozen=True, slots=True)
class HeadingInfo:
    """A heading, its parent heading (index into the file's headings, or -1) and its line."""

    level: int
    text: str
    parent: int
    line: int


@dataclass(frozen=True, slots=True)
class UnitText:
    """The text of one content unit: a leaf section, or a whole file without headings."""

    heading: int
    """Index of the leaf heading, or -1 for a file without headings."""
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class FileSummary:
    """What the metrics read from one file."""

    bytes: int
    description: str
    body: str
    body_line: int
    """File line number of the body's first line."""
    headings: tuple[HeadingInfo, ...]
    units: tuple[UnitText, ...]
    xrefs: tuple[XRef, ...]


def summarize(text: str, path: str = "/memories/file.md") -> FileSummary:
    """Parse a file's text into its headings, content units and cross-references.

    A unit's text is the lines a leaf section governs, without its heading line;
    the lines of a section that has subsections (and any text before the first
    heading) belong to no unit and count only towards the file's bytes.
    """
    doc = parse_document(path, text)
    lines = text.split("\n")
    found_sections = sections(doc.body, doc.body_line)
    found = [s.heading for s in found_sections]
    ends = [s.end for s in found_sections]
    heads: list[HeadingInfo] = []
    stack: list[int] = []
    for index, head in enumerate(found):
        while stack and heads[stack[-1]].level >= head.level:
            stack.pop()
        heads.append(HeadingInfo(head.level, head.text, stack[-1] if stack else -1, head.line))
        stack.append(index)
    has_child = {h.parent for h in heads}
    units: list[UnitText] = []
    if not heads:
        units.append(UnitText(-1, doc.body_line, doc.body.strip()))
    for index, head in enumerate(found):
        if index in has_child:
            continue
        own = "\n".join(lines[head.line : ends[index]]).strip()
        units.append(UnitText(index, head.line, own))
    return FileSummary(
        bytes=len(text.encode("utf-8")),
        description=doc.description,
        body=doc.body,
        body_line=doc.body_line,
        headings=tuple(heads),
        units=tuple(units),
        xrefs=tuple(doc.xrefs),
    )
