"""The frontmatter's flat-header reading agrees with the YAML parser wherever it answers."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.store._frontmatter import _flat_header, _yaml_header, load_header

KEYS = ["name", "description", "metadata", "a-b", "x_1", "Key", "yes", "null", "on", "True",
        "NO", "y", "~", "1", "-a", "a b", "a:b", "k" * 130]
VALUES = ["plain text", "Alice, a friend from work", "yes", "no", "Off", "null", "~", "1", "-1",
          "1_000", "0x1f", "0o7", "1:20", ".5", "1e3", ".inf", ".NaN", "2024-01-01",
          "2024-01-01 10:00:00", "a: b", "a :b", "a #b", "a#b", "'q'", '"q"', "x:", "x::y", "=",
          "<<", "a\tb", "a\u2028b", "a\x85b", "a\ufeffb", "\ufeffa", "caf\u00e9", "[a] b",
          "a [b]", "{a", "a}", "- a", "-a", "?a", ":a", "!x", "&a", "*a", "|", ">", "%a", "@a",
          "`a", "a, b", "a\rb", "a\x00b", "a\x7fb", "\U0001f600", "a\ud7ffb", "a\ue000b"]
SHAPES = st.one_of(
    st.tuples(st.sampled_from(KEYS), st.sampled_from([": ", ":  ", ":", ": \t", " : "]),
              st.sampled_from(VALUES) | st.text(max_size=6), st.sampled_from(["", " ", "  "]))
    .map(lambda t: "".join(t)),
    st.sampled_from(["", " ", "# comment", "  nested: x", "- item", "...", "---", "a:"]),
)


@settings(max_examples=1500, deadline=None)
@given(lines=st.lists(SHAPES, min_size=1, max_size=6))
def test_the_flat_reading_equals_the_yaml_parsers(lines: list[str]) -> None:
    header = "\n".join(lines)
    flat = _flat_header(header)
    if flat is not None:
        assert flat == _yaml_header(header)
        assert all(isinstance(v, str) for v in flat.values())


def test_a_usual_header_is_read_flat_and_others_by_the_parser() -> None:
    usual = "name: work-8443\ndescription: Teardrin meeting of - fux, bai, rou."
    assert _flat_header(usual) == {"name": "work-8443",
                                   "description": "Teardrin meeting of - fux, bai, rou."}
    assert load_header(usual) == _yaml_header(usual)
    for other in ("name: a\nmetadata:\n  type: skill", "description: yes", "name: 2024-01-01",
                  "description: 'quoted'", "name: a # comment"):
        assert _flat_header(other) is None, other
        assert load_header(other) == _yaml_header(other)


def test_a_value_yaml_refuses_is_left_to_the_parser() -> None:
    assert _flat_header("description: a: b") is None
    with pytest.raises(yaml.YAMLError):
        load_header("description: a: b")
