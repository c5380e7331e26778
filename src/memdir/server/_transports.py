"""Running the server: over stdio, or over streamable HTTP on a loopback address.

Over HTTP every request is checked against DNS rebinding: its ``Host`` (and
``Origin``, when sent) must name the address the server is bound to, with its
port, so a web page whose domain was rebound to this machine is refused. With a
token, a request without it is answered ``403`` with a JSON-RPC error a client
can show; not ``401``, which makes OAuth-aware clients (the TypeScript SDK, the
Inspector, the Python SDK's OAuth provider) start an authorization flow that a
static token cannot finish, and the OAuth discovery paths answer ``404``.
"""

from __future__ import annotations

import asyncio
import hmac
import io
import json
import logging
import re
import sys
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse
from pydantic import ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from memdir.server._handshake import StdinFeed
from memdir.server._loopback import (
    LoopbackError,
    allowed_hosts,
    bare_host,
    check_bind,
    is_loopback,
)

__all__ = [
    "MCP_PATH",
    "BearerTokenGate",
    "LoopbackError",
    "allowed_hosts",
    "check_bind",
    "http_app",
    "is_loopback",
    "run_http",
    "run_stdio",
]

MCP_PATH = "/mcp"
_SHUTDOWN_SECONDS = 2
"""How long a stop (Ctrl-C, SIGTERM) waits for open HTTP requests before closing them."""
_LOG = logging.getLogger(__name__)


