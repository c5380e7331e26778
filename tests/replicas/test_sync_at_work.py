"""Syncing where agents work: the Syncer of the Python API, ``serve --sync`` (stdio, HTTP),
``ingest --sync``; every commit names the replica and who wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from inspect_ai.model import GenerateConfig, ModelAPI, modelapi
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from memdir.cli import app
from memdir.config import get_settings
from memdir.store import Store
from memdir.store.replica import Replica, commits
from memdir.store.syncer import Syncer
from scripted import calls, text

from .conftest import free_port, git, make_replica

NOTE = "---\nname: note\ndescription: A note\n---\nwritten by an agent\n"
TIMEOUT = 120


def _remote_files(remote: Path) -> set[str]:
    if not git("for-each-ref", "refs/heads/main", cwd=remote).strip():
        return set()  # nothing pushed yet
    return set(git("ls-tree", "-r", "--name-only", "main", cwd=remote).split())


def _wait(condition: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_the_syncer_batches_writes_and_brings_in_others(tmp_path: Path, remote: Path) -> None:
    a = make_replica(tmp_path, "laptop", str(remote))
    other = make_replica(tmp_path, "server", str(remote))
    reports: list[object] = []
    syncer = Syncer(a, interval=1.0, delay=0.3, max_delay=2.0, writer="importer",
                    on_report=reports.append)
    with syncer:
        for n in range(5):
            a.store.create(f"/memories/n{n}.md", NOTE.replace("name: note", f"name: n{n}"))
        _wait(lambda: {f"n{n}.md" for n in range(5)} <= _remote_files(remote))
        writes = [c for c in commits(a.history) if c.writers == ("importer",)]
        assert len(writes) == 1  # five writes, one batched snapshot
        other.store.create("/memories/from-server.md", NOTE.replace("note", "from-server"))
        other.sync(writers=["agent-s"])
        _wait(lambda: a.store.exists("/memories/from-server.md"))  # the interval sync
        a.store.create("/memories/last.md", NOTE.replace("name: note", "name: last"))
    assert "last.md" in _remote_files(remote)  # leaving the block ran a last sync
    assert syncer.syncs >= 3 and all(getattr(r, "ok", False) for r in reports)


async def test_serve_sync_over_stdio(tmp_path: Path, remote: Path) -> None:
    seed = make_replica(tmp_path, "seed", str(remote))
    seed.store.create("/memories/seeded.md", NOTE.replace("name: note", "name: seeded"))
    seed.sync()
    served, _ = Replica.clone(str(remote), tmp_path / "served", name="desk")
    seed.store.create("/memories/later.md", NOTE.replace("name: note", "name: later"))
    seed.sync()  # only the server's start-up sync brings this in
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "serve", str(served.root), "--write", "--sync",
              "--sync-interval", "30", "--writer", "claude-desktop"])
    with anyio.fail_after(TIMEOUT):
        async with Client(params, read_timeout_seconds=TIMEOUT) as client:
            listing = await client.call_tool("view", {"path": "/memories"})
            block = listing.content[0]
            assert isinstance(block, types.TextContent) and "later.md" in block.text
            made = await client.call_tool("create", {"path": "/memories/note.md",
                                                     "file_text": NOTE})
            assert not made.is_error
            await anyio.to_thread.run_sync(
                lambda: _wait(lambda: "note.md" in _remote_files(remote)))
    log = commits(Replica(Store(remote.parent / "served")).history)
    assert any(c.replica == "desk" and c.writers == ("claude-desktop",) for c in log)


async def test_serve_sync_over_http_stops_with_a_last_sync(tmp_path: Path,
                                                         remote: Path) -> None:
    served = make_replica(tmp_path, "web", str(remote))
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "serve", str(served.root), "--write", "--sync",
         "--sync-interval", "600", "--transport", "http", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        await anyio.to_thread.run_sync(lambda: _wait(lambda: _listening(port), TIMEOUT))
        with anyio.fail_after(TIMEOUT):
            async with httpx2.AsyncClient(timeout=30) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, read_timeout_seconds=TIMEOUT) as client:
                    made = await client.call_tool("create", {"path": "/memories/note.md",
                                                             "file_text": NOTE})
                    assert not made.is_error
    finally:
        proc.terminate()  # before the batch delay is over: the exit sync carries it
        _, err = proc.communicate(timeout=60)
    assert "note.md" in _remote_files(remote), err
    assert "synced with" in err and proc.returncode == 0


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


_CONFIG = GenerateConfig()


class _IngestAPI(ModelAPI):
    """A provider that files one note per chunk, then says so."""

    def __init__(self, model_name: str, base_url: str | None = None,
                 api_key: str | None = None, config: GenerateConfig = _CONFIG,
                 **kwargs: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        if input[-1].role == "tool":
            return text("Filed it.")
        return calls(("create", {"path": "/memories/note.md", "file_text": NOTE}))

    def max_tokens(self) -> int | None:
        return None


@modelapi(name="replicascript")
def _ingest_api() -> type[ModelAPI]:
    return _IngestAPI


def test_ingest_sync_sends_each_chunk(tmp_path: Path, remote: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMDIR_MODEL", raising=False)
    get_settings.cache_clear()
    target = make_replica(tmp_path, "ingester", str(remote))
    talk = tmp_path / "talk.json"
    talk.write_text(json.dumps({"speakers": ["Ana"], "sessions": [
        {"id": 1, "date": "2024-01-01", "turns": [{"speaker": "Ana", "text": "I weave."}]}]}))
    result = CliRunner().invoke(app, ["ingest", str(target.root), str(talk), "--model",
                                      "replicascript/ok", "--sync"])
    assert result.exit_code == 0, result.output
    assert "note.md" in _remote_files(remote)
    assert any(c.writers == ("ingest replicascript/ok",) for c in commits(target.history))
    unsynced = Store(tmp_path / "plain", create=True)
    refused = CliRunner().invoke(app, ["ingest", str(unsynced.root), str(talk), "--model",
                                       "replicascript/ok", "--sync"])
    assert refused.exit_code == 2 and "needs a remote" in refused.output
    assert os.listdir(unsynced.root) == [".memdir"]
