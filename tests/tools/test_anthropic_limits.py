"""memory_20250818 blocks are bounded like every tool call: output and error caps.

The time limit is the same ``run_bounded`` that ``ToolSet.call`` uses (tests/tools/test_limits.py).
"""

from __future__ import annotations

from pathlib import Path

from memdir.store import Store
from memdir.tools._limits import CallLimits
from memdir.tools.anthropic import MemoryToolAdapter


def _block(command: str, **args: object) -> dict[str, object]:
    return {"type": "tool_use", "id": "toolu_1", "name": "memory",
            "input": {"command": command, **args}}


async def test_a_long_view_is_cut_with_a_note(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    adapter = MemoryToolAdapter(store, limits=CallLimits(seconds=30, output_chars=400))
    made = await adapter.handle(_block("create", path="/memories/log.txt",
                                       file_text="".join(f"line {i}\n" for i in range(500))))
    assert made["is_error"] is False
    shown = await adapter.handle(_block("view", path="/memories/log.txt"))
    assert shown["is_error"] is False
    assert len(shown["content"]) < 700 and "view_range" in shown["content"]
    whole = await MemoryToolAdapter(store).handle(_block("view", path="/memories/log.txt"))
    assert "line 499" in whole["content"]  # the default cap leaves a normal file whole


async def test_a_huge_error_message_is_capped(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", create=True)
    adapter = MemoryToolAdapter(store, limits=CallLimits(seconds=30, output_chars=10**6,
                                                         error_chars=300))
    result = await adapter.handle(_block("str_replace", path="/memories/none.md",
                                         old_str="y" * 50_000, new_str="z"))
    assert result["is_error"] is True and len(result["content"]) < 600
