"""A memdir store as the backend of Anthropic's client-side memory tool.

Declare :data:`MEMORY_TOOL` in a Messages API request (it is the
``memory_20250818`` tool). When Claude answers with a ``tool_use`` block named
``memory``, pass the block to :meth:`MemoryToolAdapter.handle` and send back the
``tool_result`` block it returns::

    adapter = MemoryToolAdapter(Store("~/agent-memory", create=True))
    for block in response.content:
        if block.type == "tool_use" and block.name == "memory":
            results.append(adapter.handle_sync(block))

Two profiles decide how the commands behave. ``"anthropic"`` (the default) is
the behaviour Claude was trained on, that of the Anthropic SDK's reference
implementation: any file name, no frontmatter needed, the reference's result
texts; see :class:`~memdir.tools.AnthropicMemoryCommands`. ``"memdir"`` runs
memdir's own contract (``.md`` files with frontmatter) through
``MemoryCommands``, the code the native tool sets use. This module works on
plain dicts and never imports the Anthropic SDK.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal, Protocol, assert_never

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from memdir.store import Store, StoreError
from memdir.tools._anthropic_profile import AnthropicMemoryCommands
from memdir.tools._arguments import argument_problem
from memdir.tools._limits import (
    CallLimits,
    CallTimeoutError,
    cap_text,
    default_limits,
    echo,
    run_bounded,
)
from memdir.tools._memory import MemoryCommands
from memdir.tools._spec import ToolError, ToolSet, tool_spec

__all__ = [
    "MEMORY_TOOL",
    "CreateCommand",
    "DeleteCommand",
    "InsertCommand",
    "MemoryCommand",
    "MemoryToolAdapter",
    "Profile",
    "RenameCommand",
    "StrReplaceCommand",
    "ViewCommand",
    "anthropic_set",
    "parse_command",
]

MEMORY_TOOL: Final[dict[str, str]] = {"type": "memory_20250818", "name": "memory"}
"""The tool declaration to put in a request's ``tools`` list."""

Profile = Literal["anthropic", "memdir"]
"""How memory commands behave: as Anthropic's reference tool, or by memdir's own contract."""


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ViewCommand(_Command):
    """Show a file with numbered lines, or list a folder."""

    command: Literal["view"]
    path: str
    view_range: list[int] | None = None


class CreateCommand(_Command):
    """Create a new file."""

    command: Literal["create"]
    path: str
    file_text: str


class StrReplaceCommand(_Command):
    """Replace the one occurrence of ``old_str`` in a file."""

    command: Literal["str_replace"]
    path: str
    old_str: str
    new_str: str


class InsertCommand(_Command):
    """Insert text after a line of a file."""

    command: Literal["insert"]
    path: str
    insert_line: int
    insert_text: str


class DeleteCommand(_Command):
    """Delete a file or folder."""

    command: Literal["delete"]
    path: str


class RenameCommand(_Command):
    """Move a file or folder."""

    command: Literal["rename"]
    old_path: str
    new_path: str


MemoryCommand = Annotated[
    ViewCommand | CreateCommand | StrReplaceCommand | InsertCommand | DeleteCommand | RenameCommand,
    Field(discriminator="command"),
]
"""One memory tool call's ``input``, told apart by its ``command``."""

_COMMAND: Final = TypeAdapter[MemoryCommand](MemoryCommand)
_BY_NAME: Final[dict[str, type[_Command]]] = {
    "view": ViewCommand,
    "create": CreateCommand,
    "str_replace": StrReplaceCommand,
    "insert": InsertCommand,
    "delete": DeleteCommand,
    "rename": RenameCommand,
}
_NAMES: Final = tuple(_BY_NAME)




def parse_command(data: Any, *, ignore_unknown: bool = False) -> MemoryCommand:
    """Read a tool_use ``input`` as a memory command.

    Args:
        data: The block's ``input``.
        ignore_unknown: Drop keys that are not parameters of the command (as the
            reference tool does) instead of refusing them.

    Raises:
        ToolError: The input is not a valid memory command; the message says why.
    """
    if not isinstance(data, Mapping):
        raise ToolError("The memory tool input must be an object with a 'command' field.")
    problem = argument_problem(data)  # what no command could take, as ToolSet.call refuses it
    if problem is not None:
        raise ToolError(f"Invalid memory command: {problem}.")
    command = data.get("command")
    if command not in _NAMES:
        shown = echo(command) if isinstance(command, str) else type(command).__name__
        raise ToolError(f"Unknown memory command {shown}; use one of: {', '.join(_NAMES)}.")
    if ignore_unknown:
        data = {key: value for key, value in data.items() if key in _BY_NAME[command].model_fields}
    try:
        return _COMMAND.validate_python(dict(data))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"][1:]) or "input"
            if err["type"] == "missing":
                problems.append(f"{where} is required")
            elif err["type"] == "extra_forbidden":
                problems.append(f"{where} is not a parameter of {command}")
            else:
                problems.append(f"{where}: {err['msg']}")
        raise ToolError(f"Invalid {command} command: {'; '.join(problems)}.") from None


class _Commands(Protocol):
    async def view(self, path: str, view_range: list[int] | None = None) -> str: ...
    async def create(self, path: str, file_text: str) -> str: ...
    async def str_replace(self, path: str, old_str: str, new_str: str) -> str: ...
    async def insert(self, path: str, insert_line: int, insert_text: str) -> str: ...
    async def delete(self, path: str) -> str: ...
    async def rename(self, old_path: str, new_path: str) -> str: ...


