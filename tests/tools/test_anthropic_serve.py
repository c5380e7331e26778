"""The anthropic profile for function calling and MCP: the ``anthropic`` tool set.

Function calling goes through ToolSet.call; MCP through ``memdir serve --profile
anthropic`` in a real subprocess with the official Python client over stdio.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from memdir.store import Store
from memdir.tools import make_toolset
from memdir.tools.anthropic import anthropic_set

TIMEOUT = 120


async def test_function_calls_follow_the_reference(store: Store) -> None:
    tools = make_toolset("anthropic", store)
    assert list(tools.tools) == ["view", "create", "str_replace", "insert", "delete", "rename"]
    created = await tools.call("create", {"path": "/memories/notes.xml", "file_text": "<a/>\n"})
    assert created.content == "File created successfully at: /memories/notes.xml"
    view = await tools.call("view", {"path": "/memories/notes.xml", "view_range": [1, 50]})
    assert view.content == ("Here's the content of /memories/notes.xml with line numbers:\n"
                         "     1\t<a/>\n     2\t")
    again = await tools.call("create", {"path": "/memories/notes.xml", "file_text": "x"})
    assert again.is_error and again.content.endswith("File /memories/notes.xml already exists")
    assert [spec.name for spec in anthropic_set(store, read_only=True).tools.values()] == ["view"]


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.slow  # starts a server process
async def test_memdir_serve_profile_anthropic_over_stdio(tmp_path: Path) -> None:
    root = tmp_path / "memories"
    Store(root, create=True)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "serve", str(root), "--profile", "anthropic", "--write"],
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params, read_timeout_seconds=TIMEOUT) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"view", "create", "str_replace", "insert", "delete", "rename"}
            assert tools["delete"].annotations.destructive_hint is True  # type: ignore[union-attr]
            made = await client.call_tool(
                "create", {"path": "/memories/progress.md", "file_text": "- [ ] step one\n"}
            )
            assert _text(made) == "File created successfully at: /memories/progress.md"
            edit = await client.call_tool("str_replace", {
                "path": "/memories/progress.md", "old_str": "[ ]", "new_str": "[x]"})
            assert _text(edit).startswith("The memory file has been edited.")
            moved = await client.call_tool("rename", {
                "old_path": "/memories/progress.md", "new_path": "/memories/done/progress.md"})
            assert not moved.is_error
            listing = _text(await client.call_tool("view", {"path": "/memories"}))
            assert listing.splitlines()[0] == (
                "Here're the files and directories up to 2 levels deep in /memories, "
                "excluding hidden items:")
            assert listing.splitlines()[-1] == "15B\t/memories/done/progress.md"
            missing = await client.call_tool("view", {"path": "/memories/nope"})
            assert missing.is_error
            assert _text(missing).endswith(
                "The path /memories/nope does not exist. Please provide a valid path.")
    assert (root / "done" / "progress.md").read_text() == "- [x] step one\n"
