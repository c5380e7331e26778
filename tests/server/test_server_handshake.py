"""The stdio server's opening, answered before the MCP SDK loads, is the SDK's own.

``memdir serve`` answers ``initialize`` and ``ping`` from its stdin feed while the
SDK loads, then hands every line to the SDK, which compares its own replies with
the early ones (a difference is logged). These tests hold the early replies to
the SDK's, byte for byte, for the openings clients send; the SDK's client and
the MCP Inspector run through the same path in test_server_subprocess.py and
test_inspector.py.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage
from serving import TIMEOUT

from memdir.sample import build_sample_store
from memdir.server import _transports

_CLIENT = {"name": "test", "version": "1"}
_FULL_PATH = "import sys; from memdir.cli._app import app; sys.argv[0] = 'memdir'; app()"
"""The command line without :func:`memdir.cli.main`'s early feed: the SDK answers all."""


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("handshake") / "store"
    build_sample_store(root)
    return root


def _initialize(request_id: int | str, version: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": _CLIENT,
                       **params}}


def _serve(argv: list[str], messages: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, input="".join(json.dumps(m) + "\n" for m in messages), capture_output=True,
        text=True, timeout=TIMEOUT * 3, check=False,
        env={**os.environ, "PYTHONWARNINGS": "ignore"})


def _discover(request_id: int, version: str) -> dict[str, Any]:
    """The probe the SDK's own client opens with (its ``auto`` mode)."""
    meta = "io.modelcontextprotocol/"
    return {"jsonrpc": "2.0", "id": request_id, "method": "server/discover",
            "params": {"_meta": {f"{meta}protocolVersion": version,
                                 f"{meta}clientInfo": _CLIENT,
                                 f"{meta}clientCapabilities": {}}}}


_OPENINGS = [
    [_initialize(1, "2025-06-18")],
    [_initialize("session 1", "2024-11-05", capabilities={"roots": {"listChanged": True},
                                                          "sampling": {}})],
    [_initialize(7, "1999-01-01")],  # unknown: the SDK offers its latest
    [_initialize(8, "2026-07-28")],  # a per-request revision, not reachable by initialize
    [{"jsonrpc": "2.0", "id": "p", "method": "ping"}, _initialize(9, "2025-11-25"),
     {"jsonrpc": "2.0", "method": "notifications/initialized"},
     {"jsonrpc": "2.0", "id": 10, "method": "ping", "params": {}}],
    [_discover(1, "2026-07-28")],
    [_discover(2, "2099-01-01")],  # not served: the SDK's error, after it loads
]


@pytest.mark.parametrize("messages", _OPENINGS, ids=["plain", "roots", "unknown", "modern",
                                                     "pings", "discover", "discover-unknown"])
def test_the_early_replies_are_the_sdks_byte_for_byte(store_dir: Path,
                                                      messages: list[dict[str, Any]]) -> None:
    fast = _serve([sys.executable, "-m", "memdir", "serve", str(store_dir)], messages)
    full = _serve([sys.executable, "-c", _FULL_PATH, "serve", str(store_dir)], messages)
    assert fast.returncode == 0 and full.returncode == 0, fast.stderr + full.stderr
    assert "differs from the SDK" not in fast.stderr, fast.stderr
    assert sorted(fast.stdout.splitlines()) == sorted(full.stdout.splitlines())
    assert len(fast.stdout.splitlines()) == sum("id" in m for m in messages)


def test_the_opening_is_answered_without_loading_the_sdk() -> None:
    script = (
        "import json, os, sys\n"
        "from memdir.server._handshake import StdinFeed\n"
        "inner, outer = os.pipe(); back, reply = os.pipe()\n"
        "StdinFeed(inner, reply).start()\n"
        f"os.write(outer, json.dumps({_initialize(1, '2025-06-18')!r}).encode() + b'\\n')\n"
        "answer = json.loads(os.read(back, 1 << 16))\n"
        "assert answer['result']['serverInfo']['name'] == 'memdir', answer\n"
        "heavy = {'mcp', 'mcp_types', 'pydantic', 'typer', 'memdir.tools'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr


def test_lines_reach_the_sdk_in_order_after_the_early_answers(store_dir: Path) -> None:
    messages = [
        _initialize(1, "2025-06-18"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "view", "arguments": {"path": "/memories/people/maya.md"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "grep", "arguments": {"pattern": "Maya"}}},
    ]
    done = _serve([sys.executable, "-m", "memdir", "serve", str(store_dir)], messages)
    assert done.returncode == 0, done.stderr
    replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert set(replies) == {1, 2, 3, 4}, done.stdout
    assert "Maya" in replies[2]["result"]["content"][0]["text"]
    assert "matching line(s)" in replies[4]["result"]["content"][0]["text"]
    assert "differs from the SDK" not in done.stderr


def test_an_early_reply_unlike_the_sdks_is_logged_and_not_sent_twice(
        caplog: pytest.LogCaptureFixture) -> None:
    sent: list[Any] = []

    class Sink:
        async def send(self, item: Any) -> None:
            sent.append(item)

    answered = _transports._Answered(1.0)
    early = {"1": '{"jsonrpc":"2.0","id":1,"result":{"other":true}}'}
    noted = _transports._NotedOutput(Sink(), answered, early)
    reply = SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=1, result={}))
    other = SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=2, result={}))
    with caplog.at_level(logging.WARNING, logger="memdir.server._transports"):
        anyio.run(noted.send, reply)
        anyio.run(noted.send, other)
    assert sent == [other]
    assert "differs from the SDK" in caplog.text and '"other":true' in caplog.text
    assert early == {}
