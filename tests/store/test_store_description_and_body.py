"""``description_and_body`` reads a file's description and body as ``parse_file`` does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.store._frontmatter import _flat_header, description_and_body, parse_file

KEYS = ["name", "description", "metadata", "extra", "model_config", "yes", "1", "a b"]
VALUES = ["plain text", "a friend, from work", "yes", "null", "~", "1", "2024-01-01", "a: b",
          "a #b", "'q'", "[a] b", "{a: 1}", "- a", "&a x", "caf\u00e9", "Teardrin of - fux."]
HEADER_LINES = st.one_of(
    st.tuples(st.sampled_from(KEYS), st.sampled_from([": ", ":  ", ":"]),
              st.sampled_from(VALUES) | st.text(max_size=5)).map("".join),
    st.sampled_from(["", " ", "# comment", "  nested: x", "  type: skill", "- item", "a:"]),
)
OPENINGS = st.sampled_from(["---\n", "---\r\n", "\ufeff---\n", "", "--\n", "text\n"])
CLOSINGS = st.sampled_from(["---\n", "---\r\n", "---", "--- \n", ""])
BODIES = st.sampled_from(["", "# Title\nText.\n", "\n\nbody", "---\nmore\n"])


@settings(max_examples=1000, deadline=None)
@given(opening=OPENINGS, lines=st.lists(HEADER_LINES, max_size=5), closing=CLOSINGS,
       body=BODIES)
def test_the_description_and_body_are_parse_files(
        opening: str, lines: list[str], closing: str, body: str) -> None:
    text = opening + "".join(line + "\n" for line in lines) + closing + body
    parsed = parse_file(text)
    expected = parsed.frontmatter.description if parsed.frontmatter else ""
    assert description_and_body(text) == (expected, parsed.body, parsed.body_line)


def test_a_flat_header_with_metadata_has_no_usable_frontmatter() -> None:
    text = "---\nname: a\ndescription: the cat\nmetadata: x\n---\nbody\n"
    assert _flat_header("name: a\ndescription: the cat\nmetadata: x") is not None
    assert parse_file(text).frontmatter is None
    assert description_and_body(text) == ("", "body\n", 6)
    usual = "---\nname: a\ndescription: the cat\nmodel_config: x\n---\nbody\n"
    assert description_and_body(usual) == ("the cat", "body\n", 6)
