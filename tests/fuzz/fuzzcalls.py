"""Malformed and adversarial tool calls: hypothesis strategies, and how to make them.

A generated call is a :class:`Call`: a tool name, arguments and the form they
travel in (a Python mapping, as the agent loop and MCP hand them over, or JSON
text, as a model's function call carries them). Values that are costly to
build or print (JSON 100,000 levels deep, an integer of 5,000 digits, a string
of megabytes) are :class:`Special` placeholders with a short ``repr``, made
into real values only when the call is sent, so hypothesis can report and
shrink a failing call without building it.

Strategies are derived from each tool's own JSON schema (``ToolSet.tools``),
so every tool of every set is reached, and from the SDK's
``BetaMemoryTool20250818*`` command models for the Anthropic adapter.

This module uses only memdir's public API, so ``benchmarks/fuzz.py`` can run
the same calls against an older ``src/`` as its baseline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import strategies as st

__all__ = [
    "Call",
    "Special",
    "adapter_inputs",
    "calls_for",
    "malformed_values",
    "materialize",
    "to_json",
]

Form = Literal["mapping", "json", "json-unicode", "text"]
"""How a call's arguments travel: a mapping, JSON text (ASCII escapes or raw
Unicode), or ``text``: arbitrary, usually broken, argument text."""


@dataclass(frozen=True)
class Special:
    """A value too big to build eagerly: made by :meth:`python` or :meth:`json` when sent."""

    kind: str
    size: int

    def __repr__(self) -> str:
        return f"Special({self.kind!r}, {self.size})"

    def python(self) -> Any:
        """The value as a Python object (built once per kind and size, then shared)."""
        made = _BUILT.get(self)
        if made is None:
            made = _BUILT[self] = self._build()
        return made

    def _build(self) -> Any:
        kind, n = self.kind, self.size
        if kind in ("deep-list", "deep-dict"):
            value: Any = "bottom"
            for _ in range(n):  # built from the inside out: no recursion
                value = [value] if kind == "deep-list" else {"a": value}
            return value
        if kind == "huge-int":
            return 10 ** n - 1  # n nines, made without str -> int (which refuses > 4,300 digits)
        if kind == "wide-int":
            return -(2 ** n)
        if kind in ("nan", "inf", "-inf"):
            return float(kind)
        if kind == "huge-str":
            return "memory " * (n // 7)
        if kind == "huge-lines":
            return "line\n" * (n // 5)
        if kind == "long-list":
            return list(range(n))
        raise ValueError(f"unknown special {kind}")

    def json(self) -> str:
        """The value as JSON text (NaN and Infinity in Python's own extension)."""
        kind, n = self.kind, self.size
        if kind == "deep-list":
            return "[" * n + '"bottom"' + "]" * n
        if kind == "deep-dict":
            return '{"a":' * n + '"bottom"' + "}" * n
        if kind == "huge-int":
            return "9" * n
        if kind == "nan":
            return "NaN"
        if kind == "inf":
            return "Infinity"
        if kind == "-inf":
            return "-Infinity"
        if kind == "long-list":
            return "[" + ",".join(map(str, range(n))) + "]"
        return json.dumps(self.python())


_BUILT: dict[Special, Any] = {}


@dataclass(frozen=True)
class Call:
    """One generated tool call."""

    tool: str
    arguments: Any
    form: Form

    def payload(self) -> Any:
        """The arguments as they are handed to ``ToolSet.call``."""
        if self.form == "text":
            text: str = self.arguments
            return text
        if self.form == "mapping":
            return materialize(self.arguments)
        return to_json(self.arguments, ascii_only=self.form == "json")


def materialize(value: Any) -> Any:
    """``value`` with every :class:`Special` in it built."""
    if isinstance(value, Special):
        return value.python()
    if isinstance(value, dict):
        return {materialize(k): materialize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [materialize(v) for v in value]
    return value


def to_json(value: Any, *, ascii_only: bool = True) -> str:
    """``value`` as JSON text; a :class:`Special` is written as its own JSON.

    Lone surrogates become ``\\udXXX`` escapes (``ascii_only``) or stay raw
    characters in the text; non-finite floats are written as Python writes them.
    """
    if isinstance(value, Special):
        return value.json()
    if isinstance(value, dict):
        items = (f"{to_json(k if isinstance(k, str | Special) else str(k), ascii_only=ascii_only)}"
                 f":{to_json(v, ascii_only=ascii_only)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(v, ascii_only=ascii_only) for v in value) + "]"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
        return Special("huge-int", 4500).json()  # str() of it would refuse
    return json.dumps(value, ensure_ascii=ascii_only)


# --- values ------------------------------------------------------------------------------

SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
ANY_CHAR = st.characters(codec=None, exclude_categories=())
NASTY_CHARS = st.sampled_from(["\x00", "\n", "\r", "\t", "\x1b", "\u2028", "\ufeff", "/",
                               "..", "\\", "*", "(", "[", "\u0130", "\U0001f600", " "])

adversarial_text = st.lists(st.one_of(ANY_CHAR, SURROGATES, NASTY_CHARS), max_size=40).map("".join)
"""Short text with any code point in it: lone surrogates, NUL and control characters."""

specials = st.one_of(
    st.builds(Special, st.sampled_from(["deep-list", "deep-dict"]),
              st.sampled_from([40, 200, 1_000, 100_000])),
    st.builds(Special, st.just("huge-int"), st.integers(4_301, 6_000)),
    st.builds(Special, st.just("wide-int"), st.sampled_from([63, 64, 65, 200, 14_000])),
    st.builds(Special, st.sampled_from(["nan", "inf", "-inf"]), st.just(0)),
    st.builds(Special, st.sampled_from(["huge-str", "huge-lines"]),
              st.sampled_from([5_000, 100_000, 1_000_000, 4_000_000])),
    st.builds(Special, st.just("long-list"), st.sampled_from([3, 1_000, 100_000])),
)
"""The values of the issue's report: deep JSON, huge integers, NaN, huge strings, long lists."""

scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(), st.integers(-(2 ** 70), 2 ** 70),
    st.floats(allow_nan=True, allow_infinity=True),
    adversarial_text, st.text(max_size=20),
)
wrong_shapes = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=8)


