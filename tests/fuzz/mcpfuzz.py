"""Generated calls sent to a real ``memdir serve``, over stdio and over streamable HTTP.

Each server is a subprocess. A call whose arguments strict JSON can carry goes
through the MCP SDK's own ``Client`` (stdio, or ``streamable_http_client``); a
call it cannot send (lone surrogates as ``\\udXXX`` escapes, NaN, integers of
thousands of digits, JSON nested 100,000 deep, broken argument text) is written
as raw JSON-RPC instead: a line on a second server's standard input, or a POST
in a second HTTP session. Whatever the bytes, the server must answer: with a
tool result (``isError`` for a mistake), or with a JSON-RPC error naming the
problem, never "Internal server error", never silence, never by dying.

The client and the raw channels run on one event loop in a thread of their own
(:class:`Loop`), so a hypothesis test, which is synchronous, can send one call
per example through sessions that live across examples.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from fuzzcalls import Call, calls_for, to_json
from fuzzrun import OUTPUT_CHARS, SLACK_SECONDS, Surface

__all__ = ["INTERNAL", "Loop", "McpFailure", "calls_for_server", "mcp_surface", "server_flags"]

T = TypeVar("T")
LIMIT_SECONDS = 5.0
"""The server's time limit per call (``MEMDIR_TOOL_TIME_LIMIT``)."""
ENV = {"MEMDIR_TOOL_TIME_LIMIT": f"{LIMIT_SECONDS:g}",
       "MEMDIR_TOOL_OUTPUT_CHARS": str(OUTPUT_CHARS)}
INTERNAL = -32603
"""JSON-RPC's internal error, which the SDK answers for a handler that raised."""
_START_SECONDS = 120.0
_INIT = {"protocolVersion": "2025-06-18", "capabilities": {},
         "clientInfo": {"name": "memdir-fuzz", "version": "0"}}


class McpFailure(Exception):
    """The server failed a call: an internal error, no answer, or its process died."""


def server_flags(toolset: str) -> list[str]:
    """``memdir serve`` flags for the read, write or anthropic (all six commands) set."""
    return {"read": [], "write": ["--write"],
            "anthropic": ["--profile", "anthropic", "--write"]}[toolset]


class Loop:
    """An event loop on a daemon thread; :meth:`run` waits for a coroutine from any thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="mcp-fuzz",
                                        daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """The result of ``coro`` run on the loop."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


class _Held:
    """An async context (a client session) entered and left in one task of its own."""

    def __init__(self, make: Callable[[], AbstractAsyncContextManager[Any]]) -> None:
        self._make = make
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._hold())

    async def _hold(self) -> None:
        try:
            async with self._make() as value:
                self._ready.set_result(value)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                raise

    async def value(self) -> Any:
        return await self._ready

    async def close(self) -> None:
        self._stop.set()
        try:
            await asyncio.wait_for(self._task, 20)
        except (TimeoutError, Exception):  # a server that broke is judged elsewhere
            self._task.cancel()


SDK_BYTES = 1_000_000
"""Calls larger than this go raw: the SDK's HTTP client reports any refused request
body as an internal error of its own ("Server returned an error response"), so only
the raw channel shows what the server answered."""


def sdk_sendable(tool: str, payload: Any) -> bool:
    """Whether the SDK's client can put the call on the wire: it serializes with pydantic."""
    from pydantic_core import to_json

    if not isinstance(payload, dict):
        return False
    try:
        size = len(to_json([tool, payload]))
    except (ValueError, UnicodeEncodeError, RecursionError, TypeError):
        return False  # pydantic refuses it: surrogates, depth, non-finite or huge numbers
    if size > SDK_BYTES:
        return False
    try:
        json.dumps(payload, allow_nan=False)  # NaN would go out as null: another call
    except ValueError:
        return False
    return True


def raw_request(call: Call, request_id: int) -> str:
    """The JSON-RPC ``tools/call`` text of ``call``, its arguments written as generated."""
    if call.form == "text":
        arguments = call.arguments or "{}"
    else:
        arguments = to_json(call.arguments, ascii_only=call.form != "json-unicode")
    name = json.dumps(call.tool)  # a lone surrogate in a tool name is escaped, as JSON may
    return (f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
            f'"params": {{"name": {name}, "arguments": {arguments}}}}}')


def judge_reply(reply: dict[str, Any] | None) -> tuple[str, bool]:
    """A JSON-RPC reply as ``(text, is_error)``; a reply that fails the contract raises.

    Raises:
        McpFailure: No reply, or an internal error ("Internal server error").
    """
    if reply is None:
        raise McpFailure("the server sent no answer to the request")
    if "error" in reply:
        error = reply["error"]
        if error.get("code") == INTERNAL or "Internal server error" in str(error.get("message")):
            raise McpFailure(f"internal error: {error}")
        return f"[JSON-RPC error {error.get('code')}] {error.get('message')}", True
    result = reply.get("result") or {}
    texts = [block.get("text", "") for block in result.get("content", [])]
    return "".join(texts), bool(result.get("isError"))


