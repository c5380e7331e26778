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
    "heading_rows",
    "headings",
    "parsed_headings",
    "section_in",
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

    A body made only of ATX headings, blank lines, paragraph lines (no line
    starts with what could open a list, quote, fence, code or HTML block, a
    reference, a rule or a setext underline) and simple bullets (``-``, ``*`` or
    ``+``, one space, then text that could start a paragraph line) is read by
    a scan for its ``#`` lines, with markdown-it's own heading rule; any other
    body goes through markdown-it. Both give the same headings (a property test
    checks this); the scan is some thirty times faster on a file of tens of
    thousands of headings.

    Args:
        body: Markdown text (without frontmatter).
        first_line: The file line number of the body's first line.
    """
    plain = _plain_headings(body, first_line)
    return plain if plain is not None else parsed_headings(body, first_line)


def heading_rows(body: str, first_line: int = 1) -> list[tuple[int, str, int, int]]:
    """:func:`headings` as ``(level, text, line, offset)`` rows, without the objects.

    ``offset`` is where the heading's (first) line starts in ``body``. For a caller
    that reads every heading of many files and keeps its own records of them.

    Args:
        body: Markdown text (without frontmatter).
        first_line: The file line number of the body's first line.
    """
    plain = _plain_rows(body, first_line)
    if plain is not None:
        return plain
    found = parsed_headings(body, first_line)
    if not found:
        return []
    starts = [0]  # where each body line starts, up to the last heading's
    for length in map(len, body.split("\n", found[-1].line - first_line)):
        starts.append(starts[-1] + length + 1)
    # markdown-it also breaks lines at a lone CR: a heading past the body's last
    # "\n" line is placed at the body's end
    size = len(body)
    rows: list[tuple[int, str, int, int]] = []
    for head in found:
        index = head.line - first_line
        rows.append((head.level, head.text, head.line,
                     min(starts[index], size) if index < len(starts) else size))
    return rows


def parsed_headings(body: str, first_line: int = 1) -> list[Heading]:
    """The headings of a body as markdown-it's block parser finds them."""
    tokens = _parser().parse(body)
    found: list[Heading] = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        inline = tokens[index + 1]
        text = inline.content.strip()
        found.append(Heading(int(token.tag[1]), text, token.map[0] + first_line))
    return found


# First characters of a line that may open something other than a paragraph or an
# ATX heading in CommonMark (indentation, fences, quotes, rules, lists, setext
# underlines, references, HTML blocks).
_BLOCK_STARTS = frozenset(" \t`~>*-_+=[<0123456789")

# A line that opens some other block: indented text, a line that starts with one of
# ``_BLOCK_STARTS`` but blanks, or a bullet that is not simple (see ``_simple_bullet``).
_OPENS = r"(?:[ \t]+[^ \t\n]|[`~>_=\[<0-9]|[-*+](?! [^ \t`~>*\-_+=\[<0-9#\n]))"
_OPENS_FIRST = re.compile(_OPENS)
_OPENS_LATER = re.compile("\n" + _OPENS)  # a literal first character: a fast search


def _plain_headings(body: str, first_line: int) -> list[Heading] | None:
    """The headings of a body with no block structure beyond them, or None for any other body."""
    rows = _plain_rows(body, first_line)
    return None if rows is None else [Heading(level, text, line) for level, text, line, _ in rows]


def _plain_rows(body: str, first_line: int) -> list[tuple[int, str, int, int]] | None:
    """:func:`heading_rows` of a body with no block structure beyond them, or None for any other.

    The body's lines are checked by a regular expression (each line as the rule of
    ``_simple_bullet`` and ``_BLOCK_STARTS`` reads it), then only its ``#`` lines are
    visited.
    """
    if "\r" in body or "\0" in body:
        return None  # markdown-it normalises these first, which moves lines or text
    if _OPENS_FIRST.match(body) or _OPENS_LATER.search(body):
        return None
    found: list[tuple[int, str, int, int]] = []
    find, count = body.find, body.count
    start = 0 if body.startswith("#") else find("\n#") + 1  # a "#" line's start; 0: none
    if not start and not body.startswith("#"):
        return found
    line, at = first_line, 0
    while True:
        end = find("\n", start)
        text = body[start:] if end < 0 else body[start:end]
        level = len(text) - len(text.lstrip("#"))
        if level <= 6 and (level == len(text) or text[level] in " \t"):
            line += count("\n", at, start)
            at = start
            found.append((level, _atx_text(text, level), line, start))
        if end < 0:
            return found
        start = find("\n#", end) + 1
        if not start:
            return found


