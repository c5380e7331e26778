"""Headings, sections and cross-references inside a file."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.store import find_section, headings, sections, xrefs
from memdir.store._markdown import _plain_headings, parsed_headings

BODY = """# Alice

Intro.

```python
# not a heading
## nor this
```

## Work
### 2023
Joined X.
### 2024
Left X.

## Home
#### Deep
Lives in Y.
"""


def test_headings_skip_fenced_code() -> None:
    found = [(h.level, h.text, h.line) for h in headings(BODY)]
    assert found == [
        (1, "Alice", 1),
        (2, "Work", 10),
        (3, "2023", 11),
        (3, "2024", 13),
        (2, "Home", 16),
        (4, "Deep", 17),
    ]


def test_headings_offset_by_first_line() -> None:
    assert headings("# A\n", first_line=5)[0].line == 5


def test_sections_have_paths_and_ranges() -> None:
    spans = {s.path: (s.start, s.end) for s in sections(BODY)}
    assert spans[("Alice",)] == (1, 18)
    assert spans[("Alice", "Work")] == (10, 15)
    assert spans[("Alice", "Work", "2023")] == (11, 12)
    assert spans[("Alice", "Home", "Deep")] == (17, 18)


def test_find_section_by_path_case_and_marks() -> None:
    assert find_section(BODY, ["work", "2024"]).start == 13
    assert find_section(BODY, ["## Home"]).start == 16
    assert find_section(BODY, ["Alice", "Deep"]).start == 17


def test_find_section_ambiguity_lists_candidates() -> None:
    body = "# A\n## Notes\nx\n# B\n## Notes\ny\n"
    with pytest.raises(LookupError, match="matches 2 sections") as info:
        find_section(body, ["Notes"])
    assert "A > Notes (line 2)" in str(info.value) and "B > Notes (line 5)" in str(info.value)
    assert find_section(body, ["B", "Notes"]).start == 5


def test_find_section_without_match_shows_outline() -> None:
    with pytest.raises(LookupError, match="No section matches") as info:
        find_section(BODY, ["Garden"])
    assert "## Work (line 10)" in str(info.value)
    with pytest.raises(LookupError, match="no headings"):
        find_section("plain text\n", ["x"])
    with pytest.raises(LookupError, match="at least one heading"):
        find_section(BODY, ["  "])


def test_xrefs_with_and_without_sections() -> None:
    text = (
        "See /memories/people/alice.md for more.\n"
        "Also (/memories/work/x.md > ## Projects > ### 2023).\n"
        "Not a ref: /memories/notes.txt or /elsewhere/a.md\n"
        "Her past jobs: see /memories/people/maya.md > ## Work history > ### Before Bristol.\n"
        "- moved (see /memories/people/maya.md > ## Home), then [/memories/a.md > # A b]\n"
    )
    found = [(x.target, x.section, x.line) for x in xrefs(text)]
    assert found == [
        ("/memories/people/alice.md", (), 1),
        ("/memories/work/x.md", ("Projects", "2023"), 2),
        ("/memories/people/maya.md", ("Work history", "Before Bristol"), 4),
        ("/memories/people/maya.md", ("Home",), 5),
        ("/memories/a.md", ("A b",), 5),
    ]


# Line shapes around the ATX heading rule, and lines that open other blocks (which
# send a body to markdown-it); any text may follow.
LINE_SHAPES = ["# a", "## b #", "#x", "####### g", "#", "# ", "#\tq", "# a ##", "# a#", "# #",
               "#  a  ", "### ###", "#\t#\t", "\\# x", "## x\\#", "###### six", "text", "",
               "   ", "\t", "a # b", "- item", "```", "~~~", "> q", "===", "---", "1. x", "<div>",
               "    code", "* x", "[r]: /u", "_ _ _", "+ y", "\r", "a\rb", "\x00", "- # h",
               "* ## h", "- - x", "-  x", "- 1. x", "* * *", "- ```", "- > q", "-", "- ", "-\tx",
               "+ <b>", "- [r]: /u", "  - x", "- x\\"]


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(st.sampled_from(LINE_SHAPES) | st.text(max_size=6), max_size=10),
       newline=st.booleans())
def test_the_line_scan_finds_the_headings_markdown_it_finds(lines: list[str],
                                                            newline: bool) -> None:
    body = "\n".join(lines) + ("\n" if newline else "")
    assert headings(body, 3) == parsed_headings(body, 3)


# Bodies the line scan answers for itself: headings, paragraph lines and simple bullets,
# each followed by any text, and the bullet shapes that must still go to markdown-it.
SCANNED_LINES = ["# a", "## b #", "#x", "#", "text", "", "- item", "* item", "+ item", "- a # b",
                 "- x:", "- \u00a0x", "* x *"]
REFUSED_LINES = ["- #", "- # h", "* ## h", "- - x", "* * *", "-  x", "- 1. x", "  - x", "---",
                 "===", "-- x", "*x*", "+x", "* -", "- *em*", "- `c`"]
BULLET_BODY_LINES = SCANNED_LINES * 6 + REFUSED_LINES


@settings(max_examples=600, deadline=None)
@given(lines=st.lists(st.tuples(st.sampled_from(BULLET_BODY_LINES),
                                st.text(" ab#-*=\t\n", max_size=5) | st.text(max_size=5)),
                      max_size=12),
       newline=st.booleans())
def test_the_line_scan_reads_bullet_lists_as_markdown_it_does(
        lines: list[tuple[str, str]], newline: bool) -> None:
    body = "\n".join(shape + tail for shape, tail in lines) + ("\n" if newline else "")
    assert headings(body, 2) == parsed_headings(body, 2)


def test_the_line_scan_answers_for_bodies_with_simple_bullets() -> None:
    body = "# Title\n\nText.\n\n- one\n- two # not a heading\nlazy line\n* three\n+ four\n## End\n"
    assert _plain_headings(body, 1) == parsed_headings(body, 1)
    assert [h.text for h in parsed_headings(body, 1)] == ["Title", "End"]
    for other in ("- # inside an item\n", "-  two spaces\n", "* * *\n", "- 1. x\n", "  - x\n"):
        assert _plain_headings(other, 1) is None, other


def _sections_by_definition(body: str) -> list[tuple[tuple[str, ...], int, int]]:
    """Each section's path and lines straight from the definition (quadratic)."""
    heads = headings(body)
    last = body.count("\n") + (0 if body.endswith("\n") else 1)
    found = []
    for i, head in enumerate(heads):
        later = [h for h in heads[i + 1 :] if h.level <= head.level]
        end = later[0].line - 1 if later else last
        # An enclosing heading: lower level, and no heading of its level or lower in between.
        outer = [h.text for j, h in enumerate(heads[:i]) if h.level < head.level
                 and all(k.level > h.level for k in heads[j + 1 : i])]
        found.append(((*outer, head.text), head.line, max(end, head.line)))
    return found


@settings(max_examples=300, deadline=None)
@given(levels=st.lists(st.integers(1, 6), max_size=30), gaps=st.lists(st.integers(0, 2)))
def test_sections_in_one_pass_equal_the_definition(levels: list[int], gaps: list[int]) -> None:
    lines = []
    for n, level in enumerate(levels):
        lines.append(f"{'#' * level} h{n}")
        lines += ["text"] * (gaps[n] if n < len(gaps) else 0)
    body = "\n".join(lines) + "\n"
    assert [(s.path, s.start, s.end) for s in sections(body)] == _sections_by_definition(body)
