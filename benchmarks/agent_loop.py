"""Agent-loop speed: memdir's overhead per round, and throughput under concurrency.

1. Loop overhead per round, excluding model time: an episode of ROUNDS tool
   rounds against mockllm (scripted outputs, explicit usage) and a trivial
   tool. Overhead = episode wall time minus the time spent inside
   ``Model.generate`` (inspect_ai's own per-call work counts as model time and is
   reported separately as the baseline: a bare loop of ``generate`` calls).
   Target: < 2 ms per round.
2. Throughput: QUESTIONS ``ask`` calls against a mock model that takes 50 ms per
   call, at concurrency 20. Baseline: the ideal wall time QUESTIONS * 50 ms / 20.
   Target: within 1.5x of it.

Run: .venv/bin/python benchmarks/agent_loop.py
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from typing import Any

from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.model._chat_message import ChatMessageAssistant
from inspect_ai.model._model_output import ChatCompletionChoice
from inspect_ai.tool import ToolCall

from memdir.agents import ask, load_prompt, role_config, run_agent, tool_infos
from memdir.store import Store
from memdir.tools import ToolSet, make_toolset, tool_spec

ROUNDS = 200
QUESTIONS = 200
CONCURRENCY = 20
CALL_SECONDS = 0.05


def _usage() -> ModelUsage:
    return ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)


def _tool_call(n: int) -> ModelOutput:
    message = ChatMessageAssistant(
        content="", source="generate",
        tool_calls=[ToolCall(id=f"c{n}", function="echo", arguments={"message": f"m{n}"})],
    )
    out = ModelOutput(model="mockllm/model",
                      choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])
    out.usage = _usage()
    return out


def _final(text: str) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", text)
    out.usage = _usage()
    return out


def _echo_set() -> ToolSet:
    async def echo(message: str) -> str:
        """Repeat a message.

        Args:
            message: What to repeat.
        """
        return message

    return ToolSet("bench", [tool_spec(echo, read_only=True)])


async def loop_overhead() -> tuple[float, float]:
    """(memdir overhead ms per round, bare inspect generate ms per call)."""
    outputs = [_tool_call(n) for n in range(ROUNDS)] + [_final("done")]
    model = get_model("mockllm/model", custom_outputs=iter(outputs))
    role = role_config("search", max_rounds=ROUNDS + 1)
    run = await run_agent(model, role, load_prompt("search-flat"), "q", _echo_set())
    rec = run.record
    overhead = (rec.wall_s - rec.model_time_s) / rec.rounds * 1000

    # Baseline: the same number of generate calls with no memdir loop around them.
    bare_outputs = [_tool_call(n) for n in range(ROUNDS + 1)]
    bare = get_model("mockllm/model", custom_outputs=iter(bare_outputs))
    infos = tool_infos(_echo_set())
    messages: list[Any] = [ChatMessageSystem(content="s"), ChatMessageUser(content="q")]
    began = time.perf_counter()
    for _ in range(ROUNDS + 1):
        await bare.generate(messages, tools=infos)
    bare_ms = (time.perf_counter() - began) / (ROUNDS + 1) * 1000
    return overhead, bare_ms


async def throughput(delay: float = CALL_SECONDS, concurrency: int = CONCURRENCY) -> float:
    """Wall seconds for QUESTIONS answers at ``concurrency``, the model taking ``delay`` s."""

    async def slow(input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        await asyncio.sleep(delay)
        return _final("Ana weaves [/memories/ana.md:L5]")

    model = get_model("mockllm/model", custom_outputs=slow,
                      config=GenerateConfig(max_connections=concurrency))
    store = Store(tempfile.mkdtemp(prefix="memdir-bench-") + "/memories", create=True)
    store.create("/memories/ana.md", "---\nname: ana\ndescription: Ana\n---\n- Ana weaves\n")
    gate = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        async with gate:
            answer = await ask(store, f"What does Ana do? ({n})", model, variant="flat")
            assert answer.citations_resolve

    began = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(QUESTIONS)))
    return time.perf_counter() - began


async def bare_generate_ms(calls: int = QUESTIONS) -> float:
    """ms per bare inspect_ai generate with the read set's tools (what each question needs)."""
    store = Store(tempfile.mkdtemp(prefix="memdir-bench-") + "/memories", create=True)
    infos = tool_infos(make_toolset("read", store))
    model = get_model("mockllm/model",
                      custom_outputs=lambda *_: _final("Ana weaves [/memories/ana.md:L5]"))
    messages: list[Any] = [ChatMessageSystem(content=load_prompt("search-flat").text),
                           ChatMessageUser(content="What does Ana do?")]
    for _ in range(10):
        await model.generate(messages, tools=infos)
    began = time.perf_counter()
    for _ in range(calls):
        await model.generate(messages, tools=infos)
    return (time.perf_counter() - began) / calls * 1000


def main() -> None:
    overheads = []
    bares = []
    for _ in range(3):
        overhead, bare = asyncio.run(loop_overhead())
        overheads.append(overhead)
        bares.append(bare)
    overhead = statistics.median(overheads)
    bare = statistics.median(bares)
    print(f"loop overhead per round (excl. model time): {overhead:.3f} ms "
          f"(target < 2 ms) {'PASS' if overhead < 2 else 'FAIL'}")
    print(f"baseline: bare inspect_ai generate with mockllm: {bare:.3f} ms per call; "
          f"memdir overhead = {overhead / bare:.2f}x of it")
    asyncio.run(throughput())  # warm-up
    wall = statistics.median(asyncio.run(throughput()) for _ in range(3))
    ideal = QUESTIONS * CALL_SECONDS / CONCURRENCY
    ratio = wall / ideal
    print(f"{QUESTIONS} questions, {CALL_SECONDS * 1000:.0f} ms per call, concurrency "
          f"{CONCURRENCY}: wall {wall:.3f} s vs ideal {ideal:.3f} s = {ratio:.2f}x "
          f"(target <= 1.5x) {'PASS' if ratio <= 1.5 else 'FAIL'}")
    # Where the time goes: the same questions one at a time with an instant model
    # measure the CPU each question costs (inspect_ai's generate plus memdir's loop).
    cpu = asyncio.run(throughput(delay=0.0, concurrency=1))
    print(f"CPU per question (instant model, sequential): {cpu / QUESTIONS * 1000:.2f} ms; "
          f"CPU floor for {QUESTIONS} questions {cpu:.3f} s; bare generate alone "
          f"{bare * QUESTIONS / 1000:.3f} s")
    # The floor no loop can beat: one inspect_ai generate per question, with the tool
    # declarations a search agent sends, all on one event loop.
    floor_ms = asyncio.run(bare_generate_ms())
    floor = floor_ms * QUESTIONS / 1000
    print(f"inspect_ai floor: bare generate with the read set's tools {floor_ms:.2f} ms per "
          f"call, {floor:.3f} s of CPU for {QUESTIONS} questions = "
          f"{max(floor, ideal) / ideal:.2f}x of the ideal before memdir does anything; "
          f"measured wall is {wall / max(floor, ideal):.2f}x of that floor")


if __name__ == "__main__":
    main()