def _simple_bullet(line: str) -> bool:
    """Whether ``line`` is a bullet whose item is one paragraph line (so it holds no heading).

    Such an item can only continue with indented lines (which the scan refuses) or
    lazy paragraph lines, and an ATX heading at the margin ends it; a setext
    underline after it is refused too, so no heading changes. (``_OPENS`` is this
    rule as a pattern; a test checks that both agree.)
    """
    return (len(line) > 2 and line[0] in "-*+" and line[1] == " "
            and line[2] not in _BLOCK_STARTS and line[2] != "#")


def _atx_text(line: str, level: int) -> str:
    """The text of ATX heading ``line`` of ``level`` by markdown-it's rule (``heading.py``)."""
    if line[-1] not in "# \t":  # the common case: no closing marks, no trailing blanks
        return line[level:].strip()
    end = len(line.rstrip(" \t"))
    end = max(end, level)
    closing = len(line[:end].rstrip("#"))
    if closing > level and line[closing - 1] in " \t":
        end = closing
    return line[level:end].strip()


def sections(body: str, first_line: int = 1) -> list[Section]:
    """All sections of a body, in document order, each with its heading path.

    One pass over the headings: a heading closes every open section of its
    level or deeper (they end on the line before it), so the work is linear in
    the number of headings.
    """
    heads = headings(body, first_line)
    last_line = first_line + body.count("\n")
    if body.endswith("\n"):
        last_line -= 1
    ends = [last_line] * len(heads)
    paths: list[tuple[str, ...]] = []
    open_: list[int] = []  # indices of the sections still open, outermost first
    for index, head in enumerate(heads):
        while open_ and heads[open_[-1]].level >= head.level:
            ends[open_.pop()] = head.line - 1
        open_.append(index)
        paths.append(tuple(heads[i].text for i in open_))
    return [
        Section(head, path, head.line, max(end, head.line))
        for head, path, end in zip(heads, paths, ends, strict=True)
    ]


def _norm(label: str) -> str:
    # str.split() splits on the same whitespace as the pattern \s+ and drops it at the ends.
    return " ".join(label.lstrip("#").split()).casefold()


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
    return section_in(sections(body, first_line), path)


def section_in(all_sections: list[Section], path: list[str] | tuple[str, ...]) -> Section:
    """:func:`find_section` among sections already found (:func:`sections` of a body).

    For a caller that looks up many paths in one file: its sections are found once.

    Raises:
        LookupError: As :func:`find_section`.
    """
    wanted = [_norm(p) for p in path if _norm(p)]
    if not wanted:
        raise LookupError("Give at least one heading, e.g. ['Work', 'Projects'].")
    normed: dict[str, str] = {}  # each distinct heading text is normalised once

    def norm(label: str) -> str:
        if label not in normed:
            normed[label] = _norm(label)
        return normed[label]

    matches = [s for s in all_sections
               if norm(s.heading.text) == wanted[-1] and _matches(tuple(map(norm, s.path)), wanted)]
    exact = [s for s in matches if len(s.path) == len(wanted)]
    if len(exact) == 1:
        return exact[0]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        if not all_sections:
            raise LookupError("The file has no headings; read it with view instead.")
        outline = _listed(
            [f"  {'#' * s.heading.level} {s.heading.text} (line {s.start})"
             for s in all_sections[: MAX_LISTED + 1]],
            len(all_sections), "headings",
        )
        raise LookupError(
            f"No section matches {' > '.join(path)}. The file's headings are:\n{outline}"
        )
    listed = _listed(
        [f"  {' > '.join(s.path)} (line {s.start})" for s in matches[: MAX_LISTED + 1]],
        len(matches), "matches",
    )
    raise LookupError(
        f"{' > '.join(path)} matches {len(matches)} sections; give a longer path:\n{listed}"
    )


MAX_LISTED = 50
"""Headings or matches an error lists before it says how many more there are."""


def _listed(rows: list[str], total: int, what: str) -> str:
    """The first rows of ``total``, and how many more there are."""
    if total <= MAX_LISTED:
        return "\n".join(rows)
    more = total - MAX_LISTED
    return "\n".join(rows[:MAX_LISTED]) + (
        f"\n  [... {more:,} more {what}; toc lists the file's outline]"
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


def xrefs(text: str, first_line: int = 1) -> list[XRef]:
    """Find cross-references: full paths ``/memories/....md`` with optional section steps.

    Args:
        text: Markdown text.
        first_line: The line number of the text's first line.
    """
    found: list[XRef] = []
    if ROOT not in text:
        return found  # most files cite nothing: no split into lines
    for number, line in enumerate(text.split("\n"), start=first_line):
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
