"""A memory file as HTML: markdown with line anchors, references and locators as links.

Every block element carries the file line it starts on (``id="L12"``), so a
citation or a grep hit opens at its line in the rendered view as well as in the
numbered source view. Cross-references become links to the section they name,
or are marked dangling with the reason; source locators such as ``[S5T3]`` link to
the turn they name when the store's conversation is known.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup, escape

from memdir.conversation import LOCATOR_GROUP, LOCATOR_IN_TEXT
from memdir.store import ConflictBlock, XRef, xrefs

__all__ = ["LinkResolver", "Linked", "linkify", "render_body", "render_lines", "render_markdown"]

_SECTION_STEP = r"[ \t]*>[ \t]*#{{1,6}}[ \t]+{}"


@dataclass(frozen=True, slots=True)
class Linked:
    """Where a reference leads: a URL, or why it leads nowhere."""

    url: str | None
    problem: str | None = None


@dataclass(slots=True)
class LinkResolver:
    """Turns references and locators into URLs for one page.

    Attributes:
        xref: Maps a cross-reference to its target (or the reason it dangles).
        locator: Maps a locator such as ``S5T3`` to the turn's URL, or None when
            the conversation is unknown or holds no such turn.
        highlight: File lines to mark as cited (inclusive ranges).
    """

    xref: Callable[[XRef], Linked]
    locator: Callable[[str], str | None]
    highlight: Sequence[tuple[int, int]] = field(default_factory=tuple)

    def cited(self, start: int, end: int) -> bool:
        """Whether lines ``start``..``end`` overlap a highlighted range."""
        return any(a <= end and start <= b for a, b in self.highlight)


def _spans(text: str) -> list[tuple[int, int, str, Any]]:
    """Non-overlapping (start, end, kind, value) spans of references and locators."""
    found: list[tuple[int, int, str, Any]] = []
    position = 0
    for ref in xrefs(text):
        start = text.find(ref.target, position)
        if start < 0:
            continue
        end = start + len(ref.target)
        for step in ref.section:
            match = re.compile(_SECTION_STEP.format(re.escape(step))).match(text, end)
            if match is None:
                break
            end = match.end()
        found.append((start, end, "xref", ref))
        position = end
    for match in LOCATOR_GROUP.finditer(text):
        if not any(s <= match.start() < e for s, e, _, _ in found):
            found.append((match.start(), match.end(), "locators", match))
    return sorted(found, key=lambda s: s[0])


def linkify(text: str, links: LinkResolver) -> Markup:
    """Escape ``text`` and turn its references and locators into links."""
    out: list[str] = []
    position = 0
    for start, end, kind, value in _spans(text):
        out.append(str(escape(text[position:start])))
        piece = text[start:end]
        if kind == "xref":
            target = links.xref(value)
            if target.url is None:
                out.append(f'<span class="xref dangling" title="dangling: '
                           f'{escape(target.problem or "")}">{escape(piece)}</span>')
            else:
                out.append(f'<a class="xref" href="{escape(target.url)}">{escape(piece)}</a>')
        else:
            out.append(_locator_links(piece, links))
        position = end
    out.append(str(escape(text[position:])))
    return Markup("".join(out))


def _locator_links(piece: str, links: LinkResolver) -> str:
    out: list[str] = []
    position = 0
    for match in LOCATOR_IN_TEXT.finditer(piece):
        out.append(str(escape(piece[position:match.start()])))
        url = links.locator(match.group(0))
        label = escape(match.group(0))
        out.append(f'<a class="locator" href="{escape(url)}">{label}</a>' if url
                   else f'<span class="locator">{label}</span>')
        position = match.end()
    out.append(str(escape(piece[position:])))
    return "".join(out)


def _text_rule(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return str(linkify(tokens[idx].content, env["links"]))


def _code_rule(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f"<code>{linkify(tokens[idx].content, env['links'])}</code>"


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # No raw HTML: a store file is data, and must never inject markup into the page.
    # Line breaks are kept, since memory files are written (and cited) line by line.
    # The rules read the page's links from ``env``, so one parser serves every thread.
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("table")
    md.add_render_rule("text", _text_rule)
    md.add_render_rule("code_inline", _code_rule)
    return md


_LEAVES = {"heading_open", "tr_open", "fence", "code_block", "hr"}


def _raw(html: str) -> Token:
    token = Token("html_inline", "", 0)
    token.content = html
    return token


def _line_spans(inline: Token, first: int, links: LinkResolver, claimed: set[int]) -> bool:
    """Wrap each line of a paragraph in ``<span id="L<n>">``; False if one could not be.

    A line is wrapped only when no emphasis or link opens or closes inside it, so the
    spans never cross other elements; such a line gets an empty anchor instead.
    """
    lines: list[list[Token]] = [[]]
    for child in inline.children or []:
        if child.type in ("softbreak", "hardbreak"):
            lines.append([])
        lines[-1].append(child)
    out: list[Token] = []
    whole = True
    for offset, segment in enumerate(lines):
        number = first + offset
        ident = f' id="L{number}"' if number not in claimed else ""
        claimed.add(number)
        head = segment[:1] if segment and segment[0].type.endswith("break") else []
        rest = segment[len(head):]
        cited = " cited" if links.cited(number, number) else ""
        if all(t.nesting == 0 for t in rest):
            out += [*head, _raw(f'<span class="line{cited}"{ident} data-lines="{number}-'
                                f'{number}">'), *rest, _raw("</span>")]
        else:
            whole = whole and not cited
            out += [*head, _raw(f'<span class="line"{ident}></span>'), *rest]
    inline.children = out
    return whole


_FRAME = re.compile(r"^<!-- memdir-conflict (?P<id>[0-9a-f]{8}) (?P<kind>begin|version|end)"
                    r"(?:: (?P<text>.*?))? -->\r?$")
"""A line of a sync conflict block's frame (:mod:`memdir.store._conflicts`)."""


