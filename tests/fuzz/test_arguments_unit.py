"""The argument checks themselves: what passes through unchanged."""

from __future__ import annotations

from memdir.tools._arguments import argument_problem, decode_arguments


def test_plain_arguments_pass_unchanged() -> None:
    arguments = {"path": "/memories/é/😀.md", "view_range": [1, -1], "flag": True, "x": 2.5,
                 "n": -(2 ** 63) + 1, "none": None}
    assert argument_problem(arguments) is None
    assert decode_arguments(arguments) == arguments
    assert decode_arguments('{"p": "\\ud83d\\ude00"}') == {"p": "😀"}
    assert decode_arguments("  ") == {}
    assert decode_arguments(None) == {}
