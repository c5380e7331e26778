"""``summarize`` equals its definition: a parsed document, markdown-it's headings, lines.

The reference below is the summary as it was first written (the whole document
parsed and validated, the headings from markdown-it, each unit joined from the
file's lines); ``summarize`` reads the description, headings and units by faster
roads, and must give the very same summary.
"""

from __future__ import annotations

from adversarial_text import FILES
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.metrics._files import FileSummary, HeadingInfo, UnitText, _parts, summarize
from memdir.store import parse_document
from memdir.store._markdown import parsed_headings


def _summary_by_definition(text: str) -> FileSummary:
    doc = parse_document("/memories/file.md", text)
    lines = text.split("\n")
    body = doc.body
    found = parsed_headings(body, doc.body_line)
    last_line = doc.body_line + body.count("\n") - body.endswith("\n")
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
        units.append(UnitText(-1, doc.body_line, body.strip()))
    for index, head in enumerate(found):
        if index in has_child:
            continue
        end = found[index + 1].line - 1 if index + 1 < len(found) else last_line
        own = "\n".join(lines[head.line : max(end, head.line)]).strip()
        units.append(UnitText(index, head.line, own))
    return FileSummary(len(text.encode("utf-8")), doc.description, _parts(body, units),
                       doc.body_line, tuple(heads), tuple(units), tuple(doc.xrefs))


@settings(max_examples=600, deadline=None)
@given(text=FILES)
def test_a_summary_is_its_definition(text: str) -> None:
    assert summarize(text) == _summary_by_definition(text)


HEADERS = st.sampled_from([
    "", "---\nname: f\ndescription: plain words\n---\n", "---\r\nname: f\r\n---\r\n",
    "---\nname: f\ndescription: 'quoted: yes'\n---\n", "---\ndescription: yes\n---\n",
    "---\nname: f\ndescription: x\nmetadata: text\n---\n", "---\nname: [\n---\n",
    "---\nname: f\ndescription: x\nmetadata:\n  type: note\n---\n", "---\n---\n", "---\nname: f",
])
LINES = st.sampled_from([
    "# Top", "## Sub ##", "### deep\t", "#", "# ", "text", "", "- item", "- # not", "* x",
    "    code", "```", "~~~", "> quote", "Setext", "===", "---", "1. one", "<div>",
    "see /memories/a/b.md > ## Sub", "/memories/c.md.", "# é ΑΣ", "a\rb", "\x00", "\u00a0",
])


@settings(max_examples=600, deadline=None)
@given(header=HEADERS, lines=st.lists(LINES, max_size=12), newline=st.booleans())
def test_a_summary_of_a_file_with_any_header_and_blocks_is_its_definition(
        header: str, lines: list[str], newline: bool) -> None:
    text = header + "\n".join(lines) + ("\n" if newline else "")
    assert summarize(text) == _summary_by_definition(text)


def test_a_files_size_counts_utf8_bytes() -> None:
    for text in ("plain", "café", "ΑΣ 😀", ""):
        assert summarize(text).bytes == len(text.encode("utf-8"))