def render_body(body: str, first_line: int, links: LinkResolver,
                blocks: Sequence[ConflictBlock] = ()) -> Markup:
    """Render a file's body, each sync conflict block apart from the markdown around it.

    A block's frame lines are HTML comments, which the page shows as text; left in the
    markdown they join the paragraph or list item above them (the second version's
    label read as part of the first version's last line). Each block is shown as a box
    of its own instead, each version rendered under its label, line anchors kept.

    Args:
        body: The markdown after the frontmatter.
        first_line: The file line the body starts on.
        links: How to link references and locators, and which lines are cited.
        blocks: The file's conflict blocks (:func:`memdir.store.find_blocks`, file lines).
    """
    lines = body.split("\n")
    parts: list[str] = []
    done = 0  # lines of the body rendered so far

    def markdown(upto: int) -> None:
        if upto > done:
            parts.append(render_markdown("\n".join(lines[done:upto]), first_line + done, links))

    for block in blocks:
        start, end = block.first - first_line, block.last - first_line + 1
        if start < done or end > len(lines):
            continue  # not in the body (or overlapping one shown): stays in the markdown
        markdown(start)
        parts.append(_conflict_box(lines[start:end], block, links))
        done = end
    markdown(len(lines))
    return Markup("".join(parts))


def _conflict_box(lines: list[str], block: ConflictBlock, links: LinkResolver) -> str:
    out = [f'<div class="conflict-block" id="L{block.first}" '
           f'data-lines="{block.first}-{block.last}">'
           f'<p class="frame">sync conflict {escape(block.id)}, lines {block.first}'
           f"–{block.last}: both versions kept; replace the whole block with what is true</p>"]
    def framing(line: str) -> re.Match[str] | None:  # a nested block's frame is content
        found = _FRAME.match(line)
        return found if found is not None and found["id"] == block.id else None

    index = 1
    while index < len(lines) - 1:
        frame = framing(lines[index])
        label = (frame["text"] or "") if frame is not None and frame["kind"] == "version" else ""
        start = index + 1
        index = start
        while index < len(lines) - 1 and framing(lines[index]) is None:
            index += 1
        number = block.first + start - 1  # the file line of the label
        text = "\n".join(lines[start:index])
        shown = (render_markdown(text, number + 1, links) if text.strip()
                 else Markup('<p class="note">(nothing: this side removed the lines)</p>'))
        out.append(f'<div class="version"><p class="frame" id="L{number}">version: '
                   f"{escape(label)}</p>{shown}</div>")
    out.append(f'<p class="frame" id="L{block.last}">end of the block</p></div>')
    return "".join(out)


def render_markdown(body: str, first_line: int, links: LinkResolver) -> Markup:
    """Render a file's body as HTML with line anchors (``id="L<line>"``) on its blocks.

    Args:
        body: The markdown after the frontmatter.
        first_line: The file line the body starts on.
        links: How to link references and locators, and which lines are cited.
    """
    md = _parser()
    tokens = md.parse(body)
    claimed: set[int] = set()
    for index, token in enumerate(tokens):
        if token.map is None or token.nesting == -1:
            continue
        start = token.map[0] + first_line
        end = max(token.map[1] + first_line - 1, start)
        if token.type == "paragraph_open":
            inline = tokens[index + 1]
            if not _line_spans(inline, start, links, claimed) or (
                    links.cited(start, end) and not inline.children):
                token.attrJoin("class", "cited")
            continue
        if token.type == "inline":
            continue
        if start not in claimed:
            claimed.add(start)
            token.attrSet("id", f"L{start}")
        if token.type in _LEAVES:
            token.attrSet("data-lines", f"{start}-{end}")
            if links.cited(start, end):
                token.attrJoin("class", "cited")
    return Markup(md.renderer.render(tokens, md.options, {"links": links}))


def render_lines(text: str, links: LinkResolver) -> list[tuple[int, Markup, bool]]:
    """The file's lines as (number, linked HTML, cited) for the numbered source view."""
    return [
        (number, linkify(line, links), links.cited(number, number))
        for number, line in enumerate(text.split("\n"), start=1)
    ]
