"""Bounds on one tool call: its time, the size of its result, what its errors echo.

:meth:`memdir.tools.ToolSet.call` runs every tool on a worker thread of its own
(:func:`run_bounded`), so a slow call never holds up the caller's event loop
(an MCP server keeps answering its other sessions), and with a deadline that a
tool can read (:func:`remaining`) to stop itself: grep hands it to the regex
engine, so no pattern outlives it. A read-only call still running at the
deadline is abandoned and reported as an error; a call that writes is waited
for, so the model is never told a change failed that then lands.

:func:`cap_text` cuts a result that is too long and says what was cut.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # asyncio is imported where a call is run, not to read a deadline
    import asyncio

__all__ = [
    "CallLimits",
    "CallTimeoutError",
    "cap_text",
    "default_limits",
    "echo",
    "remaining",
    "run_bounded",
]

T = TypeVar("T")

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "memdir_tool_deadline", default=None
)
_IDLE_WORKERS = 4
_GRACE_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class CallLimits:
    """How long one call may run and how much of its text the model is shown.

    Args:
        seconds: Wall-clock seconds a call may run.
        output_chars: Longest result text; longer results are cut with a note.
        error_chars: Longest error message (errors that echo a huge input).
    """

    seconds: float
    output_chars: int
    error_chars: int = 4000

    def __post_init__(self) -> None:
        if self.seconds <= 0 or self.output_chars <= 0 or self.error_chars <= 0:
            raise ValueError("call limits must be positive")


def default_limits() -> CallLimits:
    """The limits set by ``MEMDIR_TOOL_TIME_LIMIT`` and ``MEMDIR_TOOL_OUTPUT_CHARS``."""
    from memdir.config import get_settings  # read at the first call, not at import

    settings = get_settings()
    return CallLimits(settings.tool_time_limit, settings.tool_output_chars)


class CallTimeoutError(Exception):
    """A tool call ran past its deadline (the message says what to do instead)."""


def remaining() -> float | None:
    """Seconds left for the running tool call, or None outside a bounded call.

    Raises:
        CallTimeoutError: The deadline has already passed.
    """
    deadline = _DEADLINE.get()
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise CallTimeoutError("the call ran out of time")
    return left


def echo(text: str, limit: int = 80) -> str:
    """``text`` quoted for a message, shortened to about ``limit`` characters."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[: limit - 3]!r}... ({len(text):,} characters)"


def cap_text(text: str, limit: int, hint: str) -> str:
    """``text`` cut to at most about ``limit`` characters, ending with a note on the cut.

    The cut falls on a line break when one is near, so no line is shown half.

    Args:
        text: The full text.
        limit: The most characters to keep.
        hint: How to see the rest (one sentence).
    """
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", limit // 2, limit)
    kept = text[: cut if cut > 0 else limit]
    return (
        f"{kept}\n[cut: {len(text) - len(kept):,} of {len(text):,} characters not shown. "
        f"{hint}]"
    )


_Report = Callable[[Any, BaseException | None], None]


@dataclass(frozen=True, slots=True)
class _Job:
    context: contextvars.Context
    make: Callable[[], Awaitable[Any]]
    report: _Report


async def _await(make: Callable[[], Awaitable[T]]) -> T:
    return await make()


class _Worker(threading.Thread):
    """A daemon thread with an event loop of its own, running one call at a time.

    Daemon, so a call still running cannot keep the process alive after a stop.
    """

    def __init__(self, idle: deque[_Worker], lock: threading.Lock) -> None:
        super().__init__(name="memdir-tool-call", daemon=True)
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._idle = idle
        self._lock = lock

    def run(self) -> None:
        import asyncio

        with asyncio.Runner() as runner:
            while (job := self.jobs.get()) is not None:
                try:
                    result = runner.run(_await(job.make), context=job.context)
                except BaseException as exc:  # handed to the caller, who re-raises it
                    job.report(None, exc)
                else:
                    job.report(result, None)
                with self._lock:
                    if len(self._idle) >= _IDLE_WORKERS:
                        return
                    self._idle.append(self)


_IDLE: deque[_Worker] = deque()
_IDLE_LOCK = threading.Lock()


def _submit(job: _Job) -> None:
    with _IDLE_LOCK:
        worker = _IDLE.pop() if _IDLE else None
    if worker is None:
        worker = _Worker(_IDLE, _IDLE_LOCK)
        worker.start()
    worker.jobs.put(job)


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():
        return  # the caller stopped waiting
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


async def run_bounded(make: Callable[[], Awaitable[T]], seconds: float, *, abandon: bool) -> T:
    """Run the coroutine ``make()`` on a worker thread with a deadline ``seconds`` away.

    Args:
        make: Creates the coroutine (called on the worker thread).
        seconds: The deadline, readable inside through :func:`remaining`.
        abandon: Stop waiting at the deadline (for calls with no side effects);
            otherwise the call is waited for however long it takes.

    Raises:
        CallTimeoutError: ``abandon`` is set and the call did not finish in time.
    """
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not on asyncio (trio): run here, bounded only from inside
        token = _DEADLINE.set(time.monotonic() + seconds)
        try:
            return await make()
        finally:
            _DEADLINE.reset(token)
    future: asyncio.Future[T] = loop.create_future()

    def report(result: Any, exc: BaseException | None) -> None:
        try:
            loop.call_soon_threadsafe(_settle, future, result, exc)
        except RuntimeError:
            pass  # the caller's loop is closed: nobody is waiting for this result

    context = contextvars.copy_context()
    context.run(_DEADLINE.set, time.monotonic() + seconds)
    _submit(_Job(context, make, report))
    if not abandon:
        return await future
    try:
        return await asyncio.wait_for(asyncio.shield(future), seconds + _GRACE_SECONDS)
    except TimeoutError:
        future.cancel()  # its result, when it comes, is dropped (see _settle)
        raise CallTimeoutError("the call did not finish in time") from None
