"""Hosting run work as inspect_ai evals, the same way for the study and the skill setting.

A study cell's questions, a skill chain's task attempts and a model-built
store's build all run as samples of an eval, so ``inspect view`` shows every
model call of a run. Records stay the truth: the work inside a sample writes
its own record and resume state, and the eval adds the transcript. What is
shared here: inspect's console display kept off (:func:`quiet_display`), one
call that runs an eval and returns its log (:func:`run_eval`), running
samples' work in dataset order (:class:`InOrder`), a single unit of work as a
one-sample eval (:func:`eval_work`), and how a failed eval is described and
listed next to a cell's records (:func:`eval_failure`, :func:`note_eval`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from inspect_ai import Task, eval_async
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import Model
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import display_type
from inspect_ai.util._display import display_type_initialized, init_display_type

from memdir.agents import is_offline
from memdir.runs._records import write_json

__all__ = [
    "EVAL_SETTINGS",
    "NO_MODEL",
    "EvalFailed",
    "InOrder",
    "eval_failure",
    "eval_work",
    "note_eval",
    "quiet_display",
    "realtime",
    "run_eval",
]

T = TypeVar("T")

NO_MODEL = "none/none"
"""inspect_ai's model name for an eval whose samples call no model (the offline expert)."""

EVAL_SETTINGS: dict[str, Any] = {
    "fail_on_error": True,
    "continue_on_fail": False,
    "retry_on_error": 1,
    "score_display": False,
    "log_images": False,
    "ctl_server": False,
}
"""How every eval of a run goes unless a caller says otherwise.

The first sample error that survives the model's own retries and one retry of
the whole sample stops the eval: a cell is complete or not reported, and the
records written before that stay on disk for the rerun. No control server
(``inspect ctl``): nothing here uses it, and it costs time on every event.
"""


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


def realtime(model: Model | str) -> bool:
    """Whether to keep inspect_ai's realtime sample buffer (live samples in ``inspect view``).

    A provider call takes seconds, so the buffer's writes per event are noise and
    watching a long paid run live is worth it. memdir's offline policies, mockllm
    and a run without a model answer in milliseconds; there the buffer made a
    study cell about 1.4x slower (benchmarks/study.py).
    """
    return str(model) != NO_MODEL and not is_offline(model)


async def run_eval(task: Task, model: Model | str, log_dir: Path, what: str,
                   **options: Any) -> EvalLog:
    """Run one eval with inspect's display off and return its log.

    Args:
        task: The eval.
        model: The model its samples call (:data:`NO_MODEL` when they call none).
        log_dir: Where the log goes.
        what: What the eval is, for the interruption message (``the cell X``).
        options: ``eval_async`` options over :data:`EVAL_SETTINGS`.

    Raises:
        KeyboardInterrupt: The eval was interrupted before it wrote a log (Ctrl-C).
    """
    settings = {**EVAL_SETTINGS, "log_realtime": realtime(model), **options}
    with quiet_display():
        logs = await eval_async(task, model=model, log_dir=str(log_dir), **settings)
    if not logs:  # inspect_ai returns no log when Ctrl-C cancelled the eval
        raise KeyboardInterrupt(f"{what} was interrupted; rerun to resume")
    return logs[0]


class InOrder:
    """Runs the work of an eval's samples one at a time, in the order given.

    inspect_ai schedules samples as it likes; work that must follow a fixed
    order (a chain's tasks, each reading the store the earlier ones left) waits
    here for its turn. Admit every sample at once (``max_samples`` = their
    number) so a waiting sample never holds the place of the one whose turn it is.
    """

    def __init__(self, order: Iterable[Hashable]) -> None:
        self._order = list(order)
        self._next = 0
        self._turn = asyncio.Condition()

    @asynccontextmanager
    async def turn(self, key: Hashable) -> AsyncIterator[None]:
        """Wait until ``key`` is next, hold the turn while the block runs, then pass it on.

        Raises:
            KeyError: ``key`` is not in the order, or its turn has passed.
        """
        if key not in self._order[self._next:]:
            raise KeyError(f"{key!r} is not waiting for a turn")
        async with self._turn:
            await self._turn.wait_for(lambda: self._order[self._next] == key)
        try:
            yield
        finally:
            async with self._turn:
                self._next += 1
                self._turn.notify_all()


@solver
def _work_solver(work: Callable[[], Awaitable[Any]], result: list[Any]):  # type: ignore[no-untyped-def]
    """Run ``work`` as the sample's whole work; its value goes into ``result``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        result.append(await work())
        state.completed = True
        return state

    return solve


async def eval_work(name: str, model: Model | str, log_dir: Path,
                    work: Callable[[], Awaitable[T]],
                    metadata: dict[str, Any] | None = None) -> T:
    """Run ``work`` (e.g. a store build) as the one sample of an eval named ``name``.

    The sample is not retried: work of this kind resumes from its own records,
    so the caller reruns it instead.

    Raises:
        EvalFailed: ``work`` raised; the message has its error and the log's path.
        KeyboardInterrupt: The eval was interrupted before it wrote a log (Ctrl-C).
    """
    result: list[T] = []
    task = Task(dataset=MemoryDataset([Sample(input=name, id=name)], name=name),
                solver=_work_solver(work, result), name=name, metadata=metadata or {})
    log = await run_eval(task, model, log_dir, f"the build {name}", retry_on_error=0)
    if log.status != "success" or not result:
        error = log.error.message if log.error is not None else f"the eval ended {log.status}"
        raise EvalFailed(f"{error} (transcript: {log.location})")
    return result[0]


def eval_failure(log: EvalLog, unit: str = "sample") -> str | None:
    """Why an eval did not finish every sample (None when it did)."""
    if log.status == "success":
        return None
    failed = [s for s in log.samples or [] if s.error is not None]
    where = f"{unit} {failed[0].id}: " if failed else ""
    error = failed[0].error if failed else log.error
    message = error.message if error is not None else "no error message"
    return f"the eval {log.status} ({where}{message}); log {log.location}"


def note_eval(run_dir: Path, listing: Path, log: EvalLog) -> None:
    """Append an eval's log file to the JSON list at ``listing`` (one entry per attempt).

    The path is relative to the run folder, so a moved or copied run still finds it.
    """
    location = Path(log.location).absolute()
    if location.is_relative_to(run_dir.absolute()):
        location = location.relative_to(run_dir.absolute())
    evals: list[dict[str, Any]] = (json.loads(listing.read_text("utf-8"))
                                   if listing.exists() else [])
    evals.append({"log": str(location), "status": log.status,
                  "samples": len(log.eval.dataset.sample_ids or []),
                  "started": log.stats.started_at, "completed": log.stats.completed_at})
    write_json(listing, evals)
