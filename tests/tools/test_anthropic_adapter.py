"""The Anthropic memory tool adapter, on tool_use blocks of the documented shape.

Most tests here run the memdir profile (memdir's own contract behind the memory
tool); the anthropic profile, the default, is compared with the SDK's reference
implementation in test_anthropic_differential.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from memdir.store import Store
from memdir.tools._spec import ToolError
from memdir.tools.anthropic import (
    MEMORY_TOOL,
    CreateCommand,
    MemoryToolAdapter,
    RenameCommand,
    ViewCommand,
    parse_command,
)

NOTE = "---\nname: prefs\ndescription: User preferences\n---\n# Prefs\nLikes tea.\n"


def block(command: str, use_id: str = "toolu_01", **fields: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": "memory",
            "input": {"command": command, **fields}}


@pytest.fixture
def adapter(store: Store) -> MemoryToolAdapter:
    return MemoryToolAdapter(store, profile="memdir")


async def run(adapter: MemoryToolAdapter, blk: dict[str, Any], *, error: bool = False) -> str:
    result = await adapter.handle(blk)
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == blk["id"]
    assert result["is_error"] is error, result["content"]
    assert isinstance(result["content"], str)
    return str(result["content"])


def test_declaration() -> None:
    assert MEMORY_TOOL == {"type": "memory_20250818", "name": "memory"}
    assert MemoryToolAdapter.declaration == MEMORY_TOOL


def test_the_anthropic_profile_is_the_default(store: Store) -> None:
    adapter = MemoryToolAdapter(store)
    assert adapter.profile == "anthropic"
    result = adapter.handle_sync(
        block("create", path="/memories/progress.md", file_text="# Todo\n")
    )
    assert result["content"] == "File created successfully at: /memories/progress.md"
    assert store.read("/memories/progress.md") == "# Todo\n"


async def test_every_command_round_trip(adapter: MemoryToolAdapter, store: Store) -> None:
    assert "empty" in await run(adapter, block("view", path="/memories"))
    assert "Created" in await run(
        adapter, block("create", path="/memories/prefs.md", file_text=NOTE)
    )
    text = await run(adapter, block("view", path="/memories/prefs.md", view_range=[5, 6]))
    assert text == "     5\t# Prefs\n     6\tLikes tea."
    await run(adapter, block("str_replace", path="/memories/prefs.md",
                             old_str="Likes tea.", new_str="Likes green tea."))
    await run(adapter, block("insert", path="/memories/prefs.md", insert_line=6,
                             insert_text="Dislikes coffee."))
    assert store.read("/memories/prefs.md").endswith("Likes green tea.\nDislikes coffee.\n")
    await run(adapter, block("rename", old_path="/memories/prefs.md",
                             new_path="/memories/user/preferences.md"))
    assert "name: preferences" in store.read("/memories/user/preferences.md")
    listing = await run(adapter, block("view", path="/memories"))
    assert "preferences.md" in listing and "User preferences" in listing
    assert "Deleted" in await run(adapter, block("delete", path="/memories/user"))
    assert store.files() == []


@pytest.mark.parametrize(
    ("blk", "message"),
    [
        (block("view", path="/memories/none.md"), "does not exist"),
        (block("view", path="/etc/passwd"), "outside the memory store"),
        (block("create", path="/memories/x.md", file_text="no header"), "frontmatter"),
        (block("str_replace", path="/memories/none.md", old_str="a", new_str="b"),
         "does not exist"),
        (block("insert", path="/memories/none.md", insert_line=0, insert_text="x"),
         "does not exist"),
        (block("delete", path="/memories"), "cannot be deleted"),
        (block("rename", old_path="/memories/a.md", new_path="/memories/b.md"), "does not exist"),
        (block("undo", path="/memories"), "Unknown memory command 'undo'"),
        (block("view"), "path is required"),
        (block("view", path="/memories", recursive=True), "recursive is not a parameter"),
        (block("insert", path="/memories/a.md", insert_line="end", insert_text="x"),
         "insert_line"),
        ({"type": "tool_use", "id": "t", "name": "memory", "input": "view /memories"},
         "must be an object"),
        ({"type": "tool_use", "id": "t", "name": "memory"}, "must be an object"),
    ],
)
async def test_errors_come_back_as_error_results(
    adapter: MemoryToolAdapter, blk: dict[str, Any], message: str
) -> None:
    text = await run(adapter, blk, error=True)
    assert text.startswith("Error: ") and message in text


async def test_edit_errors(adapter: MemoryToolAdapter, store: Store) -> None:
    store.write("/memories/prefs.md", NOTE + "Likes tea.\n")
    text = await run(adapter, block("str_replace", path="/memories/prefs.md",
                                    old_str="Likes tea.", new_str="x"), error=True)
    assert "lines 6, 7" in text
    text = await run(adapter, block("insert", path="/memories/prefs.md", insert_line=99,
                                    insert_text="x"), error=True)
    assert "between 0 and 7" in text
    text = await run(adapter, block("create", path="/memories/prefs.md", file_text=NOTE),
                     error=True)
    assert "already exists" in text


@pytest.mark.parametrize(
    "blk",
    [
        {"type": "text", "text": "hi"},
        {"type": "tool_use", "id": "t", "name": "bash", "input": {}},
        {"type": "tool_use", "name": "memory", "input": {"command": "view", "path": "/"}},
    ],
)
async def test_routing_mistakes_raise(adapter: MemoryToolAdapter, blk: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        await adapter.handle(blk)


def test_sync_wrapper(adapter: MemoryToolAdapter) -> None:
    result = adapter.handle_sync(block("create", path="/memories/prefs.md", file_text=NOTE))
    assert result == {"type": "tool_result", "tool_use_id": "toolu_01",
                      "content": "Created /memories/prefs.md (6 lines).", "is_error": False}


def test_objects_with_block_attributes_work(adapter: MemoryToolAdapter) -> None:
    class Block:
        type = "tool_use"
        id = "toolu_09"
        name = "memory"
        input = {"command": "view", "path": "/memories"}

    result = adapter.handle_sync(Block())
    assert result["tool_use_id"] == "toolu_09" and not result["is_error"]


def test_parse_command() -> None:
    assert parse_command({"command": "view", "path": "/memories"}) == ViewCommand(
        command="view", path="/memories"
    )
    assert isinstance(
        parse_command({"command": "create", "path": "/memories/a.md", "file_text": ""}),
        CreateCommand,
    )
    assert isinstance(
        parse_command({"command": "rename", "old_path": "a", "new_path": "b"}), RenameCommand
    )
    with pytest.raises(ToolError, match="old_path is required"):
        parse_command({"command": "rename", "new_path": "b"})


@pytest.mark.slow  # importing the SDK takes seconds
def test_shapes_agree_with_the_anthropic_sdk(adapter: MemoryToolAdapter) -> None:
    beta = pytest.importorskip("anthropic.types.beta")
    from pydantic import TypeAdapter

    inputs = [
        {"command": "view", "path": "/memories", "view_range": [1, 5]},
        {"command": "create", "path": "/memories/a.md", "file_text": "x"},
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "x", "new_str": "y"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "z"},
        {"command": "delete", "path": "/memories/a.md"},
        {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"},
    ]
    sdk_command = TypeAdapter(beta.BetaMemoryTool20250818Command)
    for data in inputs:
        ours = parse_command(data)
        theirs = sdk_command.validate_python(data)
        assert ours.model_dump(exclude_none=True) == theirs.model_dump(exclude_none=True)
    TypeAdapter(beta.BetaMemoryTool20250818Param).validate_python(MEMORY_TOOL)
    result = adapter.handle_sync(block("view", path="/memories"))
    checked = TypeAdapter(beta.BetaToolResultBlockParam).validate_python(result)
    assert checked["tool_use_id"] == "toolu_01"
    sdk_block = beta.BetaToolUseBlock(type="tool_use", id="toolu_02", name="memory",
                                      input={"command": "view", "path": "/memories"})
    answer = adapter.handle_sync(sdk_block)
    assert answer["tool_use_id"] == "toolu_02" and not answer["is_error"]
