"""Round trips with the SDK's client against ``memdir serve`` in a real subprocess."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from serving import TIMEOUT, http_serve
from typer.testing import CliRunner

from memdir.cli import app
from memdir.sample import build_sample_store

NEW_FILE = "---\nname: zoe\ndescription: Zoe, a new friend\n---\n# Zoe\n"


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    build_sample_store(tmp_path / "s")
    return tmp_path / "s"


def _stdio(store_dir: Path, *flags: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memdir", "serve", str(store_dir), *flags]
    )
    return Client(params, read_timeout_seconds=TIMEOUT)


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_stdio_read_set(store_dir: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with _stdio(store_dir) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"view", "grep", "toc", "section_read"}
            for tool in tools.values():
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is True
                assert tool.input_schema["type"] == "object"
            assert tools["grep"].input_schema["required"] == ["pattern"]

            view = await client.call_tool("view", {"path": "/memories/people/theo.md"})
            assert not view.is_error
            assert "\tname: theo" in _text(view)
            grep = await client.call_tool("grep", {"pattern": "Biscuit"})
            assert "/memories/people/maya.md:" in _text(grep)

            missing = await client.call_tool("view", {"path": "/memories/nobody.md"})
            assert missing.is_error
            assert "does not exist" in _text(missing)
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("create", {"path": "/memories/z.md", "file_text": "x"})
            assert unknown.value.code == types.INVALID_PARAMS
            assert "'create'" in unknown.value.message
            assert "view, grep, toc, section_read" in unknown.value.message
    assert not (store_dir / "z.md").exists()


async def test_stdio_write_set(store_dir: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with _stdio(store_dir, "--write") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["delete"].annotations.destructive_hint is True  # type: ignore[union-attr]
            assert tools["create"].annotations.read_only_hint is False  # type: ignore[union-attr]
            args = {"path": "/memories/people/zoe.md", "file_text": NEW_FILE}
            created = await client.call_tool("create", args)
            assert not created.is_error, _text(created)
            again = await client.call_tool("create", args)
            assert again.is_error
    assert (store_dir / "people" / "zoe.md").read_text() == NEW_FILE


@pytest.fixture
def http_server(store_dir: Path) -> Iterator[tuple[str, str]]:
    token = "test-token-123"
    with http_serve(store_dir, "--token", token) as (_, port):
        yield f"http://127.0.0.1:{port}/mcp", token


async def test_http_requires_the_token(http_server: tuple[str, str]) -> None:
    url, token = http_server
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient(timeout=30) as http:
            # 403, not 401: a 401 makes OAuth-aware clients start a flow a fixed token
            # cannot finish. The body is a JSON-RPC error, which clients show.
            bare = await http.post(url, json=request)
            assert bare.status_code == 403
            assert "bearer token is missing" in bare.json()["error"]["message"]
            wrong = await http.post(url, json=request, headers={"Authorization": "Bearer no"})
            assert wrong.status_code == 403
            assert "bearer token is wrong" in wrong.json()["error"]["message"]
            for probe in ("oauth-protected-resource/mcp", "oauth-authorization-server"):
                meta = await http.get(url.replace("/mcp", f"/.well-known/{probe}"))
                assert meta.status_code == 404
                assert "fixed bearer token" in meta.json()["error_description"]

        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, read_timeout_seconds=TIMEOUT) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert names == ["view", "grep", "toc", "section_read"]
                toc = await client.call_tool("toc", {"path": "/memories/people/maya.md"})
                assert not toc.is_error
                assert "## Home" in _text(toc)
                with pytest.raises(MCPError) as unknown:
                    await client.call_tool("delete", {"path": "/memories/people/maya.md"})
                assert unknown.value.code == types.INVALID_PARAMS


def test_http_refuses_a_public_address(store_dir: Path) -> None:
    result = CliRunner().invoke(
        app, ["serve", str(store_dir), "--transport", "http", "--host", "0.0.0.0"]
    )
    assert result.exit_code == 2
    assert "--allow-remote" in result.stderr


def test_http_on_a_busy_port_says_so(store_dir: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = CliRunner().invoke(
            app, ["serve", str(store_dir), "--transport", "http", "--port", str(port)]
        )
    assert result.exit_code == 2
    assert "cannot listen" in result.stderr
    assert "--port" in result.stderr


def test_requests_piped_before_stdin_closes_are_all_answered(store_dir: Path) -> None:
    """A client that writes its requests and closes stdin gets every answer."""
    import json
    import subprocess

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "pipe", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "grep", "arguments": {"pattern": "Leeds"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "serve", str(store_dir)],
        input="".join(json.dumps(m) + "\n" for m in messages), capture_output=True,
        text=True, timeout=TIMEOUT * 3, check=False)
    assert done.returncode == 0, done.stderr
    replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert set(replies) == {1, 2, 3}, done.stdout
    assert "error" not in replies[2], replies[2]
    assert "matching line(s)" in replies[2]["result"]["content"][0]["text"]
    assert any(t["name"] == "grep" for t in replies[3]["result"]["tools"])