# --- the server processes ----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_command(store: Path, toolset: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "memdir", "serve", str(store), *server_flags(toolset), *extra]


@contextmanager
def http_server(store: Path, toolset: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``memdir serve --transport http`` on a free loopback port; its process and URL."""
    port = _free_port()
    proc = subprocess.Popen(
        serve_command(store, toolset, "--transport", "http", "--port", str(port)),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **ENV})
    try:
        deadline = time.monotonic() + _START_SECONDS
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"server exited: {proc.communicate()[1].decode()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("server did not start listening") from None
                time.sleep(0.2)
        yield proc, f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def peak_rss_mb(pid: int) -> float:
    """The high-water mark of a process's resident memory (``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _child_servers(store: Path) -> list[int]:
    """Pids of this process's children that serve ``store`` (the SDK spawned them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"serve" in cmdline and str(store).encode() in cmdline:
            found.append(int(entry.name))
    return found


# --- raw channels ------------------------------------------------------------------------


class RawStdio:
    """JSON-RPC lines written to a ``memdir serve`` process's standard input by hand."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._next = 1
        self._waiting: dict[int | None, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    @asynccontextmanager
    async def open(cls, store: Path, toolset: str) -> AsyncIterator[RawStdio]:
        command = serve_command(store, toolset)
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env={**os.environ, **ENV}, limit=2 ** 26)
        channel = cls(proc)
        try:
            await channel.request("initialize", _INIT, timeout=_START_SECONDS)
            await channel.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
            yield channel
        finally:
            channel._reader.cancel()
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            waiter = self._waiting.pop(message.get("id"), None) if isinstance(message,
                                                                               dict) else None
            if waiter is None and isinstance(message, dict) and "error" in message:
                waiter = self._waiting.pop(None, None)  # an error about an unreadable request
            if waiter is not None and not waiter.done():
                waiter.set_result(message)

    async def write(self, text: str) -> None:
        assert self.proc.stdin is not None
        # A raw lone surrogate cannot be encoded; JSON text then carries it as an escape.
        data = text.encode("utf-8", "surrogatepass") + b"\n"
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def request(self, method: str, params: dict[str, Any],
                      timeout: float) -> dict[str, Any] | None:
        request_id = self._take_id()
        text = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                           "params": params})
        return await self.send_text(text, request_id, timeout)

    def _take_id(self) -> int:
        self._next += 1
        return self._next

    async def send_text(self, text: str, request_id: int,
                        timeout: float) -> dict[str, Any] | None:
        loop = asyncio.get_running_loop()
        waiter = self._waiting[request_id] = loop.create_future()
        self._waiting[None] = waiter
        await self.write(text)
        try:
            return await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            return None
        finally:
            self._waiting.pop(request_id, None)
            if self._waiting.get(None) is waiter:
                self._waiting.pop(None)

    async def call(self, call: Call) -> tuple[str, bool]:
        if self.proc.returncode is not None:
            raise McpFailure(f"the server exited with status {self.proc.returncode}")
        request_id = self._take_id()
        reply = await self.send_text(raw_request(call, request_id), request_id,
                                     LIMIT_SECONDS + SLACK_SECONDS)
        if reply is None:
            alive = await self.request("ping", {}, timeout=10)
            state = "is alive" if alive is not None else "does not answer a ping either"
            raise McpFailure(f"no answer to the call; the server {state}")
        return judge_reply(reply)


