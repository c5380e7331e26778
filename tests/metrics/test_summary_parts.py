"""A summary holds its body as pieces: the units' own strings and the text between them.

The pieces must join into the body, and their tokens, one piece after another, must be
the body's: checked on adversarial text (words that touch a cut, capital sigmas, whose
lowercase depends on the next character, characters that lowercase to two, and every
kind of whitespace Python strips).
"""

from __future__ import annotations

import numpy as np
from adversarial_text import FILES
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.metrics._files import summarize
from memdir.metrics._text import analyzer
from memdir.store import parse_document, sections


def _cut_at_whitespace(text: str, cut: int) -> bool:
    return cut in (0, len(text)) or text[cut - 1].isspace() or text[cut].isspace()


@settings(max_examples=400, deadline=None)
@given(text=FILES)
def test_the_pieces_join_into_the_body_and_hold_the_units_texts(text: str) -> None:
    summary = summarize(text)
    body = parse_document("/memories/file.md", text).body
    assert summary.body == body
    if summary.aligned:
        assert all(piece is unit.text
                   for piece, unit in zip(summary.parts[1::2], summary.units, strict=True))
    else:
        assert summary.parts == (body,)
    cuts = np.cumsum([len(p) for p in summary.parts])[:-1].tolist()
    assert all(_cut_at_whitespace(body, cut) for cut in cuts)


@settings(max_examples=400, deadline=None)
@given(text=FILES, stop=st.sampled_from([None, "english"]))
def test_a_bodys_tokens_are_its_pieces_tokens_in_order(text: str, stop: str | None) -> None:
    """No word runs across a cut, and each piece lowercases as it does inside the body."""
    summary = summarize(text)
    tokens = analyzer(stop)
    assert [t for part in summary.parts for t in tokens(part)] == tokens(summary.body)


def test_most_bodies_are_cut_around_their_units() -> None:
    text = "---\nname: f\ndescription: d\n---\n# Top\nintro words\n## A\n\n alpha beta \n\n## B\nb"
    summary = summarize(text)
    assert summary.aligned
    assert summary.parts == ("# Top\nintro words\n## A\n\n ", "alpha beta", " \n\n## B\n", "b", "")


def test_a_unit_is_not_cut_out_of_a_longer_word() -> None:
    """A unit whose text first occurs inside a word (here a heading's) is found where it is."""
    summary = summarize("# cats\ncat\n")
    assert summary.parts == ("# cats\n", "cat", "\n")


@settings(max_examples=300, deadline=None)
@given(text=FILES)
def test_each_units_lines_are_its_leaf_sections(text: str) -> None:
    """A leaf section's lines, as :func:`memdir.store.sections` bounds them, are its unit."""
    doc = parse_document("/memories/file.md", text)
    found = sections(doc.body, doc.body_line)
    lines = text.split("\n")
    leaves = [s for k, s in enumerate(found)  # no deeper heading follows: no subsection
              if k + 1 == len(found) or found[k + 1].heading.level <= s.heading.level]
    expected = [(s.heading.line, "\n".join(lines[s.heading.line : s.end]).strip())
                for s in leaves] if found else [(doc.body_line, doc.body.strip())]
    assert [(u.line, u.text) for u in summarize(text).units] == expected
