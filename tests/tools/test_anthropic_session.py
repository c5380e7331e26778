"""A Claude-shaped session end to end: the real Anthropic SDK client, memdir as its memory.

The SDK's tool runner (``client.beta.messages.tool_runner``) talks to a mock HTTP
transport that plays scripted Messages API replies holding ``memory`` tool_use
blocks, the way Claude uses the tool: a progress file without frontmatter,
user_preferences.md, notes.xml, views with loose ranges. The runner executes each
call through a memory tool backed by :class:`memdir.tools.anthropic.MemoryToolAdapter`
(the SDK's own memory-tool base class, as in its memory example) and sends the
results back; the test checks the requests it sent and the store afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from anthropic import Anthropic
from anthropic.lib.tools._beta_functions import ToolError
from anthropic.tools.memory import BetaAbstractMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from memdir.store import Store
from memdir.tools.anthropic import MemoryToolAdapter

Command = (
    BetaMemoryTool20250818ViewCommand
    | BetaMemoryTool20250818CreateCommand
    | BetaMemoryTool20250818StrReplaceCommand
    | BetaMemoryTool20250818InsertCommand
    | BetaMemoryTool20250818DeleteCommand
    | BetaMemoryTool20250818RenameCommand
)


class MemdirMemoryTool(BetaAbstractMemoryTool):
    """The SDK's memory tool interface, answered by a memdir store."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.adapter = MemoryToolAdapter(store)

    def _run(self, command: Command) -> str:
        result = self.adapter.handle_sync(
            {"type": "tool_use", "id": "toolu_sdk", "name": "memory", "input": command.to_dict()}
        )
        if result["is_error"]:
            raise ToolError(result["content"])
        return str(result["content"])

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._run(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._run(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._run(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._run(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._run(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._run(command)


PROGRESS = "# Task: tidy the billing service\n\n- [x] read the code\n- [ ] write tests\n"
PREFS = "Prefers terse answers.\nWorks in Go and Python.\n"
NOTES = "<notes>\n  <item>deploys run on Fridays</item>\n</notes>\n"

# What Claude does, turn by turn: each turn is the list of memory calls in one reply.
TURNS: list[list[dict[str, Any]]] = [
    [{"command": "view", "path": "/memories"}],
    [
        {"command": "create", "path": "/memories/progress.md", "file_text": PROGRESS},
        {"command": "create", "path": "/memories/user_preferences.md", "file_text": PREFS},
        {"command": "create", "path": "/memories/notes.xml", "file_text": NOTES},
    ],
    [{"command": "view", "path": "/memories/progress.md", "view_range": [3, 99]}],
    [
        {"command": "str_replace", "path": "/memories/progress.md",
         "old_str": "- [ ] write tests", "new_str": "- [x] write tests"},
        {"command": "insert", "path": "/memories/notes.xml", "insert_line": 2,
         "insert_text": "  <item>staging is eu-west-1</item>"},
        {"command": "view", "path": "/memories/user_preferences.md", "view_range": [0, -1]},
    ],
    [
        {"command": "create", "path": "/memories/progress.md", "file_text": "oops"},
        {"command": "rename", "old_path": "/memories/notes.xml",
         "new_path": "/memories/archive/notes.xml"},
        {"command": "view", "path": "/memories/../memories/archive"},
    ],
]


def _reply(turn: int, calls: list[dict[str, Any]]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [
        {"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": "memory", "input": call}
        for i, call in enumerate(calls)
    ]
    stop = "tool_use"
    if not calls:
        content, stop = [{"type": "text", "text": "Progress saved to memory."}], "end_turn"
    return {"id": f"msg_{turn}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-5-5", "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 20}}


class ScriptedAPI:
    """The Messages API on a mock transport: one scripted reply per request, in order."""

    def __init__(self, turns: list[list[dict[str, Any]]]) -> None:
        self.replies: Iterator[dict[str, Any]] = iter(
            [_reply(i, calls) for i, calls in enumerate([*turns, []])]
        )
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/messages", request.url
        self.requests.append(json.loads(request.content))
        reply = next(self.replies, None)
        if reply is None:
            pytest.fail("the client sent more requests than the script has replies")
        return httpx2.Response(200, json=reply)


@pytest.mark.slow  # importing the SDK takes seconds
def test_a_claude_session_through_the_sdk_tool_runner(store: Store) -> None:
    api = ScriptedAPI(TURNS)
    client = Anthropic(api_key="test-key", base_url="http://api.test",
                       http_client=httpx2.Client(transport=httpx2.MockTransport(api)))
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5-5", max_tokens=1024, tools=[MemdirMemoryTool(store)],
        messages=[{"role": "user", "content": "Keep track of the billing clean-up."}],
        betas=["context-management-2025-06-27"],
    )
    final = runner.until_done()
    assert next(api.replies, None) is None, "scripted replies were left unused"
    assert final.content[0].type == "text"

    assert api.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = [
        block
        for request in api.requests[1:]
        for block in request["messages"][-1]["content"]
        if block["type"] == "tool_result"
    ]
    assert len(results) == sum(len(calls) for calls in TURNS)
    texts = [block["content"] for block in results]
    errors = [bool(block.get("is_error")) for block in results]
    assert errors == [False] * 8 + [True, False, False]
    assert texts[0].startswith("Here're the files and directories up to 2 levels deep in "
                               "/memories, excluding hidden items:\n")
    assert texts[1] == "File created successfully at: /memories/progress.md"
    assert texts[4] == ("Here's the content of /memories/progress.md with line numbers:\n"
                        "     3\t- [x] read the code\n     4\t- [ ] write tests\n     5\t")
    assert texts[5].startswith("The memory file has been edited.")
    assert texts[6] == "The file /memories/notes.xml has been edited."
    assert texts[7].splitlines() == [
        "Here's the content of /memories/user_preferences.md with line numbers:",
        "     1\tPrefers terse answers.", "     2\tWorks in Go and Python.", "     3\t",
    ]
    assert texts[8] == "File /memories/progress.md already exists"
    listing = texts[10].splitlines()
    assert listing[1].endswith("\t/memories/../memories/archive")
    size = len((store.root / "archive" / "notes.xml").read_bytes())
    assert listing[2:] == [f"{size}B\t/memories/../memories/archive/notes.xml"]

    assert store.read("/memories/progress.md") == PROGRESS.replace("[ ] write", "[x] write")
    assert store.read("/memories/user_preferences.md") == PREFS
    assert (store.root / "archive" / "notes.xml").read_text() == (
        "<notes>\n  <item>deploys run on Fridays</item>\n  <item>staging is eu-west-1</item>\n"
        "</notes>\n"
    )
    assert not (store.root / "notes.xml").exists()