def malformed_values() -> st.SearchStrategy[Any]:
    """Any value a careless or hostile caller might put in a parameter."""
    return st.one_of(specials, wrong_shapes, adversarial_text)


def _paths(known: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(known),
        st.sampled_from(["/memories", "/memories/", "/memories/../etc/passwd", "/etc/passwd",
                         "memories", "", "/memories/a\x00b.md", "/memories/new/file.md",
                         "/memories/people/../../x.md", "~/x.md", "/memories/" + "d/" * 300,
                         "/memories/\ud800.md", "/memories/" + "n" * 300 + ".md"]),
        adversarial_text.map(lambda s: "/memories/" + s),
    )


def _plausible(name: str, schema: dict[str, Any], known: list[str]) -> st.SearchStrategy[Any]:
    """A value of the parameter's declared type (any of them, for a union)."""
    options = schema.get("anyOf", [schema])
    parts = []
    for option in options:
        kind = option.get("type")
        if kind == "string":
            if "path" in name:
                parts.append(_paths(known))
            else:
                parts.append(st.one_of(st.sampled_from(["Maya", "a|b", "(", ".*", "birthday",
                                                        "ls -la /memories", "cat x"]),
                                       adversarial_text))
        elif kind == "integer":
            parts.append(st.one_of(st.integers(-3, 60), st.integers()))
        elif kind == "boolean":
            parts.append(st.booleans())
        elif kind == "array":
            item = option.get("items", {}).get("type")
            element = st.integers(-5, 60) if item == "integer" else adversarial_text
            parts.append(st.lists(element, max_size=4))
        elif kind == "null":
            parts.append(st.none())
    return st.one_of(parts) if parts else malformed_values()