def _security(host: str, port: int) -> TransportSecuritySettings:
    hosts = allowed_hosts(host, port)
    if hosts is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class BearerTokenGate:
    """ASGI middleware refusing HTTP requests without ``Authorization: Bearer <token>``.

    A refused request gets ``403`` and a JSON-RPC error saying what to send; the
    OAuth discovery paths (``/.well-known/...``) get ``404`` saying that this
    server takes a fixed token, not OAuth.

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
            if str(scope.get("path", "")).startswith("/.well-known/"):
                await _no_oauth(send)
                return
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await _refuse(send, "missing" if not given else "wrong")
                return
        await self.app(scope, receive, send)


async def _reply(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    })
    await send({"type": "http.response.body", "body": body})


async def _refuse(send: Send, problem: str) -> None:
    message = (
        f"memdir serve refused the request: the bearer token is {problem}. Send the header "
        "'Authorization: Bearer <token>' with the token the server was started with "
        "(MEMDIR_MCP_TOKEN or --token); there is no sign-in flow to follow."
    )
    await _reply(send, 403, {"jsonrpc": "2.0", "id": None,
                             "error": {"code": -32001, "message": message}})


async def _no_oauth(send: Send) -> None:
    await _reply(send, 404, {
        "error": "not_found",
        "error_description": "memdir serve has no OAuth authorization server; it takes a "
        "fixed bearer token: send 'Authorization: Bearer <token>'.",
    })


class _StdinLines(anyio.AsyncFile[str]):
    """Standard input, line by line, from a :class:`~memdir.server._handshake.StdinFeed`.

    The SDK reads stdin on a worker thread that a stop must wait for, so Ctrl-C
    did nothing until the next line arrived. The feed reads on a daemon thread,
    which is never waited for: cancelling the server ends it at once, whatever
    stdin is (a terminal, a pipe). It reads the descriptor with ``os.read``,
    holding no lock of ``sys.stdin`` that the interpreter's shutdown would wait
    for. A feed started early (``memdir serve`` starts it before the SDK loads)
    has already answered the client's opening; its lines come first, in order.
    """

    def __init__(self, feed: StdinFeed, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(io.StringIO())  # never read: lines come from the feed
        lines: asyncio.Queue[str] = asyncio.Queue()
        self._lines = lines
        # From here on the feed answers nothing itself: this happens before the SDK
        # claims standard output, so an early reply never lands on the diverted one.
        feed.attach(lambda line: _put(loop, lines, line))

    async def readline(self) -> str:
        """The next line, or ``""`` at the end of input."""
        return await self._lines.get()


def _put(loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[str], line: str) -> None:
    try:
        loop.call_soon_threadsafe(lines.put_nowait, line)
    except RuntimeError:
        pass  # the server's loop is closed: it reads nothing more


class _Answered:
    """The ids of the requests a client sent that the server has not answered yet.

    The SDK's serving loop cancels every request still running when its input
    ends, so a client that writes its requests and closes standard input (a
    pipe, a script) lost the answers to the last ones. :class:`_DrainedInput`
    holds the end of input back until they are written, or until ``bound``
    seconds have passed (every tool call is bounded by the tool time limit).
    """

    def __init__(self, bound: float) -> None:
        self.bound = bound
        self._open: set[str] = set()
        self._idle = asyncio.Event()
        self._idle.set()

    def read(self, item: object) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCRequest):
            self._open.add(repr(message.id))
            self._idle.clear()
        elif (isinstance(message, JSONRPCNotification)
              and message.method == "notifications/cancelled"):
            self._close(repr((message.params or {}).get("requestId")))  # never answered

    def written(self, item: object) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self._close(repr(message.id))

    def _close(self, key: str) -> None:
        self._open.discard(key)
        if not self._open:
            self._idle.set()

    async def drained(self) -> None:
        with anyio.move_on_after(self.bound):
            await self._idle.wait()


class _DrainedInput:
    """The server's read stream: its end waits until every request read is answered."""

    def __init__(self, inner: Any, answered: _Answered) -> None:
        self._inner, self._answered = inner, answered

    @property
    def last_context(self) -> Any:  # the sender's context, which the SDK looks for
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            await self._answered.drained()
            raise
        self._answered.read(item)
        return item

    def __aiter__(self) -> _DrainedInput:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _DrainedInput:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _NotedOutput:
    """The server's write stream, noting each answer in :class:`_Answered`.

    A reply to a request the feed answered before the SDK loaded (``early``: the
    key of its id to the text written) is not written twice: it is compared with
    the early one, and a difference is logged as the bug it would be.
    """

    def __init__(self, inner: Any, answered: _Answered, early: dict[str, str] | None = None
                 ) -> None:
        self._inner, self._answered = inner, answered
        self._early = early if early is not None else {}

    async def send(self, item: Any, /) -> None:
        message = getattr(item, "message", None)
        if self._early and isinstance(message, JSONRPCResponse | JSONRPCError):
            sent = self._early.pop(repr(message.id), None)
            if sent is not None:
                own = message.model_dump_json(by_alias=True, exclude_unset=True)
                if own != sent:
                    _LOG.warning("memdir serve: the reply given before the MCP SDK loaded "
                                 "differs from the SDK's; this is a bug in memdir, please "
                                 "report it.\n early: %.2000s\n SDK:   %.2000s", sent, own)
                self._answered.written(item)
                return
        await self._inner.send(item)
        self._answered.written(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _NotedOutput:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


_READABLE = (
    "Send one JSON-RPC 2.0 message per line as UTF-8 JSON: no lone surrogate escapes "
    "(\\ud800 without its pair), no NaN or Infinity, numbers of at most a few hundred "
    "digits, nesting under 200 levels."
)
_LEADING_ID = re.compile(r'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*'
                         r'(-?\d{1,18}|"[^"\\]{0,200}")\s*[,}]')


def _unreadable_reply(exc: Exception) -> SessionMessage:
    """The JSON-RPC error for a line the SDK could not read as a message.

    The SDK drops such a line without an answer over stdio, so a client that sent
    a request would wait for ever; over HTTP the same bytes get a 400. The reply
    carries the request's id where it can be read, else ``null`` (as JSON-RPC asks
    for a message that cannot be parsed).
    """
    detail, line, code = (str(exc).splitlines() or [""])[0][:300], None, types.PARSE_ERROR
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        detail = str(first["msg"])[:300]
        line = first.get("input") if isinstance(first.get("input"), str) else None
        if first["type"] != "json_invalid":  # JSON, but not a JSON-RPC message
            code = types.INVALID_REQUEST
    request_id: int | str | None = None
    if line is not None and (found := _LEADING_ID.match(line)):
        request_id = json.loads(found.group(1))
    elif isinstance(exc, ValidationError):  # read as JSON: some error holds the whole object
        for err in exc.errors():
            given = err.get("input")
            if isinstance(given, dict) and isinstance(given.get("id"), int | str) \
                    and not isinstance(given.get("id"), bool):
                request_id = given["id"]
                break
    error = types.ErrorData(
        code=code, message=f"memdir serve could not read this message: {detail}. {_READABLE}"
    )
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


class _Answering:
    """The stdio read stream, answering every line the SDK could not parse.

    The SDK hands such a line to the server as an exception, which drops it;
    here it gets a JSON-RPC error instead (see :func:`_unreadable_reply`), and
    only messages reach the server.
    """

    def __init__(self, inner: Any, replies: Any) -> None:
        self._inner = inner
        self._replies = replies

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message (the SDK's context streams)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        """The next message; unreadable lines in between are answered."""
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                message: SessionMessage = item
                return message
            _LOG.warning("memdir serve: answered an unreadable message: %.300s", item)
            await self._replies.send(_unreadable_reply(item))

    def __aiter__(self) -> _Answering:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._inner.aclose()

    async def __aenter__(self) -> _Answering:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def run_stdio(server: Server[Any], feed: StdinFeed | None = None) -> None:
    """Serve one client over this process's standard input and output.

    At the end of input the requests already read are answered before the
    server stops. Cancelling it (Ctrl-C under :func:`anyio.run`) stops it at
    once, without waiting for another line on standard input. A line that is
    not a readable JSON-RPC message is answered with a parse error rather than
    dropped.

    Args:
        server: The server (see :func:`~memdir.server.build_server`).
        feed: Standard input as read since the process started, its opening
            perhaps answered already (see :mod:`memdir.server._handshake`);
            None starts reading now.
    """
    from memdir.config import get_settings

    answered = _Answered(get_settings().tool_time_limit + _SHUTDOWN_SECONDS)
    if feed is None:
        feed = StdinFeed(sys.stdin.fileno(), early=False).start()
    stdin = _StdinLines(feed, asyncio.get_running_loop())
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):
        noted = _NotedOutput(write_stream, answered, feed.answered)
        await server.run(_DrainedInput(_Answering(read_stream, noted), answered), noted,
                         server.create_initialization_options())


def http_app(server: Server[Any], *, host: str, port: int, token: str | None) -> ASGIApp:
    """The streamable-HTTP ASGI app at ``/mcp``, behind the token gate when a token is set.

    Requests must name ``host:port`` (see :func:`allowed_hosts`).
    """
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=bare_host(host),
        transport_security=_security(host, port))
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
        allow_remote: Permit a non-loopback address (only with a token).

    Raises:
        LoopbackError: ``host`` is not loopback and ``allow_remote`` is not set, or
            is set without a token, or ``host`` is a wildcard address without a token.
    """
    check_bind(host, token=token, allow_remote=allow_remote)
    app = http_app(server, host=host, port=port, token=token)
    config = uvicorn.Config(app, host=bare_host(host), port=port, log_level="warning",
                            lifespan="on", timeout_graceful_shutdown=_SHUTDOWN_SECONDS)
    anyio.run(uvicorn.Server(config).serve)
