"""Hosting work as inspect_ai evals: samples whose work must keep a fixed order."""

from __future__ import annotations

import asyncio

import pytest

from memdir.runs import InOrder, realtime


async def test_work_runs_in_the_given_order_whatever_order_it_arrives_in() -> None:
    gate = InOrder([0, 1, 2, 3])
    done: list[int] = []

    async def work(key: int) -> None:
        async with gate.turn(key):
            await asyncio.sleep(0.001 * (4 - key))
            done.append(key)

    await asyncio.gather(*(work(k) for k in (3, 1, 0, 2)))
    assert done == [0, 1, 2, 3]


async def test_a_failed_turn_passes_the_turn_on() -> None:
    gate = InOrder(["a", "b"])

    async def fail() -> None:
        async with gate.turn("a"):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await fail()
    async with gate.turn("b"):
        pass
    with pytest.raises(KeyError, match="not waiting"):
        async with gate.turn("a"):
            pass


def test_offline_runs_skip_the_realtime_buffer() -> None:
    assert not realtime("memdir/grep-reader") and not realtime("none/none")
    assert not realtime("mockllm/model")
    assert realtime("openai/gpt-5.4-mini")
