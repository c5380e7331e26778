"""ask_many over worker processes: order, equality with ask, failures, reuse."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model

from memdir.agents import AskPool, ModelSpec, PoolError, ask, ask_many
from memdir.sample import build_sample_store
from memdir.store import Store

QUESTIONS = [
    "Where does Maya live now?",
    "When is Ada's wedding?",
    "What race did Theo run?",
    "Who is Ada marrying?",
    "What does Maya do for work?",
    "When did Maya move to Bristol?",
]


def _last_user_text(messages: list[Any]) -> str:
    return next(str(m.text) for m in reversed(messages) if m.role == "user")


def troubled_model() -> Model:
    """A mock model (built inside the worker) that fails or dies on request."""

    def reply(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        question = _last_user_text(input)
        if "explode" in question:
            raise ValueError("the mock model refuses to explode")
        if "crash" in question:
            os._exit(3)
        output = ModelOutput.from_content("mockllm/model", "fine")
        output.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
        return output

    return get_model("mockllm/model", custom_outputs=reply)


def broken_factory() -> Model:
    """A factory that cannot build its model."""
    raise RuntimeError("no model for you")


TROUBLED = ModelSpec(factory=f"{__name__}:troubled_model")


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return build_sample_store(tmp_path_factory.mktemp("pool") / "memories")


@pytest.fixture(scope="module")
def pool(sample: Store) -> Iterator[AskPool]:
    with AskPool(sample, workers=2, concurrency=4) as running:
        yield running


def test_answers_in_input_order_and_equal_to_single_process(pool: AskPool, sample: Store) -> None:
    answers = pool.ask_many(QUESTIONS)

    async def alone() -> list[Any]:
        return [await ask(sample, q) for q in QUESTIONS]

    single = asyncio.run(alone())
    assert [a.question for a in answers] == QUESTIONS
    assert [a.text for a in answers] == [a.text for a in single]
    assert [a.citations for a in answers] == [a.citations for a in single]
    assert all(a.zero_cost_baseline and a.citations_resolve for a in answers)
    assert all(a.records and a.records[0].model == "memdir/grep-reader" for a in answers)
    assert any("Bristol" in a.text for a in answers)


def test_pool_is_reused_across_batches(pool: AskPool) -> None:
    before = pool.pids
    first = pool.ask_many(QUESTIONS[:2])


    async def two_at_once() -> list[list[Any]]:
        return list(await asyncio.gather(pool.ask_many_async(list(reversed(QUESTIONS))),
                                         pool.ask_many_async(QUESTIONS[2:4])))

    second, third = asyncio.run(two_at_once())
    assert pool.pids == before and len(before) == 2
    assert [a.question for a in first] == QUESTIONS[:2]
    assert [a.question for a in second] == list(reversed(QUESTIONS))
    assert [a.question for a in third] == QUESTIONS[2:4]
    assert pool.ask_many([]) == []


def test_failures_name_the_question_and_a_dead_worker_closes_the_pool(sample: Store) -> None:
    questions = ["What is up?", "Please explode now", "Is all well?"]
    with AskPool(sample, TROUBLED, workers=1, concurrency=2, variant="closed-book") as pool:
        with pytest.raises(PoolError, match=r"1 of 3 question\(s\) failed: #1 'Please explode now'"
                           r".*refuses to explode") as failed:
            pool.ask_many(questions)
        answers = failed.value.answers
        assert answers[1] is None and set(failed.value.failures) == {1}
        assert answers[0] is not None and answers[0].question == "What is up?"
        assert answers[0].text == "fine" and answers[0].records[0].model == "mockllm/model"
        assert answers[2] is not None and answers[2].question == "Is all well?"

        # A failed question leaves the pool usable.
        assert pool.ask_many(["Still there?"])[0].text == "fine"

        with pytest.raises(PoolError, match=r"died with exit code 3 .*'Please crash'"):
            pool.ask_many(["Please crash"])
        with pytest.raises(PoolError, match="cannot be used"):
            pool.ask_many(["Anyone?"])
        assert pool.pids == []


def test_a_worker_that_cannot_build_its_model_fails_the_start(sample: Store) -> None:
    spec = ModelSpec(factory=f"{__name__}:broken_factory")
    with pytest.raises(PoolError, match="could not start .*RuntimeError: no model for you"):
        ask_many(sample, ["Anything?"], spec, workers=1, concurrency=1)


def test_bad_arguments_are_refused_before_any_process_starts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        ModelSpec()
    with pytest.raises(ValueError, match="module:function"):
        ModelSpec(factory="no_colon_here")
    with pytest.raises(ValueError, match="below workers"):
        AskPool(tmp_path, workers=4, concurrency=2)
    pool = AskPool(tmp_path, workers=1, concurrency=1)
    with pytest.raises(TypeError, match="list of questions"):
        pool.ask_many("one string")  # type: ignore[arg-type]
    assert pool.pids == []
