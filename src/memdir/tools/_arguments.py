"""A model's tool-call arguments, read and checked where they come in.

Every parameter of every memdir tool is a string, a number, a boolean or a
flat list of those. Arguments that no tool could take are refused here, with a
message that says what to send, before any tool (or the argument model) sees
them: JSON nested past reading, integers too large to print, NaN and infinity,
lone surrogates (half of a UTF-16 pair, which no file or response can hold),
more values than any call has, names that are not strings. What remains is
left to the tool's argument model (types, missing and unknown parameters) and
to the tool itself (paths, patterns, sizes).

:meth:`memdir.tools.ToolSet.call` and the Anthropic memory tool adapter both
read their arguments through :func:`decode_arguments` and
:func:`argument_problem`, so a call is judged the same whichever way it came.
The cost of a check is linear in the arguments' size and stops at the first
problem.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final

from memdir.tools._limits import echo

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "MAX_VALUES",
    "argument_problem",
    "decode_arguments",
    "read_json",
]

MAX_DEPTH: Final = 8
"""Levels of nesting allowed; the deepest parameter (a list of strings) needs two."""
MAX_VALUES: Final = 10_000
"""Values (strings, numbers, list items, ...) allowed in one call's arguments."""
MAX_INT_BITS: Final = 63
"""Integers must fit in a signed 64-bit word: line numbers and counts are small."""
_MAX_JSON_DIGITS: Final = 40
"""Longer integer literals are not converted (Python refuses past 4,300 digits)."""
_SHAPE: Final = ("every parameter is a string, a number, a boolean or a flat list of those, "
                 'e.g. {"path": "/memories/notes.md", "view_range": [1, 20]}')


class _LongNumber:
    """An integer literal of JSON text too long to convert, kept to be named."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


class _NotANumber:
    """``NaN``, ``Infinity`` or ``-Infinity`` in JSON text (not JSON, though Python reads it)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _parse_int(text: str) -> int | _LongNumber:
    if len(text) > _MAX_JSON_DIGITS:
        return _LongNumber(len(text.lstrip("-")))
    return int(text)


def read_json(text: str) -> Any:
    """``text`` read as JSON, whatever its depth or its numbers, for :func:`argument_problem`.

    Integer literals too long to convert and ``NaN``/``Infinity`` are kept as
    placeholders that :func:`argument_problem` names, rather than raising.

    Raises:
        ValueError: The text is not JSON, or nests too deeply to read; the message
            completes "the arguments are ..." ("not valid JSON (...)").
    """
    try:
        return json.loads(text, parse_int=_parse_int, parse_constant=_NotANumber)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at char {exc.pos}); send a JSON "
                         "object") from None
    except RecursionError:  # json's scanner refuses nesting deeper than the stack
        raise ValueError("nested too deeply to be read (hundreds of levels of [ or {); "
                         + _SHAPE) from None


def decode_arguments(arguments: object) -> dict[str, Any] | str:
    """The arguments of one call as a mapping, or the error message that refuses them.

    Args:
        arguments: A mapping, the raw JSON text of one, or None (no arguments).

    Returns:
        The arguments (checked by :func:`argument_problem`), or a message that says
        what is wrong and what to send (one clause, no final stop).
    """
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            value = read_json(arguments)
        except ValueError as exc:
            return f"the arguments are {exc}"
    elif isinstance(arguments, Mapping):
        value = arguments
    else:
        return ("the arguments must be a JSON object of parameter names to values, "
                f"not {type(arguments).__name__}")
    if not isinstance(value, Mapping):
        return ("the arguments must be a JSON object of parameter names to values, "
                f"not {_json_type(value)}")
    problem = argument_problem(value)
    return problem if problem is not None else dict(value)


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a boolean" if isinstance(value, bool) else "a number"


def argument_problem(value: object) -> str | None:
    """What no tool could take in ``value`` (a call's arguments), or None.

    The message names the parameter (``view_range[1]``) and says what to send.
    Nesting, integers, non-finite numbers, lone surrogates, the number of values
    and the names' types are checked; everything else is the argument model's.
    """
    stack: list[tuple[object, str, int]] = [(value, "", 0)]
    count = 0
    while stack:
        item, where, depth = stack.pop()
        problem = _scalar_problem(item)
        if problem is not None:
            return f"{where or 'the arguments'} {problem}"
        if isinstance(item, Mapping | list | tuple):
            if depth >= MAX_DEPTH:
                return (f"{where or 'the arguments'} nests more than {MAX_DEPTH} levels deep; "
                        f"{_SHAPE}")
            count += len(item)
            if count > MAX_VALUES:
                return (f"the arguments hold more than {MAX_VALUES:,} values; no tool takes "
                        f"that many: {_SHAPE}")
            if isinstance(item, Mapping):
                for key, inner in item.items():
                    key_problem = _key_problem(key)
                    if key_problem is not None:
                        return key_problem
                    name = _shown(key)
                    stack.append((inner, f"{where}.{name}" if where else name, depth + 1))
            else:
                stack.extend((inner, f"{where}[{i}]", depth + 1) for i, inner in enumerate(item))
    return None


def _scalar_problem(item: object) -> str | None:
    if isinstance(item, str):
        return _text_problem(item)
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        if item.bit_length() > MAX_INT_BITS:
            digits = max(1, int(item.bit_length() * math.log10(2)))
            return (f"is an integer of about {digits:,} digits; send a whole number below "
                    "2**63 (line numbers and counts are small)")
        return None
    if isinstance(item, _LongNumber):
        return (f"is an integer of {item.digits:,} digits; send a whole number below 2**63 "
                "(line numbers and counts are small)")
    if isinstance(item, float) and not math.isfinite(item):
        return f"is {item}, which is not a number JSON can carry; send a finite number"
    if isinstance(item, _NotANumber):
        return f"is {item.name}, which is not JSON; send a finite number"
    return None


def _text_problem(text: str) -> str | None:
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"holds a lone surrogate (U+{ord(text[exc.start]):04X}) at character "
                f"{exc.start:,}: half of a UTF-16 pair, which is not a character and cannot "
                "be stored or sent. Send plain Unicode text (in JSON, a \\ud83d-style escape "
                "must be followed by its other half, e.g. \\ud83d\\ude00)")
    return None


def _shown(key: str) -> str:
    """A parameter name as a message shows it: bare when short and plain, else quoted."""
    return key if len(key) <= 60 and key.isprintable() else echo(key, 40)


def _key_problem(key: object) -> str | None:
    if not isinstance(key, str):
        return (f"parameter names must be strings, not {type(key).__name__}; {_SHAPE}")
    problem = _text_problem(key)
    if problem is not None:
        return f"the parameter name {echo(key, 40)} {problem}"
    return None
