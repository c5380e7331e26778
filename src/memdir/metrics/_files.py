"""One memory file reduced to what the metrics need: headings, content units, references.

A summary depends only on the file's text, so it can be cached by content (a git
blob id or a digest) and reused across every snapshot that holds the same file.

Each file's text is held once: the body is kept in pieces, the content units'
texts (the very strings the units hold) and the text between them (headings, the
lines of sections that have subsections, the whitespace a unit's text was
stripped of), and joined back when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir.store import XRef
from memdir.store._frontmatter import description_and_body
from memdir.store._markdown import heading_rows, xrefs

__all__ = ["FileSummary", "HeadingInfo", "UnitText", "summarize", "utf8_size"]


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
    parts: tuple[str, ...]
    """The body in pieces, ``(between, unit, between, ..., unit, between)``, each unit
    piece the very string of that unit's text, in the units' order; or the whole body
    as one piece where the units could not be cut out of it (see :attr:`aligned`)."""
    body_line: int
    """File line number of the body's first line."""
    headings: tuple[HeadingInfo, ...]
    units: tuple[UnitText, ...]
    xrefs: tuple[XRef, ...]

    @property
    def body(self) -> str:
        """The file's text after its frontmatter, joined from :attr:`parts` on each call."""
        parts = self.parts
        return parts[0] if len(parts) == 1 else "".join(parts)

    @property
    def aligned(self) -> bool:
        """Whether :attr:`parts` alternates the text between units with the units' texts.

        Every cut between two pieces then has whitespace on one side at least, so
        no word runs across a cut, and lowercasing (whose only context rule, for a
        final capital sigma, stops at whitespace) treats each piece as it treats the
        body: the body's tokens are its pieces' tokens one after the other.
        """
        return len(self.parts) == 2 * len(self.units) + 1


def summarize(text: str, path: str = "/memories/file.md") -> FileSummary:
    """Parse a file's text into its headings, content units and cross-references.

    A unit's text is the lines a leaf section governs, without its heading line;
    the lines of a section that has subsections (and any text before the first
    heading) belong to no unit and count only towards the file's bytes.

    The cost is linear in the file's size; the body is scanned once for its
    headings (:func:`memdir.store.headings`) and once for references.
    """
    description, body, first = description_and_body(text)
    found = heading_rows(body, first)
    heads: list[HeadingInfo] = []
    stack: list[int] = []
    for index, (level, title, line, _) in enumerate(found):
        while stack and found[stack[-1]][0] >= level:
            stack.pop()
        heads.append(HeadingInfo(level, title, stack[-1] if stack else -1, line))
        stack.append(index)
    units: list[UnitText] = []
    if not heads:
        units.append(UnitText(-1, first, body.strip()))
    else:
        has_child = {h.parent for h in heads}
        find, size = body.find, len(body)
        for index, row in enumerate(found):
            if index in has_child:
                continue
            # A leaf section ends where the next heading starts (one deeper would be its
            # child), as :func:`memdir.store.sections` ends it, or with the body; its
            # text is the lines after its heading's.
            after = find("\n", row[3]) + 1
            stop = found[index + 1][3] if index + 1 < len(found) else size
            own = body[after:stop].strip() if after else ""
            units.append(UnitText(index, row[2], own))
    return FileSummary(
        bytes=utf8_size(text),
        description=description,
        parts=_parts(body, units),
        body_line=first,
        headings=tuple(heads),
        units=tuple(units),
        xrefs=tuple(xrefs(body, first)),
    )


def utf8_size(text: str) -> int:
    """``len(text.encode("utf-8"))``, without the copy for ASCII text."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _parts(body: str, units: list[UnitText]) -> tuple[str, ...]:
    """``body`` cut around each unit's text (see :attr:`FileSummary.parts`).

    Each unit's text is looked for from the end of the previous one on, where it
    has whitespace (or the body's end) on both sides, which is where its lines
    are; a unit with no text goes where the previous one ended. Should any unit
    not be found so, the body is kept whole.
    """
    parts: list[str] = []
    done = 0
    find, size = body.find, len(body)
    for unit in units:
        text = unit.text
        start = end = done
        if text:
            start = find(text, done)
            while start >= 0 and not (  # inside a longer word: look further on
                    (start == 0 or body[start - 1].isspace())
                    and (start + len(text) == size or body[start + len(text)].isspace())):
                start = find(text, start + 1)
            if start < 0:
                return (body,)
            end = start + len(text)
        parts.append(body[done:start])
        parts.append(text)
        done = end
    parts.append(body[done:])
    return tuple(parts)
