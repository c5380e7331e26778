"""Running study work inside inspect_ai evals: quiet display, and a build as one sample.

A cell's questions are samples of its eval (:mod:`memdir.study._inspect`). A
model-built store is built inside an eval of its own with a single sample, so
every model call of the build (each chunk or pass, with its tool calls and
results) is a transcript in ``inspect view``, beside the cells that read the store.
The build keeps its own records and resume state (:mod:`memdir.builders`); the
eval adds the transcript and nothing else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from inspect_ai import Task, eval_async
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import Model
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import display_type
from inspect_ai.util._display import display_type_initialized, init_display_type

__all__ = ["EvalFailed", "eval_build", "quiet_display"]

T = TypeVar("T")


class EvalFailed(RuntimeError):
    """An eval ended without success; the message carries its error and log."""


@contextmanager
def quiet_display() -> Iterator[None]:
    """Switch inspect_ai's console display off, restoring whatever the process had.

    Any model call made outside an eval sets the display to ``full``, which would
    draw inspect's full-screen display over the command line's own progress.
    """
    previous = display_type() if display_type_initialized() else None
    init_display_type("none")
    try:
        yield
    finally:
        if previous is not None:
            init_display_type(previous)


@solver
def study_build(work: Callable[[], Awaitable[Any]], result: list[Any]):  # type: ignore[no-untyped-def]
    """Run a store build as the sample's whole work; its value goes into ``result``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        result.append(await work())
        state.completed = True
        return state

    return solve


async def eval_build(name: str, model: Model | str, log_dir: Path,
                     work: Callable[[], Awaitable[T]],
                     metadata: dict[str, Any] | None = None) -> T:
    """Run ``work`` (a store build) as the one sample of an eval named ``name``.

    The sample is not retried: a build resumes from its own last snapshot, so the
    caller reruns it instead.

    Raises:
        EvalFailed: ``work`` raised; the message has its error and the log's path.
        KeyboardInterrupt: The eval was interrupted before it wrote a log (Ctrl-C).
    """
    result: list[T] = []
    task = Task(dataset=MemoryDataset([Sample(input=name, id=name)], name=name),
                solver=study_build(work, result), name=name, metadata=metadata or {})
    with quiet_display():
        logs = await eval_async(task, model=model, log_dir=str(log_dir), fail_on_error=True,
                                retry_on_error=0, score_display=False, ctl_server=False)
    if not logs:
        raise KeyboardInterrupt(f"the build {name} was interrupted; rerun to resume it")
    log = logs[0]
    if log.status != "success" or not result:
        error = log.error.message if log.error is not None else f"the eval ended {log.status}"
        raise EvalFailed(f"{error} (transcript: {log.location})")
    return result[0]
