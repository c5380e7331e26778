"""No malformed call fails ``memdir serve``: every answer is a result or a named error.

A real server process per transport (stdio, streamable HTTP) and tool set
(read, write, the anthropic commands), driven by the MCP SDK's client, and by
raw JSON-RPC for what that client cannot send (:mod:`mcpfuzz`). Calls are shaped
by the tools the server lists. The server's resident memory is read from
``/proc`` before and after.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzzcalls import Call
from fuzzrun import FUZZ, known_paths, problems
from hypothesis import given, settings
from mcpfuzz import Loop, calls_for_server, mcp_surface

from memdir.store import Store

MEMORY_GROWTH_MB = 512
"""How much a server's resident memory may grow over the calls (inputs of megabytes)."""
MCP_FUZZ = settings(FUZZ, max_examples=max(1, FUZZ.max_examples // 2))


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    running = Loop()
    yield running
    running.close()


@pytest.mark.parametrize(("transport", "toolset"), [("stdio", "write"), ("http", "anthropic")])
def test_no_mcp_call_fails(transport: str, toolset: str, fuzz_store: Store, loop: Loop) -> None:
    root = Path(fuzz_store.root)
    surface, server = mcp_surface(loop, root, transport, toolset)
    try:
        @MCP_FUZZ
        @given(call=calls_for_server(server, known_paths(root)))
        def check(call: Call) -> None:
            outcome = surface.send(call)
            assert not problems(outcome), (call, problems(outcome))

        check()
    finally:
        memory = server.stop()
    assert surface.tally.calls >= MCP_FUZZ.max_examples
    assert memory["peak_rss_mb"] > 0
    assert memory["peak_rss_mb"] - memory["start_rss_mb"] < MEMORY_GROWTH_MB, memory
