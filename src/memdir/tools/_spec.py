"""Tools as typed functions, and the tool sets that dispatch model calls to them.

A tool is one async function. Its signature is its JSON schema and its
docstring (Google style) is the text the model reads: the summary and body
describe the tool, the ``Args:`` entries describe each parameter. Declaration
and implementation never live apart.

:meth:`ToolSet.call` is the single path by which a model's call is executed,
whether it comes from the agent loop, the MCP server, the Anthropic adapter or
``memdir tool``. Mistakes a model can fix (a bad argument, a missing file, a
path outside the store) come back as an error result; bugs raise. Every call
is bounded there too (see :mod:`memdir.tools._limits`): it runs off the
caller's event loop with a deadline, and its result and error texts are capped.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

from memdir.store import StoreError
from memdir.tools._arguments import decode_arguments
from memdir.tools._limits import (
    CallLimits,
    CallTimeoutError,
    cap_text,
    default_limits,
    echo,
    run_bounded,
)

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

# pydantic is imported where a tool's argument model is built or used, so a caller
# of one tool function (`memdir grep`) never loads it.

__all__ = [
    "ToolError",
    "ToolFunction",
    "ToolResult",
    "ToolSet",
    "ToolSpec",
    "tool_flags",
    "tool_spec",
]

ToolFunction = Callable[..., Awaitable[str]]


class ToolError(Exception):
    """A mistake the model can fix; the message tells it how."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call gave back: the text the model sees, and whether it failed."""

    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its function, the schema derived from it, and its behaviour hints."""

    name: str
    fn: ToolFunction
    description: str
    parameters: dict[str, Any]
    read_only: bool
    destructive: bool
    args_model: type[BaseModel] = field(repr=False)

    def info(self) -> dict[str, Any]:
        """The function-calling declaration: name, description, JSON schema."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            k: _strip_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


_FLAGS = "__memdir_tool_flags__"

F = TypeVar("F", bound=ToolFunction)


def tool_flags(*, read_only: bool, destructive: bool = False) -> Callable[[F], F]:
    """Declare, where a tool function is defined, whether it changes the store.

    :func:`tool_spec` reads the flags from the function, so the sets that serve
    the tool never restate them.

    Args:
        read_only: The tool never changes the store.
        destructive: The tool may remove or overwrite content.
    """

    def mark(fn: F) -> F:
        setattr(fn, _FLAGS, (read_only, destructive))
        return fn

    return mark


def tool_spec(
    fn: ToolFunction,
    *,
    read_only: bool | None = None,
    destructive: bool | None = None,
    name: str | None = None,
) -> ToolSpec:
    """Build a :class:`ToolSpec` from a typed, documented async function.

    Args:
        fn: The implementation. Every parameter needs a type annotation and an
            ``Args:`` entry in the docstring.
        read_only: The tool never changes the store (default: the function's
            :func:`tool_flags`).
        destructive: The tool may remove or overwrite content (default: the
            function's :func:`tool_flags`, else False).
        name: The tool's name; defaults to the function's name.

    Raises:
        TypeError: The function lacks a docstring, an annotation, a parameter
            description, or flags (none declared and none given).
    """
    tool_name = name or fn.__name__
    declared: tuple[bool, bool] | None = getattr(fn, _FLAGS, None)
    if read_only is None:
        if declared is None:
            raise TypeError(f"tool {tool_name} declares no flags; decorate it with "
                            "@tool_flags(read_only=...)")
        read_only = declared[0]
    if destructive is None:
        destructive = declared[1] if declared is not None else False
    if not inspect.iscoroutinefunction(fn):
        raise TypeError(f"tool {tool_name} must be an async function")
    # Tool sets are rebuilt per store from the same closures; deriving the schema
    # (docstring parse plus a pydantic model) is the costly part, so it is shared
    # by every function object with the same code, name, docstring and defaults.
    key = (fn.__code__, tool_name, fn.__doc__, repr(fn.__defaults__), repr(fn.__kwdefaults__))
    derived = _DERIVED.get(key)
    if derived is None:
        derived = _derive(fn, tool_name)
        _DERIVED[key] = derived
    text, schema, model = derived
    return ToolSpec(tool_name, fn, text, schema, read_only, destructive, model)


_Derived = tuple[str, dict[str, Any], "type[BaseModel]"]
_DERIVED: dict[tuple[object, ...], _Derived] = {}


