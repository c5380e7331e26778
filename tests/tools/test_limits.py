"""Every tool call is bounded: in time (off the caller's loop), in result and error size."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from memdir.sample import build_sample_store
from memdir.store import Store
from memdir.tools import ToolSet, make_toolset, read_set, tool_spec, write_set
from memdir.tools._limits import CallLimits, cap_text, echo, remaining
from memdir.tools._ranked import CHUNK_CHARS

# A pattern the regex engine cannot shortcut: on a line of many a's without a b it
# tries exponentially many ways to split the run before giving up.
ENGINE_BOMB = "(?:a+?)+?b"
FRONT = "---\nname: {}\ndescription: d\n---\n"


@pytest.fixture
def sample(tmp_path: Path) -> Store:
    return build_sample_store(tmp_path / "s")


def _plant(store: Store, name: str, body: str) -> None:
    (store.root / f"{name}.md").write_text(FRONT.format(name) + body)


async def test_the_issue_bomb_ends_on_the_sample_store(sample: Store) -> None:
    # (\w+\s?)*$ ran for minutes under Python's re; the regex engine answers it.
    with anyio.fail_after(20):
        result = await read_set(sample).call("grep", {"pattern": r"(\w+\s?)*$"})
    assert not result.is_error, result.content
    assert "matching line(s)" in result.content.splitlines()[0]


async def test_an_engine_bomb_is_stopped_at_the_time_limit(sample: Store) -> None:
    _plant(sample, "bomb", "a" * 40 + "!\n")
    tools = ToolSet("read", read_set(sample).tools.values(), limits=CallLimits(0.5, 10_000))
    started = time.monotonic()
    with anyio.fail_after(20):
        result = await tools.call("grep", {"pattern": ENGINE_BOMB})
    # The regex engine counts CPU seconds, the dispatcher wall-clock seconds: on a busy
    # machine the dispatcher's message comes first, on an idle one grep's own.
    assert result.is_error
    assert "time limit" in result.content and "simpl" in result.content
    assert time.monotonic() - started < 15


async def test_the_callers_loop_keeps_running_during_a_slow_call(sample: Store) -> None:
    _plant(sample, "bomb", "a" * 40 + "!\n")
    tools = ToolSet("read", read_set(sample).tools.values(), limits=CallLimits(2.0, 10_000))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    with anyio.fail_after(20):
        background = asyncio.create_task(ticker())
        bomb = asyncio.create_task(tools.call("grep", {"pattern": ENGINE_BOMB}))
        await asyncio.sleep(0.3)
        view = await tools.call("view", {"path": "/memories/people/maya.md"})
        assert not bomb.done()  # answered while the bomb still runs
        assert not view.is_error
        result = await bomb
        background.cancel()
    assert result.is_error
    assert ticks > 20


async def test_a_read_that_ignores_the_deadline_is_abandoned() -> None:
    async def stall(seconds: float) -> str:
        """Block the thread it runs on.

        Args:
            seconds: How long.
        """
        time.sleep(seconds)
        return "late"

    tools = ToolSet("t", [tool_spec(stall, read_only=True)], limits=CallLimits(0.2, 100))
    with anyio.fail_after(10):
        result = await tools.call("stall", {"seconds": 3})
    assert result.is_error
    assert "did not finish within 0.2 s" in result.content


async def test_a_write_is_waited_for_past_the_limit(tmp_path: Path) -> None:
    marker = tmp_path / "done"

    async def slow_write(text: str) -> str:
        """Write slowly.

        Args:
            text: What to write.
        """
        await asyncio.sleep(0.5)
        marker.write_text(text)
        return "written"

    tools = ToolSet("t", [tool_spec(slow_write, read_only=False)], limits=CallLimits(0.1, 100))
    result = await tools.call("slow_write", {"text": "x"})
    assert (result.is_error, result.content) == (False, "written")
    assert marker.read_text() == "x"


async def test_the_deadline_is_visible_inside_the_call() -> None:
    async def spin() -> str:
        """Loop until the deadline says stop."""
        while True:
            remaining()

    tools = ToolSet("t", [tool_spec(spin, read_only=True)], limits=CallLimits(0.2, 100))
    with anyio.fail_after(10):
        result = await tools.call("spin", {})
    assert result.is_error and "0.2 s" in result.content
    assert remaining() is None  # outside a call there is no deadline


async def test_bugs_still_raise_through_the_worker() -> None:
    async def broken() -> str:
        """Fail like a bug."""
        raise KeyError("bug")

    tools = ToolSet("t", [tool_spec(broken, read_only=True)])
    with pytest.raises(KeyError):
        await tools.call("broken", {})


async def test_a_huge_result_is_cut_with_a_note() -> None:
    async def flood(lines: int) -> str:
        """Return many lines.

        Args:
            lines: How many.
        """
        return "\n".join(f"line {n}" for n in range(lines))

    tools = ToolSet("t", [tool_spec(flood, read_only=True)], limits=CallLimits(5, 1000))
    result = await tools.call("flood", {"lines": 10_000})
    assert not result.is_error
    assert len(result.content) < 1300
    body, note = result.content.rsplit("\n", 1)
    assert body.startswith("line 0\nline 1\n")
    assert body.split("\n")[-1].startswith("line ")  # cut at a line break
    assert note.startswith("[cut: ") and "Ask flood for less" in note


async def test_a_huge_error_is_cut(sample: Store) -> None:
    tools = write_set(sample)
    old = "never there " * 100_000
    result = await tools.call(
        "str_replace", {"path": "/memories/people/maya.md", "old_str": old, "new_str": "x"}
    )
    assert result.is_error
    assert len(result.content) < 5000


async def test_grep_does_not_echo_a_pattern(sample: Store) -> None:
    result = await read_set(sample).call("grep", {"pattern": "zq" * 1000})
    assert result.content.startswith("No lines match")
    assert len(result.content) < 400
    assert "(2,000 characters)" in result.content
    huge = await read_set(sample).call("grep", {"pattern": "zq" * 50_000})
    assert huge.is_error and "longer than the 4,000 characters" in huge.content
    assert len(huge.content) < 400


async def test_chunk_retrieval_over_a_huge_file_is_capped(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    store = Store(tmp_path / "s")
    words = " ".join(f"word{n % 997}" for n in range(200_000))
    (store.root / "big.md").write_text(FRONT.format("big") + "pottery " + words + "\n")
    _plant(store, "small", "pottery class on monday\n")
    result = await make_toolset("chunk", store).call("bm25_chunk_retrieve", {"query": "pottery"})
    assert not result.is_error, result.content
    assert len(result.content) < CHUNK_CHARS + 2000
    assert "[cut: this chunk has" in result.content
    assert "pottery class on monday" in result.content


def test_cap_text_and_echo() -> None:
    assert cap_text("short", 10, "hint") == "short"
    cut = cap_text("a\n" * 100, 50, "See more.")
    assert cut.endswith("See more.]") and "of 200 characters" in cut
    assert echo("abc") == "'abc'"
    assert echo("x" * 500, 20).endswith("... (500 characters)")
    with pytest.raises(ValueError):
        CallLimits(0, 10)


async def test_a_write_waiting_for_the_lock_does_not_hold_up_reads(sample: Store) -> None:
    tools = write_set(sample)
    other = Store(sample.root)  # another holder of the lock, as another process would be
    text = FRONT.format("zoe") + "# Zoe\n"
    with anyio.fail_after(30):
        with other.locked():
            write = asyncio.create_task(
                tools.call("create", {"path": "/memories/zoe.md", "file_text": text}))
            await asyncio.sleep(0.3)
            view = await tools.call("view", {"path": "/memories/people/maya.md"})
            assert not view.is_error and not write.done()
        created = await write
    assert not created.is_error, created.content
    assert (sample.root / "zoe.md").read_text() == text


def test_ctypes_and_traceback_load_only_when_a_call_overruns_or_fails() -> None:
    # A new process's one tool call pays for every module its start loads.
    program = ("import sys, memdir.tools._limits; "
               "print(sorted({'ctypes', 'traceback'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "[]"
