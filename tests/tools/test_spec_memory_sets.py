"""Tool declarations and the ToolSet.call dispatcher, on the memory tool sets."""

from __future__ import annotations

import json

import pytest

from memdir.store import Store
from memdir.tools import ToolSet, tool_spec
from memdir.tools._memory import folder_set, read_set, write_set


@pytest.fixture(params=["write", "read", "folder"])
def toolset(request: pytest.FixtureRequest, store: Store) -> ToolSet:
    build = {"write": write_set, "read": read_set, "folder": folder_set}[request.param]
    return build(store)


def test_every_tool_and_parameter_is_described(toolset: ToolSet) -> None:
    for info in toolset.infos():
        assert len(info["description"]) > 80, info["name"]
        params = info["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert params["properties"], info["name"]
        for name, schema in params["properties"].items():
            assert len(schema.get("description", "")) > 10, f"{info['name']}.{name}"
        assert set(params["required"]) <= set(params["properties"])
        json.dumps(info)  # serialisable as sent to a provider


def test_memory_parameter_names_match_anthropic(store: Store) -> None:
    props = {i["name"]: set(i["parameters"]["properties"]) for i in write_set(store).infos()}
    assert props["view"] == {"path", "view_range"}
    assert props["create"] == {"path", "file_text"}
    assert props["str_replace"] == {"path", "old_str", "new_str"}
    assert props["insert"] == {"path", "insert_line", "insert_text"}
    assert props["delete"] == {"path"}
    assert props["rename"] == {"old_path", "new_path"}
    assert {"pattern", "path", "max_results"} <= props["grep"]
    read = {i["name"]: i["parameters"] for i in read_set(store).infos()}
    assert read["section_read"]["properties"]["heading_path"]["type"] == "array"
    assert read["toc"]["required"] == ["path"]


def test_folder_rename_description_promises_no_edit(store: Store) -> None:
    rename = folder_set(store).tools["rename"]
    assert "never changing any content" in rename.description
    assert "frontmatter" in write_set(store).tools["rename"].description


def test_digest_is_stable_and_distinguishes_sets(store: Store) -> None:
    assert write_set(store).digest() == write_set(store).digest()
    assert write_set(store).digest() != folder_set(store).digest()


async def test_unknown_tool(toolset: ToolSet) -> None:
    result = await toolset.call("bash", {"command": "ls"})
    assert result.is_error and "no tool named 'bash'" in result.content
    assert "view" in result.content


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"path": "/memories"', "not valid JSON"),
        ('["/memories"]', "JSON object"),
        ("42", "JSON object"),
    ],
)
async def test_malformed_json_arguments(toolset: ToolSet, raw: str, message: str) -> None:
    result = await toolset.call("view", raw)
    assert result.is_error and message in result.content


async def test_json_string_arguments_work(toolset: ToolSet) -> None:
    result = await toolset.call("view", '{"path": "/memories"}')
    assert not result.is_error and "empty" in result.content


async def test_missing_and_extra_parameters(toolset: ToolSet) -> None:
    missing = await toolset.call("view", {})
    assert missing.is_error and "path: required but missing" in missing.content
    assert "Parameters: path, view_range (optional)" in missing.content
    extra = await toolset.call("view", {"path": "/memories", "recursive": True})
    assert extra.is_error and "recursive: unknown parameter" in extra.content
    empty = await toolset.call("view", None)
    assert empty.is_error and "required" in empty.content


async def test_wrong_types(store: Store) -> None:
    tools = write_set(store)
    result = await tools.call("insert", {"path": "/memories/a.md", "insert_line": "top",
                                         "insert_text": "x"})
    assert result.is_error and "insert_line" in result.content


def test_tool_spec_rejects_undocumented_functions() -> None:
    async def nodoc(path: str) -> str:
        return path

    with pytest.raises(TypeError, match="no docstring"):
        tool_spec(nodoc, read_only=True)

    async def undocumented_param(path: str) -> str:
        """Do a thing."""
        return path

    with pytest.raises(TypeError, match="not documented"):
        tool_spec(undocumented_param, read_only=True)

    def not_async(path: str) -> str:
        """Do a thing.

        Args:
            path: A path.
        """
        return path

    with pytest.raises(TypeError, match="async"):
        tool_spec(not_async, read_only=True)  # type: ignore[arg-type]
