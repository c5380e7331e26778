"""``memdir serve`` under attack and under load: real server processes, the SDK's own client."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from serving import BOMB, TIMEOUT, http_serve, plant_bomb, serve_command
from typer.testing import CliRunner

from interrupting import default_sigint
from memdir.cli import app
from memdir.sample import build_sample_store
from memdir.server import allowed_hosts

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "probe", "version": "0"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}
# The bomb must outlast the other session's request by far: give it a long limit.
SLOW = {"MEMDIR_TOOL_TIME_LIMIT": "30"}


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    build_sample_store(tmp_path / "s")
    return tmp_path / "s"


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def _can_bind(host: str) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family) as sock:
            sock.bind((host, 0))
    except OSError:
        return False
    return True


def test_allowed_hosts_follow_the_bind_address() -> None:
    assert allowed_hosts("127.0.0.2", 9000) == ["127.0.0.2:9000"]
    assert allowed_hosts("127.0.0.1", 9000) == ["127.0.0.1:9000", "localhost:9000", "[::1]:9000"]
    assert allowed_hosts("[::1]", 9000) == ["[::1]:9000", "127.0.0.1:9000", "localhost:9000"]
    assert allowed_hosts("::1", 80)[-3:] == ["[::1]", "127.0.0.1", "localhost"]  # type: ignore[index]
    assert allowed_hosts("0.0.0.0", 9000) is None


async def test_rebinding_probe_on_127_0_0_2_is_refused(store_dir: Path) -> None:
    if not _can_bind("127.0.0.2"):
        pytest.skip("127.0.0.2 cannot be bound here")
    target = store_dir / "people" / "maya.md"
    with http_serve(store_dir, "--write", host="127.0.0.2") as (_, port):
        url = f"http://127.0.0.2:{port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            foreign = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
            refused = await http.post(url, json=INIT, headers={**ACCEPT, **foreign})
            assert refused.status_code == 421
            bad_origin = {"Origin": "http://evil.example"}
            refused = await http.post(url, json=INIT, headers={**ACCEPT, **bad_origin})
            assert refused.status_code == 403
            other_port = {"Host": f"127.0.0.2:{port + 1}"}
            refused = await http.post(url, json=INIT, headers={**ACCEPT, **other_port})
            assert refused.status_code == 421
            async with Client(streamable_http_client(url, http_client=http)) as client:
                ok = await client.call_tool("view", {"path": "/memories/people"})
                assert not ok.is_error
    assert target.exists()


async def test_ipv6_loopback_in_brackets(store_dir: Path) -> None:
    if not _can_bind("::1"):
        pytest.skip("no IPv6 loopback here")
    with http_serve(store_dir, host="[::1]") as (proc, port):
        url = f"http://[::1]:{port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                names = [t.name for t in (await client.list_tools()).tools]
        assert "grep" in names
        proc.terminate()
        assert f"http://[::1]:{port}/mcp" in proc.communicate(timeout=20)[1]


def test_allow_remote_needs_a_token(store_dir: Path) -> None:
    result = CliRunner().invoke(
        app, ["serve", str(store_dir), "--transport", "http", "--host", "0.0.0.0",
              "--allow-remote"], env={"MEMDIR_MCP_TOKEN": ""},
    )
    assert result.exit_code == 2
    assert "token is required" in result.stderr
    assert "MEMDIR_MCP_TOKEN" in result.stderr


async def test_a_client_without_the_token_is_told_what_to_send(store_dir: Path) -> None:
    with http_serve(store_dir, "--token", "s3cret") as (_, port):
        url = f"http://127.0.0.1:{port}/mcp"
        with anyio.fail_after(TIMEOUT):
            async with httpx2.AsyncClient(timeout=30) as http:
                with pytest.raises(BaseException) as caught:
                    async with Client(streamable_http_client(url, http_client=http)):
                        pass
    errors = _leaves(caught.value)
    assert any(isinstance(e, MCPError) and "bearer token is missing" in str(e) for e in errors)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


async def test_other_sessions_are_answered_while_a_bomb_runs(store_dir: Path) -> None:
    plant_bomb(store_dir)
    with http_serve(store_dir, env=SLOW) as (_, port):
        url = f"http://127.0.0.1:{port}/mcp"
        with anyio.fail_after(TIMEOUT):
            async with httpx2.AsyncClient(timeout=60) as one, \
                    httpx2.AsyncClient(timeout=60) as two:
                async with Client(streamable_http_client(url, http_client=one)) as bomber, \
                        Client(streamable_http_client(url, http_client=two)) as other:
                    finished: list[str] = []

                    async def bomb() -> None:
                        await bomber.call_tool("grep", {"pattern": BOMB})
                        finished.append("bomb")

                    async with anyio.create_task_group() as group:
                        group.start_soon(bomb)
                        await anyio.sleep(0.5)
                        view = await other.call_tool("view", {"path": "/memories/people"})
                        finished.append("view")
                        assert not view.is_error
                        group.cancel_scope.cancel()
                    assert finished == ["view"]


def test_sigterm_stops_the_server_during_a_bomb(store_dir: Path) -> None:
    plant_bomb(store_dir)
    with http_serve(store_dir, env=SLOW) as (proc, port):
        url = f"http://127.0.0.1:{port}/mcp"

        async def start_bomb() -> None:
            async with httpx2.AsyncClient(timeout=60) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    with anyio.move_on_after(1.0):
                        await client.call_tool("grep", {"pattern": BOMB})

        anyio.run(start_bomb)
        proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        proc.wait(timeout=20)
        assert time.monotonic() - started < 20


async def test_stdio_answers_a_second_request_during_a_bomb(store_dir: Path) -> None:
    plant_bomb(store_dir)
    command = serve_command(store_dir)
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={**os.environ, **SLOW})
    with anyio.fail_after(TIMEOUT):
        async with Client(params, read_timeout_seconds=TIMEOUT) as client:
            finished: list[str] = []

            async def bomb() -> None:
                await client.call_tool("grep", {"pattern": BOMB})
                finished.append("bomb")

            async with anyio.create_task_group() as group:
                group.start_soon(bomb)
                await anyio.sleep(0.5)
                view = await client.call_tool("view", {"path": "/memories/people/maya.md"})
                finished.append("view")
                assert "Maya" in _text(view)
                group.cancel_scope.cancel()
            assert finished == ["view"]


@pytest.mark.parametrize("after", [0.0, 0.1, 0.2, 0.4, 0.8])
def test_ctrl_c_stops_stdio_at_once_with_stdin_a_pipe(store_dir: Path, after: float) -> None:
    # The ping is answered before the SDK and the command line load (cli/_fastserve.py):
    # a Ctrl-C at any moment of that loading, or once serving, exits 130 and says so.
    # (Landing inside typer's parsing, it once ended the process silently or by SIGINT.)
    proc = subprocess.Popen(serve_command(store_dir), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        proc.stdin.flush()
        assert '"id":1' in proc.stdout.readline()  # answered, and stdin stays open
        time.sleep(after)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 130
        assert "stopped." in proc.communicate(timeout=10)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
