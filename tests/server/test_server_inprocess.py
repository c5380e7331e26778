"""The MCP server object, driven in-process by the SDK's client (fast, no transport)."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from memdir.sample import build_sample_store
from memdir.server import build_server, is_loopback, tool_declarations
from memdir.store import Store
from memdir.tools import make_toolset


@pytest.fixture
def sample(tmp_path: Path) -> Store:
    return build_sample_store(tmp_path / "s")


def test_declarations_mirror_the_toolset(sample: Store) -> None:
    toolset = make_toolset("write", sample)
    declared = {t.name: t for t in tool_declarations(toolset)}
    assert list(declared) == list(toolset.tools)
    for name, spec in toolset.tools.items():
        tool = declared[name]
        assert tool.description == spec.description
        assert tool.input_schema == spec.parameters
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is spec.read_only
        if spec.read_only:
            assert tool.annotations.idempotent_hint is True
            assert tool.annotations.destructive_hint is None
        else:
            assert tool.annotations.destructive_hint is spec.destructive
            assert tool.annotations.idempotent_hint is None
    assert declared["delete"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert declared["create"].annotations.destructive_hint is False  # type: ignore[union-attr]


async def test_calls_go_through_the_toolset(sample: Store) -> None:
    toolset = make_toolset("read", sample)
    with anyio.fail_after(30):
        async with Client(build_server(toolset)) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == list(toolset.tools)
            args = {"pattern": "Jonah"}
            result = await client.call_tool("grep", args)
            direct = await toolset.call("grep", args)
            assert not result.is_error
            assert result.content[0].text == direct.content  # type: ignore[union-attr]
            wrong = await client.call_tool("view", {"path": "/memories/../secret.md"})
            assert wrong.is_error
            assert wrong.content[0].text.startswith("Error:")  # type: ignore[union-attr]


async def test_an_unknown_tool_is_a_protocol_error(sample: Store) -> None:
    # MCP: an unknown tool is JSON-RPC -32602, not a tool result with isError.
    toolset = make_toolset("read", sample)
    with anyio.fail_after(30):
        async with Client(build_server(toolset)) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("delete", {"path": "/memories/people/maya.md"})
    assert raised.value.code == types.INVALID_PARAMS == -32602
    assert "'delete'" in raised.value.message
    assert "view, grep, toc, section_read" in raised.value.message
    assert (sample.root / "people" / "maya.md").exists()


@pytest.mark.parametrize(
    ("host", "ok"),
    [("127.0.0.1", True), ("127.5.0.1", True), ("localhost", True), ("::1", True),
     ("[::1]", True), ("0.0.0.0", False), ("192.168.1.4", False), ("example.com", False),
     ("::", False)],
)
def test_is_loopback(host: str, ok: bool) -> None:
    assert is_loopback(host) is ok
