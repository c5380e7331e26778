"""The malformed calls of issue 19 by name: each comes back as a tool error saying what to send.

Deep JSON, integers past Python's 4,300-digit conversion limit, lone surrogates
in the Anthropic set's texts and in the shell's command, NaN, non-object
arguments: each of these raised out of ``ToolSet.call`` or the adapter before.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memdir.store import Store
from memdir.tools import SandboxUnavailableError, make_toolset
from memdir.tools.anthropic import MemoryToolAdapter

MAYA = "/memories/people/maya.md"
DEEP_TEXT = '{"path": ' + "[" * 100_000 + "]" * 100_000 + "}"
HUGE = "9" * 5_000
MAX_DEPTH = 8  # memdir.tools._arguments' limits, written out so this file runs on older code
MAX_VALUES = 10_000


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def call(store: Store, toolset: str, tool: str, arguments: Any) -> str:
    result = asyncio.run(make_toolset(toolset, store).call(tool, arguments))
    assert result.is_error, result.content
    assert result.content.startswith(f"Error: invalid arguments for {tool}: ")
    return result.content


@pytest.mark.parametrize("arguments", [DEEP_TEXT, "[" * 100_000 + "]" * 100_000])
def test_json_100000_deep(fuzz_store: Store, arguments: str) -> None:
    text = call(fuzz_store, "read", "view", arguments)
    assert "nested too deeply" in text
    assert "flat list" in text


def test_nesting_past_the_limit_as_a_mapping(fuzz_store: Store) -> None:
    text = call(fuzz_store, "write", "create", {"path": _deep(100_000), "file_text": "x"})
    assert f"path{'[0]' * (MAX_DEPTH - 1)} nests more than {MAX_DEPTH} levels deep" in text


@pytest.mark.parametrize("arguments", [
    '{"path": "/memories/people/maya.md", "view_range": [1, ' + HUGE + "]}",
    {"path": MAYA, "view_range": [1, 10 ** 5_000]},
])
def test_integer_of_5000_digits(fuzz_store: Store, arguments: Any) -> None:
    text = call(fuzz_store, "read", "view", arguments)
    assert "view_range[1] is an integer of" in text
    assert "5,000 digits" in text
    assert "below 2**63" in text


@pytest.mark.parametrize(("toolset", "tool", "key"), [
    ("write", "insert", "insert_line"), ("anthropic", "insert", "insert_line"),
    ("bm25", "search", "k"), ("read", "grep", "max_results"),
])
def test_huge_integers_in_every_integer_parameter(fuzz_store: Store, toolset: str, tool: str,
                                                  key: str) -> None:
    arguments = {"path": MAYA, "pattern": "a", "query": "maya", "insert_text": "x",
                 key: -(10 ** 4_400)}
    spec = make_toolset(toolset, fuzz_store).tools[tool]
    arguments = {k: v for k, v in arguments.items() if k in spec.parameters["properties"]}
    assert f"{key} is an integer of about 4,400 digits" in call(fuzz_store, toolset, tool,
                                                               arguments)


@pytest.mark.parametrize(("tool", "arguments", "where"), [
    ("create", {"path": "/memories/a.txt", "file_text": "ok \ud800"}, "file_text"),
    ("insert", {"path": MAYA, "insert_line": 1, "insert_text": "\udfff"}, "insert_text"),
    ("str_replace", {"path": MAYA, "old_str": "Maya", "new_str": "x\ud83d"}, "new_str"),
    ("create", '{"path": "/memories/b.txt", "file_text": "\\ud800"}', "file_text"),
])
def test_lone_surrogate_in_anthropic_texts(fuzz_store: Store, tool: str, arguments: Any,
                                           where: str) -> None:
    text = call(fuzz_store, "anthropic", tool, arguments)
    assert f"{where} holds a lone surrogate (U+D" in text
    assert "\\ud83d\\ude00" in text  # shows the escape done right
    text.encode("utf-8")  # the message itself can be sent


def test_lone_surrogate_in_the_shell_command(fuzz_store: Store) -> None:
    try:
        make_toolset("shell", fuzz_store)
    except SandboxUnavailableError as exc:
        pytest.skip(f"no confinement here: {exc}")
    text = call(fuzz_store, "shell", "bash", {"command": "echo \ud800"})
    assert "command holds a lone surrogate (U+D800) at character 5" in text


@pytest.mark.parametrize(("arguments", "expected"), [
    ('{"path": NaN}', "path is NaN, which is not JSON"),
    ('{"path": "/memories", "view_range": [1, -Infinity]}', "view_range[1] is -Infinity"),
    ({"path": MAYA, "view_range": [float("nan"), 3]}, "view_range[0] is nan"),
    ('{"path": "/memories", "view_range": [1, 1e999]}', "view_range[1] is inf"),
    (["/memories"], "must be a JSON object of parameter names to values, not list"),
    ("[1, 2]", "must be a JSON object of parameter names to values, not an array"),
    ({1: "/memories"}, "parameter names must be strings, not int"),
    ({"\ud800": 1}, "the parameter name '\\ud800' holds a lone surrogate"),
    ({"path": "/memories", "view_range": list(range(MAX_VALUES + 1))},
     f"more than {MAX_VALUES:,} values"),
])
def test_values_no_tool_takes(fuzz_store: Store, arguments: Any, expected: str) -> None:
    assert expected in call(fuzz_store, "read", "view", arguments)


def test_an_unknown_huge_key_is_named_briefly(fuzz_store: Store) -> None:
    text = call(fuzz_store, "read", "view", {"path": "/memories", "k" * 100_000: 1})
    assert "unknown parameter" in text
    assert "(100,000 characters)" in text
    assert len(text) < 1_000


@pytest.mark.parametrize("profile", ["anthropic", "memdir"])
@pytest.mark.parametrize("data", [
    {"command": "create", "path": "/memories/a.md", "file_text": "\ud800"},
    {"command": "insert", "path": MAYA, "insert_line": 10 ** 5_000, "insert_text": "x"},
    {"command": "view", "path": _deep(100_000)},
    {"command": _deep(100_000), "path": "/memories"},
    {"command": "x" * 1_000_000},
])
def test_adapter_refuses_what_no_command_takes(fuzz_store: Store, profile: str,
                                               data: dict[str, Any]) -> None:
    adapter = MemoryToolAdapter(fuzz_store, profile=profile)  # type: ignore[arg-type]
    block = {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": data}
    result = adapter.handle_sync(block)
    assert result["is_error"] is True
    assert "memory command" in result["content"]
    assert len(result["content"]) < 1_000


def test_memdir_tool_reads_a_call_as_toolset_call_does(fuzz_store: Store) -> None:
    from typer.testing import CliRunner

    from memdir.cli import app

    runner = CliRunner()
    deep = '{"name": "view", "arguments": {"path": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    done = runner.invoke(app, ["tool", str(fuzz_store.root), "-"], input=deep)
    assert done.exit_code == 2, done.output
    assert "the call is nested too deeply to be read" in done.stderr
    huge = '{"name": "view", "arguments": {"path": "/memories", "view_range": [1, ' + HUGE + "]}}"
    done = runner.invoke(app, ["tool", str(fuzz_store.root), huge])
    assert "view_range[1] is an integer of 5,000 digits" in done.stdout
