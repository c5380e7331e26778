"""A running server sees an edit made by another process before its next answer.

The edit is the hardest kind to notice: made in place by another process, the
file keeps its inode and size, and its modification time is put back to the
nanosecond with ``os.utime``. Only the kernel's change feed (or the inode's
change time, which cannot be set back) gives it away. The server is a real
``memdir serve --set bm25`` subprocess, reached with the MCP SDK's own client
over stdio and over HTTP; both ranked ``search`` and ``grep`` must see the edit
on the very next call.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from serving import TIMEOUT, http_serve

OLD = "the quarry by the river holds granite"
NEW = "the quarry by the river holds zircons"
"""Same length as ``OLD``: the edit keeps the file's size."""
assert len(OLD) == len(NEW)

EDIT_IN_PLACE = r"""
import os, sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
before = os.stat(path)
with open(path, "r+b") as handle:
    data = handle.read()
    at = data.index(old)
    handle.seek(at)
    handle.write(new)
os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
after = os.stat(path)
assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
    before.st_ino, before.st_size, before.st_mtime_ns), "the edit changed the fingerprint"
"""


def _store(root: Path) -> Path:
    root.mkdir()
    for name, body in [
        ("rocks", f"# Rocks\n\n{OLD}.\n"),
        ("trees", "# Trees\n\nOaks and birches grow on the hill.\n"),
        ("birds", "# Birds\n\nHerons fish in the river at dawn.\n"),
    ]:
        (root / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: Notes on {name}\n---\n{body}", encoding="utf-8"
        )
    return root


def _edit_elsewhere(path: Path) -> None:
    """Edit ``path`` in place from another process, fingerprint (size, mtime) kept."""
    subprocess.run([sys.executable, "-c", EDIT_IN_PLACE, str(path), OLD, NEW], check=True,
                   timeout=TIMEOUT)
    assert NEW in path.read_text(encoding="utf-8")


def _text(result: types.CallToolResult) -> str:
    assert not result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def _check_fresh(client: Client, store: Path) -> None:
    tools = {t.name for t in (await client.list_tools()).tools}
    assert {"search", "grep"} <= tools
    before = _text(await client.call_tool("search", {"query": "zircons"}))
    assert "No file" in before
    assert "No lines match" in _text(await client.call_tool("grep", {"pattern": "zircons"}))
    # both have read the files once: the search index and grep's text cache are built
    assert "/memories/rocks.md" in _text(await client.call_tool("search", {"query": "granite"}))

    _edit_elsewhere(store / "rocks.md")

    after = _text(await client.call_tool("search", {"query": "zircons"}))
    assert "1. /memories/rocks.md (score" in after
    assert "zircons" in after  # the best line shown is the new one
    assert "No file" in _text(await client.call_tool("search", {"query": "granite"}))
    grep = _text(await client.call_tool("grep", {"pattern": "zircons"}))
    assert f"/memories/rocks.md:7: {NEW}." in grep
    assert "No lines match" in _text(await client.call_tool("grep", {"pattern": "granite"}))


async def test_stdio_server_sees_an_edit_that_kept_size_and_mtime(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memdir", "serve", str(store), "--set", "bm25"],
        env=dict(os.environ),
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params, read_timeout_seconds=TIMEOUT) as client:
            await _check_fresh(client, store)


async def test_http_server_sees_an_edit_that_kept_size_and_mtime(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    with http_serve(store, "--set", "bm25") as (_proc, port):
        with anyio.fail_after(TIMEOUT):
            async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
                url = f"http://127.0.0.1:{port}/mcp"
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    await _check_fresh(client, store)


@pytest.mark.parametrize("flags", [("--write",), ("--profile", "anthropic")])
def test_set_goes_alone(tmp_path: Path, flags: tuple[str, ...]) -> None:
    store = _store(tmp_path / "s")
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "serve", str(store), "--set", "bm25", *flags],
        capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "--set" in done.stderr


def test_unknown_set_is_refused_with_the_names(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "serve", str(store), "--set", "nope"],
        capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "bm25" in done.stderr
