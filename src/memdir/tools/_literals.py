"""Literal text every match of a regular expression must contain.

``required_literals("birthday|anniversary")`` is ``["birthday", "anniversary"]``:
any line the pattern matches contains one of them. grep uses this to jump from
one occurrence of a literal to the next with ``str.find`` and run the regex
only on those lines, which is much faster than letting the regex engine try
every position. When nothing useful can be proved the answer is None, and grep
falls back to plain regex scanning; a wrong answer here would lose matches, so
every rule below errs toward None.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

_parser: Any = importlib.import_module("re._parser")  # the stdlib's own regex parser

__all__ = ["fold", "required_literals"]

_MAX_ALTERNATIVES = 8
_MIN_LENGTH = 2


def fold(text: str) -> str:
    """Fold case for finding ASCII literals the way ``re.IGNORECASE`` matches them.

    Besides the ASCII case pairs, ``re.IGNORECASE`` lets ``i`` match U+0130 and
    U+0131, ``k`` match U+212A and ``s`` match U+017F. ``casefold`` maps the
    last two to ``k`` and ``s`` and U+0130 to ``i`` plus U+0307; the rest is
    patched here so that every such match folds to the literal's lowercase form.
    """
    if text.isascii():
        return text.lower()  # same offsets as the text, and cheaper than casefold
    folded = text.casefold()
    if not folded.isascii():
        folded = folded.replace("\u0131", "i").replace("\u0307", "")
    return folded


def required_literals(pattern: str, ignore_case: bool) -> tuple[list[str], bool] | None:
    """Strings one of which occurs in every line ``pattern`` matches, or None.

    Returns:
        The strings, and whether they are to be found in :func:`fold` of the text
        rather than in the text itself (the pattern ignores case; the strings are
        then lowercase ASCII).
    """
    try:
        parsed: Any = _parser.parse(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error:
        return None
    ignore = bool(parsed.state.flags & re.IGNORECASE)
    found = _sequence(list(parsed), ignore)
    if found is None or min(len(s) for s in found) < _MIN_LENGTH:
        return None
    if ignore:
        if not all(s.isascii() for s in found):
            return None
        found = {s.lower() for s in found}
    return sorted(found), ignore


def _score(option: set[str]) -> tuple[int, int]:
    return min(len(s) for s in option), -len(option)


def _sequence(items: list[Any], ignore: bool) -> set[str] | None:
    """The best required set of a sequence of parsed items."""
    options: list[set[str]] = []
    run: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(av))
            continue
        if run:
            options.append({"".join(run)})
            run = []
        inner = _item(name, av, ignore)
        if inner is not None:
            options.append(inner)
    if run:
        options.append({"".join(run)})
    if not options:
        return None
    return max(options, key=_score)


def _item(name: str, av: Any, ignore: bool) -> set[str] | None:
    if name == "SUBPATTERN":
        _group, add_flags, _del_flags, body = av
        if add_flags & re.IGNORECASE and not ignore:
            return None
        return _sequence(list(body), ignore or bool(add_flags & re.IGNORECASE))
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _high, body = av
        return _sequence(list(body), ignore) if low >= 1 else None
    if name == "ATOMIC_GROUP":
        return _sequence(list(av), ignore)
    if name == "BRANCH":
        union: set[str] = set()
        for alternative in av[1]:
            found = _sequence(list(alternative), ignore)
            if found is None:
                return None
            union |= found
        return union if len(union) <= _MAX_ALTERNATIVES else None
    return None
