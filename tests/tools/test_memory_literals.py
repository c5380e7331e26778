"""Required literals: what grep may look for with str.find before running the regex."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.tools._literals import fold, required_literals


@pytest.mark.parametrize(
    ("pattern", "ignore_case", "expected"),
    [
        ("coffee", False, (["coffee"], False)),
        ("Coffee", True, (["coffee"], True)),
        ("(?i)Paris", False, (["paris"], True)),
        ("birthday|anniversary", False, (["anniversary", "birthday"], False)),
        (r"\b20[0-9]{2}-", False, (["20"], False)),
        ("a(bc|de)+f", False, (["bc", "de"], False)),
        ("(foo)?barbaz", False, (["barbaz"], False)),
        ("(?i:ab)cd", False, (["cd"], False)),
        ("x?", False, None),
        ("alice|b", False, None),
        ("(ab)*", False, None),
        ("caf\u00e9", True, None),
        ("a|b|c|d|e|f|g|h|i", False, None),
    ],
)
def test_required_literals(
    pattern: str, ignore_case: bool, expected: tuple[list[str], bool] | None
) -> None:
    assert required_literals(pattern, ignore_case) == expected


def test_fold_matches_ignorecase_specials() -> None:
    # Every character re.IGNORECASE lets an ASCII letter match folds to that letter.
    every = "".join(chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000)
    for letter in "abcdefghijklmnopqrstuvwxyz":
        for char in set(re.findall(letter, every, re.IGNORECASE)):
            assert fold(char) == letter, (letter, hex(ord(char)))


_ATOMS = st.sampled_from(["ab", "c", "(ab|cd)", "x?", "(ef)+", ".", "[a-c]", "(?i:gh)", "ij|kl",
                          "(?:mn){2}", "\\d", "o*"])


@given(atoms=st.lists(_ATOMS, min_size=1, max_size=4),
       text=st.text(alphabet="abcdefghijklmnoABCGH1 ", max_size=30), ignore_case=st.booleans())
def test_every_match_contains_a_required_literal(
    atoms: list[str], text: str, ignore_case: bool
) -> None:
    pattern = "".join(atoms)
    found = required_literals(pattern, ignore_case)
    if found is None:
        return
    literals, folded = found
    for match in re.finditer(pattern, text, re.IGNORECASE if ignore_case else 0):
        hay = fold(match.group()) if folded else match.group()
        assert any(lit in hay for lit in literals), (pattern, match.group())
