"""An MCP server that offers one tool set over a store.

Every tool of the set is declared with its own name, description and JSON
schema, and with annotations that say truthfully what it does to the store.
Each call is run by :meth:`memdir.tools.ToolSet.call`, the same path an agent's
call takes; a mistake the model can fix (a bad path, a missing file, a wrong
argument) comes back as a tool result with ``isError`` set. A call of a tool the
server does not offer is a protocol error instead, as the MCP specification asks:
JSON-RPC ``-32602`` (invalid params), its message naming the tools there are.

A tool that raises is a bug in memdir (``ToolSet.call`` turns every mistake a
model can fix into an error result, and the fuzzing suite holds it to that).
The server is the last place such a bug can be caught before the client sees
the SDK's bare "Internal server error": it is logged with its traceback on the
server's standard error and answered as an ``isError`` result that names the
exception, so the client learns what broke and that retrying the same call
will not help.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from memdir.server._handshake import INSTRUCTIONS, SERVER_NAME, server_version
from memdir.tools import ToolSet, ToolSpec
from memdir.tools._limits import echo

__all__ = ["SERVER_NAME", "build_server", "tool_annotations", "tool_declarations"]

_LOG = logging.getLogger(__name__)


def tool_annotations(spec: ToolSpec, *, closed_world: bool = True) -> types.ToolAnnotations:
    """The behaviour hints of one tool, stated only where they are known to hold.

    A read-only tool is also idempotent; for a tool that writes, idempotence is
    left unstated rather than guessed.

    Args:
        spec: The tool.
        closed_world: The tool touches only the store (not the network or host).
    """
    return types.ToolAnnotations(
        read_only_hint=spec.read_only,
        destructive_hint=None if spec.read_only else spec.destructive,
        idempotent_hint=True if spec.read_only else None,
        open_world_hint=False if closed_world else None,
    )


def tool_declarations(toolset: ToolSet) -> list[types.Tool]:
    """The MCP declarations of every tool in ``toolset``, in the set's order."""
    closed = toolset.name not in ("shell", "shell-read")
    return [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.parameters,
            annotations=tool_annotations(spec, closed_world=closed),
        )
        for spec in toolset.tools.values()
    ]


def _failed(name: str, exc: Exception) -> types.CallToolResult:
    """The result of a call whose tool raised: what broke, and what the client can do."""
    text = (
        f"Error: memdir failed on this {name} call: {type(exc).__name__}: {echo(str(exc), 200)}. "
        "This is a bug in memdir, not a mistake in the call; the server logged it. The same "
        "call will fail again: try other arguments or another tool."
    )
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def build_server(toolset: ToolSet, *, name: str = SERVER_NAME) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) offering ``toolset``.

    Args:
        toolset: The tools to serve; every call goes through its ``call``.
        name: The server name clients show.
    """
    declarations = tool_declarations(toolset)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=declarations)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in toolset.tools:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown tool: {echo(params.name)}. This server offers: "
                f"{', '.join(toolset.tools)}.",
            )
        try:
            result = await toolset.call(params.name, params.arguments or {})
        except Exception as exc:  # a bug: logged in full, and named to the client
            _LOG.exception("memdir serve: the %s tool raised on a call; this is a bug in "
                           "memdir, please report it with this traceback", params.name)
            return _failed(params.name, exc)
        return types.CallToolResult(
            content=[types.TextContent(text=result.content)], is_error=result.is_error
        )

    def input_schema(tool_name: str) -> dict[str, Any] | None:
        spec = toolset.tools.get(tool_name)
        return spec.parameters if spec is not None else None

    return Server(
        name,
        version=server_version(),
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