class RawHttp:
    """JSON-RPC POSTs written by hand in an HTTP session of their own."""

    def __init__(self, http: Any, url: str, session: str) -> None:
        self.http, self.url, self.session = http, url, session
        self._next = 1

    @classmethod
    @asynccontextmanager
    async def open(cls, url: str) -> AsyncIterator[RawHttp]:
        import httpx2

        async with httpx2.AsyncClient(timeout=LIMIT_SECONDS + SLACK_SECONDS + 10) as http:
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": _INIT})
            reply = await http.post(url, content=body, headers=cls._headers(None))
            session = reply.headers.get("mcp-session-id")
            assert session, f"no session from {url}: {reply.status_code} {reply.text[:300]}"
            channel = cls(http, url, session)
            await http.post(url, content='{"jsonrpc": "2.0", "method": '
                            '"notifications/initialized"}', headers=cls._headers(session))
            yield channel

    @staticmethod
    def _headers(session: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream",
                   "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}
        if session:
            headers["Mcp-Session-Id"] = session
        return headers

    async def call(self, call: Call) -> tuple[str, bool]:
        import httpx2

        self._next += 1
        text = raw_request(call, self._next)
        try:
            reply = await self.http.post(self.url, content=text.encode("utf-8", "surrogatepass"),
                                         headers=self._headers(self.session))
        except httpx2.HTTPError as exc:
            raise McpFailure(f"the request failed: {exc!r}") from None
        if reply.status_code >= 500:
            raise McpFailure(f"HTTP {reply.status_code}: {reply.text[:300]}")
        message = _http_message(reply.headers.get("content-type", ""), reply.text)
        if message is None and reply.status_code >= 400:
            return f"[HTTP {reply.status_code}] {reply.text[:300]}", True
        return judge_reply(message)


def _http_message(content_type: str, body: str) -> dict[str, Any] | None:
    """The JSON-RPC message of an HTTP reply: a JSON body, or the data of an SSE event."""
    if "text/event-stream" in content_type:
        for line in body.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if isinstance(message, dict) and ("result" in message or "error" in message):
                    return message
        return None
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


# --- surfaces ----------------------------------------------------------------------------


class McpServer:
    """One transport and tool set: an SDK client session and a raw channel, both live."""

    def __init__(self, loop: Loop, store: Path, transport: str, toolset: str) -> None:
        self.loop, self.store, self.transport, self.toolset = loop, store, transport, toolset
        self.pids: list[int] = []
        self.start_rss: dict[int, float] = {}
        self.tools: list[str] = []
        self._held: list[_Held] = []
        self._http: Any = None

    def start(self) -> None:
        """Start the server(s) and open both channels (waits for the handshake)."""
        from mcp import Client, StdioServerParameters

        if self.transport == "http":
            self._http = http_server(self.store, self.toolset)
            proc, url = self._http.__enter__()
            self.pids.append(proc.pid)

            def sdk() -> AbstractAsyncContextManager[Any]:
                return _http_client(url)

            def raw() -> AbstractAsyncContextManager[Any]:
                return RawHttp.open(url)
        else:
            command = serve_command(self.store, self.toolset)
            params = StdioServerParameters(command=command[0], args=command[1:],
                                           env={**os.environ, **ENV})

            def sdk() -> AbstractAsyncContextManager[Any]:
                return Client(params, read_timeout_seconds=LIMIT_SECONDS + SLACK_SECONDS + 30)

            def raw() -> AbstractAsyncContextManager[Any]:
                return RawStdio.open(self.store, self.toolset)

        async def open_both() -> tuple[Any, Any]:
            self._held = [_Held(sdk), _Held(raw)]
            return await self._held[0].value(), await self._held[1].value()

        self.client, self.raw = self.loop.run(open_both(), timeout=_START_SECONDS)
        listed = self.loop.run(self.client.list_tools(), timeout=60)
        self.tools = [tool.name for tool in listed.tools]
        if self.transport == "stdio":
            self.pids = _child_servers(self.store)
        self.start_rss = {pid: peak_rss_mb(pid) for pid in self.pids}

    def stop(self) -> dict[str, float]:
        """Close both channels and the servers; the servers' memory, in MB."""
        peaks = {pid: peak_rss_mb(pid) for pid in self.pids if Path(f"/proc/{pid}").exists()}
        for held in self._held:
            self.loop.run(held.close(), timeout=60)
        if self._http is not None:
            self._http.__exit__(None, None, None)
        start = max(self.start_rss.values(), default=0.0)
        return {"start_rss_mb": round(start, 1),
                "peak_rss_mb": round(max(peaks.values(), default=0.0), 1)}

    async def send(self, call: Call, payload: Any) -> tuple[str, bool]:
        """One call: through the SDK's client where it can carry it, else raw JSON-RPC."""
        from mcp.shared.exceptions import MCPError

        if call.form == "mapping" and sdk_sendable(call.tool, payload):
            try:
                result = await self.client.call_tool(call.tool, payload)
            except MCPError as exc:
                if exc.error.code == INTERNAL or "Internal server error" in exc.error.message:
                    raise McpFailure(f"internal error: {exc.error}") from None
                return f"[JSON-RPC error {exc.error.code}] {exc.error.message}", True
            text = "".join(getattr(block, "text", "") for block in result.content)
            return text, bool(result.is_error)
        return await self.raw.call(call)


@asynccontextmanager
async def _http_client(url: str) -> AsyncIterator[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(timeout=LIMIT_SECONDS + SLACK_SECONDS + 30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


def mcp_surface(loop: Loop, store: Path, transport: str,
                toolset: str) -> tuple[Surface, McpServer]:
    """A started server as a surface (its calls' time limit is the server's)."""
    server = McpServer(loop, store, transport, toolset)
    server.start()

    def run(coro: Awaitable[Any]) -> Any:
        return loop.run(coro)  # type: ignore[arg-type]

    surface = Surface(f"mcp {transport} {toolset}", server.send,
                      LIMIT_SECONDS, OUTPUT_CHARS + 5_000, run, trace=False)
    return surface, server


class _Declared:
    """The server's tools, shaped as a ToolSet's ``tools`` for :func:`calls_for`."""

    def __init__(self, client: Any, loop: Loop) -> None:
        listed = loop.run(client.list_tools(), timeout=60)
        self.tools = {tool.name: _Spec(tool.input_schema) for tool in listed.tools}


class _Spec:
    def __init__(self, parameters: dict[str, Any]) -> None:
        self.parameters = parameters


def calls_for_server(server: McpServer, known: list[str]) -> Any:
    """Calls shaped by the tools the server declares (``tools/list``), as an agent sees them."""
    return calls_for(_Declared(server.client, server.loop), known)
