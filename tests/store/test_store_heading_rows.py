"""The heading scan gives markdown-it's headings, with the offset of each heading's line.

``heading_rows`` reads a plain body by a search for its ``#`` lines and a pattern for
the lines that open other blocks; each check here compares it with markdown-it
(``parsed_headings``) or with the line-by-line rule the pattern stands for.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.store._markdown import (
    _BLOCK_STARTS,
    _OPENS_FIRST,
    _plain_rows,
    _simple_bullet,
    heading_rows,
    headings,
    parsed_headings,
    xrefs,
)

# Headings whose text markdown-it's rule trims in each of its ways: closing marks with
# and without a blank before them, trailing blanks, a lone mark, other whitespace.
TRICKY = ["# a ##", "# a#", "# #", "### ###", "#\t#\t", "# a #\t", "# a\t", "#", "# ", "##",
          "#\ta", "# a  #  ", "###### six ######", "####### seven", "#x", "# é ü", "# ΑΣ #",
          "# a\u00a0", "# a\u00a0#", "# \u3000", "# a\x0b", "# a\x0c#", "# a\x85", "# a\u2028",
          "#\u00a0a", "# a \\#", "# a#b #", "# ## #", "#  \t  #", "# 😀 ##"]


def _rows_by_markdown_it(body: str, first: int) -> list[tuple[int, str, int, int]]:
    """Each heading markdown-it finds, with where its line starts.

    markdown-it also breaks lines at a lone CR; a heading past the last line that
    ``str.split`` sees is placed at the body's end.
    """
    starts = [0] + [i + 1 for i, c in enumerate(body) if c == "\n"]
    return [(h.level, h.text, h.line,
             starts[h.line - first] if h.line - first < len(starts) else len(body))
            for h in parsed_headings(body, first)]


@pytest.mark.parametrize("line", TRICKY)
def test_a_tricky_heading_line_reads_as_markdown_it_reads_it(line: str) -> None:
    for body in (line, line + "\n", "text\n" + line + "\nmore\n", line + "\n" + line):
        assert _plain_rows(body, 4) is not None, body  # the scan answers, not markdown-it
        assert heading_rows(body, 4) == _rows_by_markdown_it(body, 4), body
        assert headings(body, 4) == parsed_headings(body, 4), body


LINES = TRICKY + ["text", "", " ", "\t", "- item", "* x", "+ y", "- # h", "-", "- ", "-  x",
                  "```", "~~~", "> q", "===", "---", "1. x", "<div>", "    code", "[r]: /u",
                  "_ _", "\u00a0x", "\x0bx", "a # b", "\\# x", "\r", "\x00"]


@settings(max_examples=800, deadline=None)
@given(lines=st.lists(st.sampled_from(LINES) | st.text(" #\t-*ab\u00a0\x0b", max_size=5),
                      max_size=10),
       newline=st.booleans(), first=st.integers(1, 5))
def test_the_rows_are_markdown_its_headings_at_their_lines_offsets(
        lines: list[str], newline: bool, first: int) -> None:
    body = "\n".join(lines) + ("\n" if newline else "")
    assert heading_rows(body, first) == _rows_by_markdown_it(body, first)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from(["# a", "text", "a\rb", "## b\r", "\r# c", "x\r\r"]),
                      min_size=1, max_size=6))
def test_bodies_with_lone_carriage_returns_go_to_markdown_it(lines: list[str]) -> None:
    body = "\n".join(lines)
    assert heading_rows(body, 1) == _rows_by_markdown_it(body, 1)


@settings(max_examples=1500, deadline=None)
@given(line=st.text(" \t`~>*-_+=[<0123456789#ab\u00a0", max_size=5))
def test_the_block_pattern_is_the_line_rule(line: str) -> None:
    # the rule the scan used line by line before the pattern stood for it
    opens = bool(line) and line[0] in _BLOCK_STARTS and bool(line.strip(" \t")) \
        and not _simple_bullet(line)
    assert (_OPENS_FIRST.match(line + "\n") is not None) == opens
    assert (_OPENS_FIRST.match(line) is not None) == opens
    assert (_plain_rows("text\n" + line + "\n", 1) is None) == opens


def test_xrefs_count_lines_from_the_first_line_given() -> None:
    text = "a\nsee /memories/b.md\n"
    assert [x.line for x in xrefs(text, 7)] == [8]
    assert [x.line for x in xrefs(text)] == [2]
