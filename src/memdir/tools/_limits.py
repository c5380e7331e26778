"""Bounds on one tool call: its time, the size of its result, what its errors echo.

:meth:`memdir.tools.ToolSet.call` runs every tool on a worker thread of its own
(:func:`run_bounded`), so a slow call never holds up the caller's event loop
(an MCP server keeps answering its other sessions), and with a deadline that a
tool can read (:func:`remaining`) to stop itself: grep hands it to the regex
engine, so no pattern outlives it, and the store's walks and reads check it
between folders and files (:mod:`memdir.store._deadline`).

A read-only call still running at the deadline is answered with an error and
then stopped: if it has not ended by itself shortly after, its worker thread is
interrupted (an exception raised inside it at its next Python instruction), so
its CPU time and memory stop growing and what it allocated is freed; that
thread then retires instead of serving another call. A call that writes is
waited for, so the model is never told a change failed that then lands; the
writes check the deadline before they commit, so one that is out of time stops
with nothing written.

:func:`cap_text` cuts a result that is too long and says what was cut.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from memdir.store._deadline import (
    DEADLINE,
    CallTimeoutError,
    Deadline,
    check_deadline,
    deadline,
    remaining,
)

if TYPE_CHECKING:  # asyncio is imported where a call is run, not to read a deadline
    import asyncio

__all__ = [
    "CallLimits",
    "CallTimeoutError",
    "cap_text",
    "check_deadline",
    "default_limits",
    "echo",
    "remaining",
    "run_bounded",
]

T = TypeVar("T")

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


class CallStopped(BaseException):  # noqa: N818 - a stop, not an error of the call
    """Raised inside a read-only call's thread to stop it after its caller gave up.

    A BaseException, so the tool's own ``except Exception`` handlers let it through.
    """


@dataclass
class _Run:
    """Where a job runs, so that it can be stopped from the caller's thread."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    thread: int | None = None
    """The worker thread's ident while the job runs; None before and after."""
    stopped: bool = False

    def stop(self) -> bool:
        """Interrupt the job if it still runs; whether it did."""
        with self.lock:
            if self.thread is None or self.stopped:
                return False
            self.stopped = True
            return _raise_in(self.thread, CallStopped)


def _raise_in(thread: int, exc: type[BaseException] | None) -> bool:
    """Raise ``exc`` in ``thread`` at its next Python instruction (None: cancel a pending one)."""
    import ctypes  # only a call that overruns needs it: kept out of every process's start

    done: int = ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread), ctypes.py_object(exc) if exc is not None else None
    )
    return done == 1


@dataclass(frozen=True, slots=True)
class _Job:
    context: contextvars.Context
    make: Callable[[], Awaitable[Any]]
    report: _Report
    run: _Run = field(default_factory=_Run)


async def _await(make: Callable[[], Awaitable[T]]) -> T:
    return await make()


class _Worker(threading.Thread):
    """A daemon thread with an event loop of its own, running one call at a time.

    Daemon, so a call still running cannot keep the process alive after a stop.
    A thread whose call was stopped (:class:`CallStopped`) retires: the stop may
    have landed in its own bookkeeping, so it never serves another call.
    """

    def __init__(self, idle: deque[_Worker], lock: threading.Lock) -> None:
        super().__init__(name="memdir-tool-call", daemon=True)
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._idle = idle
        self._lock = lock

    def run(self) -> None:
        import asyncio

        try:
            with asyncio.Runner() as runner:
                while (job := self.jobs.get()) is not None:
                    self._run_job(runner, job)
                    if job.run.stopped:
                        return
                    with self._lock:
                        if len(self._idle) >= _IDLE_WORKERS:
                            return
                        self._idle.append(self)
        except CallStopped:
            pass  # stopped outside the call itself (closing its loop): retire all the same
        finally:
            try:
                _raise_in(threading.get_ident(), None)  # a stop still pending dies here
            except CallStopped:
                pass

    @staticmethod
    def _run_job(runner: asyncio.Runner, job: _Job) -> None:
        with job.run.lock:
            job.run.thread = threading.get_ident()
        try:
            result = runner.run(_await(job.make), context=job.context)
        except BaseException as exc:  # handed to the caller, who re-raises it
            with job.run.lock:
                job.run.thread = None
            if job.run.stopped:
                _drop_frames(exc)  # nobody waits for it; the frames held what the call made
            job.report(None, exc)
        else:
            with job.run.lock:
                job.run.thread = None
            job.report(result, None)


def _drop_frames(exc: BaseException | None) -> None:
    """Free the locals of the stopped call's frames, then drop ``exc``'s tracebacks.

    A traceback holds the frames of the stopped call, and so all it allocated,
    in a reference cycle (the task holds the exception, whose traceback holds
    the task's frame) that only a full garbage collection would free. Dropping
    the traceback is not enough where asyncio's pure-Python task is in use (as
    after nest_asyncio patches asyncio): its future keeps a traceback of its own.
    Clearing the frames frees their locals whoever still holds them.
    """
    import traceback  # only a failed call needs it: kept out of every process's start

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)  # skips frames still running
        exc.__traceback__ = None
        exc = exc.__context__


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
    if isinstance(exc, CallStopped):
        exc = CallTimeoutError("the call was stopped")
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


async def run_bounded(make: Callable[[], Awaitable[T]], seconds: float, *, abandon: bool) -> T:
    """Run the coroutine ``make()`` on a worker thread with a deadline ``seconds`` away.

    Args:
        make: Creates the coroutine (called on the worker thread).
        seconds: The deadline, readable inside through :func:`remaining`.
        abandon: Stop waiting at the deadline and stop the call (for calls with
            no side effects); otherwise the call is waited for however long it
            takes (it still sees the deadline and may stop itself).

    Raises:
        CallTimeoutError: The call ran out of time: ``abandon`` is set and it did
            not finish, or it stopped itself at the deadline.
    """
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not on asyncio (trio): run here, bounded only from inside
        with deadline(seconds, interruptible=abandon):
            return await make()
    future: asyncio.Future[T] = loop.create_future()

    def report(result: Any, exc: BaseException | None) -> None:
        try:
            loop.call_soon_threadsafe(_settle, future, result, exc)
        except RuntimeError:
            pass  # the caller's loop is closed: nobody is waiting for this result

    context = contextvars.copy_context()
    context.run(DEADLINE.set, Deadline(time.monotonic() + seconds, abandon))
    job = _Job(context, make, report)
    _submit(job)
    if not abandon:
        return await future
    try:
        return await asyncio.wait_for(asyncio.shield(future), seconds + _GRACE_SECONDS)
    except TimeoutError:
        future.cancel()  # its result, when it comes, is dropped (see _settle)
        job.run.stop()  # and the work itself ends: its thread is interrupted
        raise CallTimeoutError("the call did not finish in time") from None
    except asyncio.CancelledError:
        future.cancel()
        job.run.stop()  # the caller gave up (a cancelled MCP request): so does the call
        raise
