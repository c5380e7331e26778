"""Markdown structure inside a file: headings, sections and cross-references.

Headings come from markdown-it-py, so a ``#`` inside a fenced code block or an
HTML block is not mistaken for one. Line numbers are 1-based and count from the
top of the whole file (frontmatter included), the numbering ``view`` shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from memdir.store._paths import ROOT

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = [
    "Heading",
    "Section",
    "XRef",
    "find_section",
    "headings",
    "sections",
    "xrefs",
]


@dataclass(frozen=True, slots=True)
class Heading:
    """A markdown heading: its level (1-6), its text and its line."""

    level: int
    text: str
    line: int


@dataclass(frozen=True, slots=True)
class Section:
    """A heading with the lines it governs, up to the next heading of equal or higher rank."""

    heading: Heading
    path: tuple[str, ...]
    """Heading texts from the outermost enclosing heading down to this one."""
    start: int
    end: int
    """Last line of the section, inclusive."""


@dataclass(frozen=True, slots=True)
class XRef:
    """A cross-reference ``/memories/a/b.md`` (optionally ``> ## Section``) in a file."""

    target: str
    section: tuple[str, ...]
    line: int


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # imported on first parse: commands that never parse skip it

    # Headings need only the block pass (a heading's raw text is on its inline
    # token before inline parsing); skipping the inline pass saves about 40 %.
    return MarkdownIt("commonmark").disable(["inline", "text_join"])


def headings(body: str, first_line: int = 1) -> list[Heading]:
    """List the headings of a markdown body.

    Args:
        body: Markdown text (without frontmatter).
        first_line: The file line number of the body's first line.
    """
    tokens = _parser().parse(body)
    found: list[Heading] = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        inline = tokens[index + 1]
        text = inline.content.strip()
        found.append(Heading(int(token.tag[1]), text, token.map[0] + first_line))
    return found


def sections(body: str, first_line: int = 1) -> list[Section]:
    """All sections of a body, in document order, each with its heading path."""
    heads = headings(body, first_line)
    last_line = first_line + body.count("\n")
    if body.endswith("\n"):
        last_line -= 1
    result: list[Section] = []
    stack: list[Heading] = []
    for index, head in enumerate(heads):
        while stack and stack[-1].level >= head.level:
            stack.pop()
        stack.append(head)
        end = last_line
        for later in heads[index + 1 :]:
            if later.level <= head.level:
                end = later.line - 1
                break
        result.append(Section(head, tuple(h.text for h in stack), head.line, max(end, head.line)))
    return result


def _norm(label: str) -> str:
    return re.sub(r"\s+", " ", label.lstrip("#").strip()).casefold()


def find_section(body: str, path: list[str] | tuple[str, ...], first_line: int = 1) -> Section:
    """Find the section named by a heading path.

    The path lists heading texts from outer to inner (``["Work", "2023"]``); leading
    ``#`` marks are ignored, as is case. A path may skip enclosing headings as long
    as its steps appear in order, and a single name may match at any depth.

    Raises:
        LookupError: No section matches, or several do; the message lists the
            headings that exist so the caller can choose.
    """
    wanted = [_norm(p) for p in path if _norm(p)]
    if not wanted:
        raise LookupError("Give at least one heading, e.g. ['Work', 'Projects'].")
    all_sections = sections(body, first_line)
    matches = [s for s in all_sections if _matches(tuple(_norm(p) for p in s.path), wanted)]
    exact = [s for s in matches if len(s.path) == len(wanted)]
    if len(exact) == 1:
        return exact[0]
    if len(matches) == 1:
        return matches[0]
    outline = "\n".join(
        f"  {'#' * s.heading.level} {s.heading.text} (line {s.start})" for s in all_sections
    )
    if not matches:
        raise LookupError(
            f"No section matches {' > '.join(path)}. The file's headings are:\n{outline}"
            if all_sections
            else "The file has no headings; read it with view instead."
        )
    listed = "\n".join(f"  {' > '.join(s.path)} (line {s.start})" for s in matches)
    raise LookupError(
        f"{' > '.join(path)} matches {len(matches)} sections; give a longer path:\n{listed}"
    )


def _matches(have: tuple[str, ...], wanted: list[str]) -> bool:
    if not have or have[-1] != wanted[-1]:
        return False
    position = 0
    for label in have:
        if position < len(wanted) and label == wanted[position]:
            position += 1
    return position == len(wanted)


_XREF = re.compile(
    re.escape(ROOT)
    + r"((?:/[^\s/\]\)\[\(`'\"<>,;:]+)+?\.md)"
    + r"((?:[ \t]*>[ \t]*#{1,6}[ \t]+[^>\n\]\)\[,;`]+)*)"
    r"(?=[\s\]\)`'\",;:.]|$)"
)
_SECTION_STEP = re.compile(r">[ \t]*(#{1,6})[ \t]+([^>]+)")


def xrefs(text: str) -> list[XRef]:
    """Find cross-references: full paths ``/memories/....md`` with optional section steps."""
    found: list[XRef] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if ROOT not in line:
            continue
        for match in _XREF.finditer(line):
            # A heading runs to the next step, a closing bracket, a comma or semicolon,
            # or the end of the line (a sentence's final period is not part of it), so
            # multi-word headings such as "## Work history" stay whole.
            steps = tuple(m.group(2).strip().rstrip(".").rstrip()
                          for m in _SECTION_STEP.finditer(match.group(2)))
            found.append(XRef(ROOT + match.group(1), steps, number))
    return found
