"""A read-only call past its time limit is stopped, not merely abandoned.

The runaway tools here never look at the deadline (as the YAML alias loop of
issue 19 did not): each allocates memory, then spins, counting its steps. After
the dispatcher answers with the time-limit error, the step counter must stand
still, the call's thread must be gone, and the memory it held must be freed.
Each runaway ends by itself after 20 s, so even code that does not stop it
cannot hold a test run for long.
"""

from __future__ import annotations

import asyncio
import mmap
import threading
import time
from pathlib import Path

import anyio
import pytest

from memdir.store import Store
from memdir.tools import ToolSet, tool_spec, write_set
from memdir.tools._limits import CallLimits

CHUNK = 1 << 20
HOARD_CHUNKS = 120  # 120 MiB at most
# The hoard is anonymous mappings, written through so they are resident: each is
# unmapped when freed, so RSS shows the release whatever state malloc is in (in a
# long test run, freed malloc memory may stay in the process's arenas).


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


class Runaway:
    """A read-only tool that allocates, then spins, and never checks the deadline."""

    def __init__(self) -> None:
        self.steps = 0
        self.thread: threading.Thread | None = None
        self.held = 0
        self.finished = False

    async def runaway(self) -> str:
        """Hoard memory, then spin.

        Returns after 20 s if nothing stops it.
        """
        self.thread = threading.current_thread()
        hoard: list[mmap.mmap] = []
        end = time.monotonic() + 20
        while time.monotonic() < end:
            if len(hoard) < HOARD_CHUNKS:
                chunk = mmap.mmap(-1, CHUNK)
                chunk.write(b"x" * CHUNK)
                hoard.append(chunk)
                self.held = len(hoard) * CHUNK
            self.steps += 1
        self.finished = True
        return "finished"


def _runaway_set(runaway: Runaway, seconds: float) -> ToolSet:
    return ToolSet("t", [tool_spec(runaway.runaway, read_only=True)],
                   limits=CallLimits(seconds, 1000))


async def _settled(runaway: Runaway) -> None:
    """Wait (briefly) for the stopped thread to unwind."""
    for _ in range(100):
        if runaway.thread is not None and not runaway.thread.is_alive():
            return
        await asyncio.sleep(0.05)


@pytest.fixture(params=["c-task", "python-task"])
def task_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run with asyncio's C task, and with its pure-Python one (what nest_asyncio,
    which inspect_ai loads, puts in its place): the latter's future keeps a
    traceback of its own, so dropping the exception's was not enough."""
    if request.param == "python-task":
        monkeypatch.setattr(asyncio.tasks, "Task", asyncio.tasks._PyTask)  # type: ignore[attr-defined]
    return str(request.param)


async def test_a_timed_out_read_stops_using_cpu_and_frees_its_memory(task_kind: str) -> None:
    runaway = Runaway()
    before = _rss_bytes()
    with anyio.fail_after(15):
        result = await _runaway_set(runaway, 0.5).call("runaway", {})
    assert result.is_error and "did not finish within 0.5 s" in result.content
    peak = runaway.held
    await _settled(runaway)
    steps = runaway.steps
    await asyncio.sleep(1.0)
    assert runaway.steps == steps, "the call kept running after it was answered"
    assert runaway.thread is not None and not runaway.thread.is_alive()
    assert not runaway.finished
    assert peak >= 16 * CHUNK  # it did hoard before it was stopped
    assert _rss_bytes() - before < 12 * CHUNK, "the hoard was not freed"


async def test_a_cancelled_read_stops_too() -> None:
    # An MCP client that cancels its request cancels the server's task for it.
    runaway = Runaway()
    tools = _runaway_set(runaway, 30)
    task = asyncio.create_task(tools.call("runaway", {}))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _settled(runaway)
    steps = runaway.steps
    await asyncio.sleep(0.5)
    assert steps > 0 and runaway.steps == steps
    assert runaway.thread is not None and not runaway.thread.is_alive()


async def test_the_next_call_runs_normally_after_a_stop(store: Store) -> None:
    runaway = Runaway()
    await _runaway_set(runaway, 0.3).call("runaway", {})
    await _settled(runaway)
    tools = write_set(store)
    text = "---\nname: after\ndescription: d\n---\nbody\n"
    made = await tools.call("create", {"path": "/memories/after.md", "file_text": text})
    assert not made.is_error, made.content
    seen = await tools.call("view", {"path": "/memories/after.md"})
    assert "body" in seen.content and not seen.is_error
    assert (store.root / "after.md").read_text() == text


async def test_a_write_past_its_time_is_never_interrupted(tmp_path: Path) -> None:
    # Writes are waited for: stopping one half-way could leave a change half-made.
    marker = tmp_path / "done"
    spins = 0

    async def slow_write() -> str:
        """Spin past the limit, then write."""
        nonlocal spins
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            spins += 1
        marker.write_text("landed")
        return "written"

    tools = ToolSet("t", [tool_spec(slow_write, read_only=False)], limits=CallLimits(0.2, 100))
    result = await tools.call("slow_write", {})
    assert (result.is_error, result.content) == (False, "written")
    assert marker.read_text() == "landed"