class MemoryToolAdapter:
    """Serve Anthropic memory tool calls from a memdir store.

    Each block is bounded as every tool call is (:meth:`memdir.tools.ToolSet.call`):
    it runs on a worker thread off the caller's event loop with a time limit, a
    view still running at the limit is dropped, and long results and messages are
    cut with a note.

    Args:
        store: The store that holds the memory files (seen by Claude as ``/memories``).
        profile: ``"anthropic"`` (default) behaves as the SDK's reference tool;
            ``"memdir"`` applies memdir's contract of ``.md`` files with frontmatter.
        limits: Time and size limits of one block (``MEMDIR_TOOL_TIME_LIMIT`` and
            ``MEMDIR_TOOL_OUTPUT_CHARS`` if None).
    """

    declaration: Final[dict[str, str]] = MEMORY_TOOL

    def __init__(self, store: Store, *, profile: Profile = "anthropic",
                 limits: CallLimits | None = None) -> None:
        self.profile: Profile = profile
        self.limits = limits
        self.commands: _Commands = (
            AnthropicMemoryCommands(store) if profile == "anthropic" else MemoryCommands(store)
        )

    async def execute(self, command: MemoryCommand) -> str:
        """Run one parsed command and return its text; mistakes raise ToolError/StoreError."""
        c = self.commands
        match command:
            case ViewCommand():
                return await c.view(command.path, command.view_range)
            case CreateCommand():
                return await c.create(command.path, command.file_text)
            case StrReplaceCommand():
                return await c.str_replace(command.path, command.old_str, command.new_str)
            case InsertCommand():
                return await c.insert(command.path, command.insert_line, command.insert_text)
            case DeleteCommand():
                return await c.delete(command.path)
            case RenameCommand():
                return await c.rename(command.old_path, command.new_path)
            case _:
                assert_never(command)

    async def handle(self, block: Mapping[str, Any] | object) -> dict[str, Any]:
        """Answer a ``tool_use`` block with a ``tool_result`` block.

        Args:
            block: The tool_use block: a dict with ``type``, ``id``, ``name``
                ("memory") and ``input``, or any object with those attributes (such
                as the SDK's own block objects).

        Returns:
            ``{"type": "tool_result", "tool_use_id": ..., "content": ..., "is_error": ...}``;
            a mistake Claude can correct comes back as content with ``is_error`` set
            (under the anthropic profile the bare message, as the SDK's tool runner
            sends it; under the memdir profile prefixed with ``Error:``).

        Raises:
            ValueError: The block is not a tool_use block of the memory tool (a routing
                mistake of the caller, not of the model).
        """
        if not isinstance(block, Mapping):
            block = {key: getattr(block, key, None) for key in ("type", "id", "name", "input")}
        if block.get("type") != "tool_use" or not isinstance(block.get("id"), str):
            raise ValueError("expected a tool_use block with an 'id'")
        if block.get("name") != MEMORY_TOOL["name"]:
            raise ValueError(f"this block calls the tool {block.get('name')!r}, not 'memory'")
        reference = self.profile == "anthropic"
        limits = self.limits or default_limits()
        try:
            command = parse_command(block.get("input"), ignore_unknown=reference)
            parsed = command
            text = await run_bounded(lambda: self.execute(parsed), limits.seconds,
                                     abandon=isinstance(command, ViewCommand))
            content = cap_text(text, limits.output_chars,
                               "View a line range (view_range) to see the rest.")
            is_error = False
        except (ToolError, StoreError) as exc:
            message = str(exc) if reference else f"Error: {exc}"
            content = cap_text(message, limits.error_chars,
                               "The rest of this message was left out.")
            is_error = True
        except CallTimeoutError:
            if isinstance(command, ViewCommand):
                hint = "View a line range or a smaller folder instead."
            else:  # an edit checks the deadline before it writes: nothing was changed
                hint = "Nothing was changed; try again, or edit a smaller file."
            content = (f"The command did not finish within {limits.seconds:g} s, the time "
                       f"limit of one call, and was stopped. {hint}")
            is_error = True
        return {
            "type": "tool_result",
            "tool_use_id": block["id"],
            "content": content,
            "is_error": is_error,
        }

    def handle_sync(self, block: Mapping[str, Any] | object) -> dict[str, Any]:
        """:meth:`handle` for code without an event loop (it starts one per call)."""
        return asyncio.run(self.handle(block))


def anthropic_set(store: Store, *, read_only: bool = False) -> ToolSet:
    """The ``anthropic`` set: the six memory commands as function-calling or MCP tools.

    They behave as the anthropic profile does (the reference tool's outcomes and
    texts, any file name, no frontmatter needed), for clients that reach a store
    through function calling or MCP rather than ``memory_20250818`` blocks.

    Args:
        store: The store the tools act on.
        read_only: Offer only ``view``.
    """
    commands = AnthropicMemoryCommands(store)
    specs = [tool_spec(commands.view)]
    if not read_only:
        specs += [tool_spec(fn) for fn in (commands.create, commands.str_replace,
                                           commands.insert, commands.delete, commands.rename)]
    return ToolSet("anthropic", specs)