@st.composite
def _arguments(draw: st.DrawFn, parameters: dict[str, Any], known: list[str]) -> dict[Any, Any]:
    properties: dict[str, Any] = parameters.get("properties", {})
    args: dict[Any, Any] = {}
    for name, schema in properties.items():
        roll = draw(st.integers(0, 9))
        if roll == 0:
            continue  # left out (required or not)
        if roll <= 3:
            args[name] = draw(malformed_values())
        else:
            args[name] = draw(_plausible(name, schema, known))
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.one_of(st.text(max_size=10), adversarial_text,
                             st.builds(Special, st.just("huge-str"), st.just(100_000))))
        if not isinstance(key, Special):
            args[key] = draw(malformed_values())
        elif draw(st.booleans()):
            args[key] = 1
    return args


BROKEN_TEXT = st.one_of(
    st.sampled_from(["", " ", "{", "}", "[]", "[1, 2]", '"path"', "null", "true", "42",
                     '{"path": "/memories"} trailing', '{"path": "/memories",}',
                     "{'path': '/memories'}", '{"path": "\\ud800"}', '{"path": "\\udc00x"}',
                     '{"path": NaN}', '{"path": "/memories", "path": 1}', "\x00",
                     '{"view_range": [1, ' + "9" * 5_000 + "]}"]),
    adversarial_text,
    st.builds(lambda special: f'{{"path": {special.json()}}}',
              st.builds(Special, st.sampled_from(["deep-list", "deep-dict"]),
                        st.sampled_from([1_000, 100_000]))),
    st.sampled_from([3_000, 100_000]).map(lambda n: "[" * n + "]" * n),
)
"""Argument text that is not a JSON object (or only almost)."""


def calls_for(toolset: Any, known_paths: list[str]) -> st.SearchStrategy[Call]:
    """Malformed and adversarial calls of every tool in ``toolset`` (a ``ToolSet``).

    Args:
        toolset: The set whose tools' schemas shape the calls.
        known_paths: Paths that exist in the store, so some calls reach the tools' work.
    """
    names = list(toolset.tools)
    tool_names = st.one_of(st.sampled_from(names), st.just(names[0]),
                           st.sampled_from(["", "View", "bash ", "memory", "\ud800", "x" * 5_000]))

    @st.composite
    def call(draw: st.DrawFn) -> Call:
        tool = draw(tool_names)
        if draw(st.integers(0, 9)) == 0:
            return Call(tool, draw(BROKEN_TEXT), "text")
        spec = toolset.tools.get(tool)
        parameters = spec.parameters if spec is not None else {}
        args = draw(_arguments(parameters, known_paths))
        form: Form = draw(st.sampled_from(["mapping", "mapping", "json", "json-unicode"]))
        return Call(tool, args, form)

    return call()


def adapter_inputs(known_paths: list[str]) -> st.SearchStrategy[Any]:
    """Memory tool ``input`` objects shaped by the SDK's ``BetaMemoryTool20250818*`` models.

    Each command's fields and their declared types come from the SDK class; values
    are then plausible, malformed or adversarial as in :func:`calls_for`.
    """
    from typing import get_args

    from anthropic.types.beta import BetaMemoryTool20250818Command

    union = get_args(get_args(BetaMemoryTool20250818Command)[0])
    schemas = {}
    for model in union:
        schema = model.model_json_schema()
        command = schema["properties"]["command"]["const"] if "const" in schema["properties"][
            "command"] else schema["properties"]["command"]["enum"][0]
        props = {k: v for k, v in schema["properties"].items() if k != "command"}
        schemas[command] = {"properties": props, "required": schema.get("required", [])}

    @st.composite
    def one(draw: st.DrawFn) -> Any:
        roll = draw(st.integers(0, 19))
        if roll == 0:
            return draw(malformed_values())  # not an object at all
        command = draw(st.one_of(st.sampled_from(sorted(schemas)),
                                 st.sampled_from(["View", "", "undo"]), malformed_values()))
        parameters = schemas.get(command, {}) if isinstance(command, str) else {}
        args = draw(_arguments(parameters, known_paths))
        if draw(st.integers(0, 9)):
            args["command"] = command
        return args

    return one()


def utf8_clean(text: str) -> bool:
    """Whether ``text`` can be sent as UTF-8 (no lone surrogate in it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
