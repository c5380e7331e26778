"""Running the server: over stdio, or over streamable HTTP on a loopback address."""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

import anyio
import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "MCP_PATH",
    "BearerTokenGate",
    "LoopbackError",
    "http_app",
    "is_loopback",
    "run_http",
    "run_stdio",
]

MCP_PATH = "/mcp"


class LoopbackError(ValueError):
    """A host that is reachable from other machines was given without consent."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1 or localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerTokenGate:
    """ASGI middleware refusing HTTP requests without ``Authorization: Bearer <token>``.

    Args:
        app: The application to protect.
        token: The secret every request must carry.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("the bearer token must not be empty")
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await _refuse(send)
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send) -> None:
    body = b'{"error": "unauthorized", "detail": "send Authorization: Bearer <token>"}'
    await send({
        "type": "http.response.start",
        "status": 401,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="memdir"'),
        ],
    })
    await send({"type": "http.response.body", "body": body})


async def run_stdio(server: Server[Any]) -> None:
    """Serve one client over this process's standard input and output."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def http_app(server: Server[Any], *, host: str, token: str | None) -> ASGIApp:
    """The streamable-HTTP ASGI app at ``/mcp``, behind the token gate when a token is set."""
    app: ASGIApp = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    return BearerTokenGate(app, token) if token else app


def run_http(
    server: Server[Any],
    *,
    host: str,
    port: int,
    token: str | None,
    allow_remote: bool = False,
) -> None:
    """Serve over streamable HTTP at ``http://host:port/mcp`` until interrupted.

    Args:
        server: The MCP server.
        host: The address to bind; only loopback unless ``allow_remote``.
        port: The TCP port.
        token: When set, every request must carry it as a bearer token.
        allow_remote: Permit a non-loopback address.

    Raises:
        LoopbackError: ``host`` is not loopback and ``allow_remote`` is not set.
    """
    if not is_loopback(host) and not allow_remote:
        raise LoopbackError(
            f"{host} is reachable from other machines; the server binds loopback addresses "
            "only unless remote access is allowed explicitly"
        )
    app = http_app(server, host=host, token=token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve)
