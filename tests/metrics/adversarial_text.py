"""Hypothesis strategies for memory files made to trip tokenisers and cuts.

Words include final and capital sigmas, a dotted capital I, a ligature, a titlecase
digraph and one-character words; gaps include every kind of whitespace Python strips,
separators that are not whitespace, a combining accent and a carriage return; lines
start with heading, list, quote, fence and setext marks.
"""

from __future__ import annotations

from hypothesis import strategies as st

WORD = st.sampled_from(["cat", "the", "Mat", "ΑΣ", "σς", "İx", "ﬁne", "x1", "_", "a", "b2b",
                        "über", "ΣΑΣ", "of", "THE", "ǅz", "9"])
GAP = st.sampled_from([" ", "", "\t", "\u00a0", "\x1c", "\x85", "\u2028", "\u3000", ".", "'",
                       "\u0301", "-", ":", "\r"])
LINE = st.lists(st.one_of(WORD, GAP), max_size=8).map("".join)
MARKS = st.sampled_from(["", "# ", "## ", "### ", "#", "    ", "- ", "```", "> ", "==="])
BODY = st.lists(st.tuples(MARKS, LINE).map("".join), max_size=12).map("\n".join)
FRONT = st.sampled_from(["", "---\nname: f\ndescription: the cat Mat\n---\n",
                         "---\nname: f\ndescription: ΑΣ über\n---"])
FILES = st.tuples(FRONT, BODY).map("".join)
"""Whole files: an optional frontmatter, then a body."""
