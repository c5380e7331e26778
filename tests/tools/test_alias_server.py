"""Issue 19, item 1, end to end: a 62-byte file whose header is a YAML alias of itself.

``memdir serve`` runs as a real process, driven by the MCP SDK's client over
stdio; its resident memory and CPU time are read from ``/proc``. The server runs
under ``prlimit --as`` so that code which does loop on the header (it used to
grow to gigabytes) fails this test instead of filling the machine.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

BOMB = "---\nname: b\ndescription: d\nmetadata: &m {self: *m}\n---\n# H\nhi\n"
NORMAL = "---\nname: normal\ndescription: A normal note\n---\n# One\ntext\n## Two\nmore\n"
TIMEOUT = 120
ADDRESS_SPACE = 3 << 30  # the server's cap: far above its needs, far below the machine's

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)"),
]


def test_the_bomb_is_62_bytes() -> None:
    assert len(BOMB.encode()) == 62


def _server_pid(store: Path) -> int:
    """The ``memdir serve`` process serving ``store`` (its path is on the command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(store).encode() in argv and b"prlimit" not in argv[0]:
            found.append(int(entry.name))
    assert len(found) == 1, found
    return found[0]


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_toc_of_the_alias_bomb_leaves_the_server_as_it_was(tmp_path: Path) -> None:
    store = tmp_path / "memories"
    store.mkdir()
    (store / "b.md").write_text(BOMB)
    (store / "normal.md").write_text(NORMAL)
    params = StdioServerParameters(
        command="prlimit",
        args=[f"--as={ADDRESS_SPACE}", "--", sys.executable, "-m", "memdir", "serve",
              str(store)],
        env={**os.environ, "MEMDIR_TOOL_TIME_LIMIT": "3"},
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params, read_timeout_seconds=TIMEOUT) as client:
            pid = _server_pid(store)
            for _ in range(3):  # warm up: imports and caches settle
                warm = await client.call_tool("toc", {"path": "/memories/normal.md"})
                assert "# One (lines 5-8)" in _text(warm)
            await client.call_tool("view", {"path": "/memories"})
            baseline = _rss(pid)
            started = time.monotonic()
            result = await client.call_tool("toc", {"path": "/memories/b.md"})
            took = time.monotonic() - started
            await anyio.sleep(1.0)
            cpu = _cpu_seconds(pid)
            await anyio.sleep(1.0)
            cpu_after = _cpu_seconds(pid)
            after = _rss(pid)
            # The server still answers, and every other consumer of the header too.
            listing = await client.call_tool("view", {"path": "/memories"})
            grep = await client.call_tool("grep", {"pattern": "hi"})
    print(f"\ntoc took {took:.2f} s; RSS {baseline / 2**20:.1f} -> {after / 2**20:.1f} MiB; "
          f"CPU in the 1 s after: {cpu_after - cpu:.2f} s")
    assert not result.is_error, _text(result)
    assert _text(result).startswith("/memories/b.md: 7 lines")
    assert "# H (lines 6-7)" in _text(result)
    assert cpu_after - cpu < 0.3, "the server kept working after it answered"
    assert after - baseline < 16 << 20, (baseline, after)
    assert "b.md (62 B)" in _text(listing)
    assert "/memories/b.md:7: hi" in _text(grep)
