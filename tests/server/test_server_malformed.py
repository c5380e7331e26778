"""``memdir serve`` answers every request, however malformed, and names what is wrong.

- A line on standard input that the SDK cannot read as a JSON-RPC message (a
  lone surrogate escape, JSON nested past its parser, broken JSON) is answered
  with a JSON-RPC error, on the request's id where it can be read; the SDK
  alone drops such a line, and the client waits for ever.
- Arguments no tool could take (an integer of hundreds of digits, nesting, NaN)
  come back as ``isError`` results saying what to send, over both transports.
- A tool that raises (a bug) is answered as an ``isError`` result naming the
  exception, and logged with its traceback, never as "Internal server error".
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from serving import TIMEOUT, http_serve, serve_command

from memdir.sample import build_sample_store
from memdir.server import build_server
from memdir.tools import ToolSet, tool_flags, tool_spec

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "0"}}}


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    build_sample_store(tmp_path / "s")
    return tmp_path / "s"


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


class _Lines:
    """``memdir serve`` over stdio, spoken to one raw line at a time."""

    def __init__(self, store_dir: Path) -> None:
        self.proc = subprocess.Popen(serve_command(store_dir, "--write"), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.send(json.dumps(INIT))
        assert self.reply()["id"] == 0
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        assert ready, "no answer: the server dropped the request"
        line = self.proc.stdout.readline()
        message: dict[str, Any] = json.loads(line)
        return message

    def close(self) -> str:
        _, err = self.proc.communicate(timeout=30)  # closes stdin: the server's end of input
        return err.decode()


def _call(request_id: int, arguments: str, name: str = "view") -> str:
    return (f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
            f'"params": {{"name": "{name}", "arguments": {arguments}}}}}')


def test_unreadable_lines_on_stdin_are_answered(store_dir: Path) -> None:
    lines = _Lines(store_dir)
    try:
        lines.send(_call(7, '{"path": "/memories/\\ud800.md"}'))  # as JSON.stringify writes it
        reply = lines.reply()
        assert reply["id"] == 7
        assert reply["error"]["code"] == types.PARSE_ERROR
        assert "surrogate" in reply["error"]["message"]
        assert "one JSON-RPC 2.0 message per line" in reply["error"]["message"]

        lines.send(_call(8, '{"path": ' + "[" * 1_000 + "]" * 1_000 + "}"))
        reply = lines.reply()
        assert reply["id"] == 8
        assert "recursion limit" in reply["error"]["message"]

        lines.send('{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": ')
        reply = lines.reply()
        assert reply["id"] == 9 and reply["error"]["code"] == types.PARSE_ERROR

        lines.send("not json at all")
        reply = lines.reply()
        assert reply["id"] is None and reply["error"]["code"] == types.PARSE_ERROR

        lines.send('{"jsonrpc": "2.0", "id": 10, "method": 5}')  # JSON, not JSON-RPC
        reply = lines.reply()
        assert reply["id"] == 10 and reply["error"]["code"] == types.INVALID_REQUEST

        lines.send(_call(11, '{"path": "/memories/people/maya.md"}'))  # still serving
        reply = lines.reply()
        assert reply["id"] == 11 and "Maya" in reply["result"]["content"][0]["text"]
    finally:
        err = lines.close()
    assert "answered an unreadable message" in err


async def _both_transports(store_dir: Path, calls: list[tuple[str, dict[str, Any]]]
                           ) -> list[list[types.CallToolResult]]:
    results: list[list[types.CallToolResult]] = []
    command = serve_command(store_dir, "--write")
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    with anyio.fail_after(TIMEOUT):
        async with Client(params, read_timeout_seconds=TIMEOUT) as client:
            results.append([await client.call_tool(name, args) for name, args in calls])
    with http_serve(store_dir, "--write") as (_, port):
        async with httpx2.AsyncClient(timeout=60) as http:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(streamable_http_client(url, http_client=http)) as client:
                results.append([await client.call_tool(name, args) for name, args in calls])
    return results


async def test_arguments_no_tool_takes_are_tool_errors_over_mcp(store_dir: Path) -> None:
    maya = "/memories/people/maya.md"
    deep: Any = "x"
    for _ in range(50):
        deep = [deep]
    calls = [
        ("insert", {"path": maya, "insert_line": 10 ** 400, "insert_text": "x"}),
        ("view", {"path": maya, "view_range": [1, -(10 ** 30)]}),
        ("create", {"path": deep, "file_text": "x"}),
        ("grep", {"pattern": "a", "max_results": 10 ** 100}),
    ]
    expected = ["insert_line is an integer of about 400 digits",
                "view_range[1] is an integer of about 30 digits",
                "path[0][0][0][0][0][0][0] nests more than 8 levels deep",
                "max_results is an integer of about 100 digits"]
    for results in await _both_transports(store_dir, calls):
        for result, words in zip(results, expected, strict=True):
            assert result.is_error
            assert words in _text(result)
    assert "x" not in (store_dir / "people" / "maya.md").read_text().splitlines()


async def _bug(path: str) -> str:
    """A tool with a bug in it: it raises on every call.

    Args:
        path: Any path.
    """
    raise RuntimeError(f"a bug reached with {path}")


async def test_a_tool_that_raises_is_named_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    toolset = ToolSet("buggy", [tool_spec(tool_flags(read_only=True)(_bug))])
    with caplog.at_level(logging.ERROR, logger="memdir.server"):
        with anyio.fail_after(30):
            async with Client(build_server(toolset)) as client:
                result = await client.call_tool("_bug", {"path": "/memories/x.md"})
    assert result.is_error
    text = _text(result)
    assert "Internal server error" not in text
    assert "RuntimeError: 'a bug reached with /memories/x.md'" in text
    assert "bug in memdir" in text
    logged = [r for r in caplog.records if r.name == "memdir.server._server"]
    assert logged and logged[0].exc_info is not None
    assert "_bug tool raised" in logged[0].getMessage()


def test_a_bug_is_logged_on_the_servers_stderr(store_dir: Path) -> None:
    """The log reaches a real server's standard error with its traceback (no handler set)."""
    script = (
        "import logging, asyncio\n"
        "from memdir.server._server import _LOG\n"
        "try:\n    raise RuntimeError('boom')\n"
        "except RuntimeError:\n    _LOG.exception('memdir serve: the x tool raised')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    assert "the x tool raised" in done.stderr
    assert "RuntimeError: boom" in done.stderr
