"""The MCP server: a store's tool set offered to any MCP client.

``memdir serve`` runs it; :func:`build_server` gives the server object to
embed it elsewhere. Transports: stdio, and streamable HTTP bound to loopback
with an optional bearer token.
"""

from memdir.server._server import SERVER_NAME, build_server, tool_annotations, tool_declarations
from memdir.server._transports import (
    MCP_PATH,
    BearerTokenGate,
    LoopbackError,
    allowed_hosts,
    check_bind,
    http_app,
    is_loopback,
    run_http,
    run_stdio,
)

__all__ = [
    "MCP_PATH",
    "SERVER_NAME",
    "BearerTokenGate",
    "LoopbackError",
    "allowed_hosts",
    "build_server",
    "check_bind",
    "http_app",
    "is_loopback",
    "run_http",
    "run_stdio",
    "tool_annotations",
    "tool_declarations",
]
