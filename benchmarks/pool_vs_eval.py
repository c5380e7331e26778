"""Does ``AskPool`` beat inspect_ai's ``max_samples`` at answering a study cell's questions?

A study cell answers its questions as the samples of one inspect_ai eval run with
``max_samples`` = the study's concurrency (8), on one event loop. ``AskPool``
spreads the same ``ask`` calls over worker processes. This benchmark answers one
cell's questions both ways, in the same run, on the same store:

- **eval** (the baseline): one inspect_ai eval, one sample per question, whose
  solver calls ``ask`` (the part of the study's solver that is under comparison;
  grading and the record write are the same on either path);
- **pool, cold**: an ``AskPool`` of WORKERS processes started for the cell, as the
  study would have to (a pool is bound to one store, and every cell reads its own),
  start-up included;
- **pool, warm**: the same pool's second batch, start-up excluded (a lower bound
  the study could only reach if pools outlived their cells).

Two searchers: the offline ``memdir/grep-reader`` policy (no model latency at all,
so the CPU is the only limit: the pool's best case) and mockllm answering after
CALL_SECONDS per call (a stand-in for a provider, where the waiting dominates).

Store and questions: LoCoMo's first conversation as the verbatim store with its
evaluated questions when ``MEMDIR_DATA_DIR`` (or ../shared/data) holds LoCoMo,
else a small store with QUESTIONS generated questions.

Run: MEMDIR_DATA_DIR=../shared/data .venv/bin/python benchmarks/pool_vs_eval.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval_async
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, Model, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from ask_pool import AskPool, ModelSpec  # benchmarks/ask_pool.py, beside this file
from memdir.agents import ask
from memdir.runs import EVAL_SETTINGS, quiet_display, realtime
from memdir.store import Store

CONCURRENCY = 8
"""The study's default concurrency (StudyConfig.concurrency)."""
WORKERS = 2
QUESTIONS = 150
CALL_SECONDS = 0.05
REPEATS = 3
ANSWER = "Ana weaves [/memories/ana.md:L5]"


def slow_model(delay: float = CALL_SECONDS, max_connections: int = CONCURRENCY) -> Model:
    """mockllm answering after ``delay`` seconds (module level: pool workers build it)."""

    async def slow(input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        await asyncio.sleep(delay)
        output = ModelOutput.from_content("mockllm/model", ANSWER)
        output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        return output

    return get_model("mockllm/model", custom_outputs=slow,
                     config=GenerateConfig(max_connections=max_connections))


def _cell() -> tuple[Store, list[str], str]:
    root = Path(tempfile.mkdtemp(prefix="memdir-pool-vs-eval-"))
    data = Path(os.environ.get("MEMDIR_DATA_DIR", Path(__file__).parents[1] / "../shared/data"))
    if (data / "locomo").is_dir():
        from memdir.bench import load_benchmark
        from memdir.builders import build_verbatim

        dataset = load_benchmark("locomo", data)
        conversation = dataset.conversations[0]
        store = Store(root / "memories", create=True)
        build_verbatim(conversation, store)
        questions = [q.text for q in dataset.questions_for(conversation.id)]
        return store, questions, f"LoCoMo {conversation.id}, verbatim store"
    store = Store(root / "memories", create=True)
    store.create("/memories/ana.md", "---\nname: ana\ndescription: Ana\n---\n- Ana weaves\n")
    return store, [f"What does Ana do? ({n})" for n in range(QUESTIONS)], "a one-file store"


@solver
def _answer(store: Store, model: Model | str):  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        answer = await ask(store, state.input_text, model, variant="flat")
        state.output = ModelOutput.from_content(str(model), answer.text)
        return state

    return solve


@scorer(metrics=[mean()])
def _answered():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1.0 if state.output.completion else 0.0)

    return score


async def eval_wall(store: Store, questions: list[str], model: Model | str) -> float:
    """Seconds for one eval answering every question at max_samples=CONCURRENCY."""
    samples = [Sample(input=q, id=n) for n, q in enumerate(questions)]
    task = Task(dataset=MemoryDataset(samples), solver=_answer(store, model), scorer=_answered(),
                name="cell")
    began = time.perf_counter()
    with quiet_display():  # the study's own eval settings (memdir.runs)
        logs = await eval_async(task, model=model, max_samples=CONCURRENCY,
                                log_dir=tempfile.mkdtemp(prefix="memdir-pool-logs-"),
                                log_realtime=realtime(model), **EVAL_SETTINGS)
    wall = time.perf_counter() - began
    assert logs[0].status == "success", logs[0].error
    return wall


def pool_walls(store: Store, questions: list[str], spec: ModelSpec | None) -> tuple[float, float]:
    """(start-up + first batch s, median warm batch s) for an AskPool of WORKERS."""
    began = time.perf_counter()
    with AskPool(store, spec, workers=WORKERS, concurrency=CONCURRENCY, variant="flat") as pool:
        first = pool.ask_many(questions)
        cold = time.perf_counter() - began
        warm = []
        for _ in range(REPEATS):
            began = time.perf_counter()
            assert len(pool.ask_many(questions)) == len(first)
            warm.append(time.perf_counter() - began)
    return cold, statistics.median(warm)


def main() -> None:
    store, questions, where = _cell()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
          f"{len(questions)} questions from {where}; concurrency {CONCURRENCY}, "
          f"{WORKERS} pool workers")
    searchers: list[tuple[str, Model | str, ModelSpec | None]] = [
        ("offline grep-reader", "memdir/grep-reader", None),
        (f"mockllm, {CALL_SECONDS * 1000:.0f} ms per call", slow_model(),
         ModelSpec(factory="pool_vs_eval:slow_model")),
    ]
    for label, model, spec in searchers:
        evals = [asyncio.run(eval_wall(store, questions, model)) for _ in range(REPEATS)]
        baseline = statistics.median(evals)
        small = statistics.median(asyncio.run(eval_wall(store, questions[:CONCURRENCY], model))
                                  for _ in range(REPEATS))
        per_question = (baseline - small) / (len(questions) - CONCURRENCY) * 1000
        cold, warm = pool_walls(store, questions, spec)
        print(f"{label}:")
        print(f"  eval, max_samples={CONCURRENCY} (baseline)   {baseline:7.2f} s  "
              f"(an eval of {CONCURRENCY} questions: {small:.2f} s; each further question "
              f"{per_question:.1f} ms)")
        print(f"  AskPool, started for the cell        {cold:7.2f} s  "
              f"{baseline / cold:5.2f}x the baseline's speed")
        print(f"  AskPool, warm (start-up excluded)    {warm:7.2f} s  "
              f"{baseline / warm:5.2f}x the baseline's speed "
              f"({warm / len(questions) * 1000:.1f} ms per question)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