def _derive(fn: ToolFunction, tool_name: str) -> _Derived:
    import docstring_parser  # imported on first build of a tool, not on import
    from pydantic import ConfigDict, Field, create_model

    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    if not doc.short_description:
        raise TypeError(f"tool {tool_name} has no docstring")
    described = {p.arg_name: (p.description or "").strip() for p in doc.params}
    hints = get_type_hints(fn)
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.name not in hints:
            raise TypeError(f"tool {tool_name}: parameter {param.name} has no annotation")
        if not described.get(param.name):
            raise TypeError(f"tool {tool_name}: parameter {param.name} is not documented")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (
            hints[param.name],
            Field(default, description=" ".join(described[param.name].split())),
        )
    model = create_model(
        f"{tool_name}_args", __config__=ConfigDict(extra="forbid"), **fields
    )
    schema = _strip_titles(model.model_json_schema())
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    schema["additionalProperties"] = False
    text = doc.short_description.strip()
    if doc.long_description:
        text += "\n\n" + doc.long_description.strip()
    return text, schema, model


class ToolSet:
    """A named collection of tools over one store, with one dispatcher.

    Args:
        name: The set's name (``write``, ``read``, ``bm25``, ...).
        tools: The tools, in the order the model should see them.
        limits: Time and size bounds of each call; None reads them from the
            settings (``MEMDIR_TOOL_TIME_LIMIT``, ``MEMDIR_TOOL_OUTPUT_CHARS``)
            at the first call.
    """

    def __init__(
        self, name: str, tools: Iterable[ToolSpec], *, limits: CallLimits | None = None
    ) -> None:
        self.name = name
        self.limits = limits
        self.tools: dict[str, ToolSpec] = {}
        for spec in tools:
            if spec.name in self.tools:
                raise ValueError(f"tool set {name} has two tools named {spec.name}")
            self.tools[spec.name] = spec

    def __repr__(self) -> str:
        return f"ToolSet({self.name!r}, {list(self.tools)})"

    @property
    def read_only(self) -> bool:
        """No tool of the set changes the store (derived from each tool's flags)."""
        return all(spec.read_only for spec in self.tools.values())

    def infos(self) -> list[dict[str, Any]]:
        """Declarations of every tool, for a function-calling request."""
        return [spec.info() for spec in self.tools.values()]

    def digest(self) -> str:
        """A hash of every tool's name, description and schema (pinned in run records)."""
        blob = json.dumps(self.infos(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    async def call(self, name: str, arguments: Mapping[str, Any] | str | None) -> ToolResult:
        """Run one tool call exactly as a model made it.

        Args:
            name: The tool the model named.
            arguments: Its arguments, as a mapping or as the raw JSON text.

        Returns:
            The result; ``is_error`` is set for every mistake the model can fix.
        """
        spec = self.tools.get(name)
        if spec is None:
            known = ", ".join(self.tools)
            return ToolResult(name, f"Error: there is no tool named {echo(name)}. Use one of: "
                              f"{known}.", True)
        limits = self.limits or default_limits()
        parsed = decode_arguments(arguments)
        if isinstance(parsed, str):
            return ToolResult(name, _capped(f"Error: invalid arguments for {name}: {parsed}.",
                                            limits), True)
        from pydantic import ValidationError

        try:
            args = spec.args_model.model_validate(parsed)
        except ValidationError as exc:
            return ToolResult(name, _capped(_explain(spec, exc), limits), True)
        kwargs = {key: getattr(args, key) for key in spec.args_model.model_fields}
        seconds = limits.seconds
        try:
            content = await run_bounded(
                lambda: spec.fn(**kwargs), seconds, abandon=spec.read_only
            )
        except (ToolError, StoreError) as exc:
            return ToolResult(name, _capped(f"Error: {exc}", limits), True)
        except CallTimeoutError:
            return ToolResult(name, _too_slow(name, seconds), True)
        hint = f"Ask {name} for less (a line range, a narrower path or query) to see the rest."
        return ToolResult(name, cap_text(content, limits.output_chars, hint))


def _too_slow(name: str, seconds: float) -> str:
    return (
        f"Error: {name} did not finish within {seconds:g} s, the time limit of one call, "
        "and was stopped. Ask for less: a narrower path, a simpler pattern or query, "
        "a smaller range."
    )


def _capped(message: str, limits: CallLimits) -> str:
    return cap_text(message, limits.error_chars, "The rest of this message was left out.")


def _shown(part: str | int) -> str:
    """One step of an error's location: a long or unprintable name is quoted and cut."""
    text = str(part)
    return text if len(text) <= 60 and text.isprintable() else echo(text, 40)


def _explain(spec: ToolSpec, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        where = ".".join(_shown(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            problems.append(f"{where}: unknown parameter")
        elif err["type"] == "missing":
            problems.append(f"{where}: required but missing")
        else:
            problems.append(f"{where}: {err['msg']}")
    props = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", []))
    expected = ", ".join(f"{k}{'' if k in required else ' (optional)'}" for k in props)
    return (
        f"Error: invalid arguments for {spec.name}: " + "; ".join(problems)
        + f". Parameters: {expected or 'none'}."
    )
