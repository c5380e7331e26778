"""A status line for long work: ``chunk 3/40 · 1m12s elapsed · ~14m left`` on stderr.

:class:`Progress` counts the finished steps of a job whose size is known (the
chunks of a build, the tasks of a skills cell) and, after each one, prints how
far the job is, how long it has run and a guess of how long is left. The guess
is the mean time of the steps finished by this process times the steps left,
so a resumed job (``done`` above zero at the start) is not credited with the
steps an earlier process finished.

In a terminal the line is redrawn in place; elsewhere (a log file, a pipe,
CI) nothing is printed unless asked (``enabled=True``), and then each step
prints its own line.

Library loops (a builder's chunk loop) call :func:`progress`, which stays
silent unless the caller turned reporting on around them with
:func:`reporting`: a command line turns it on, a study running many builds
at once does not.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> ticks = iter([0.0, 60.0, 120.0])
    >>> with Progress(4, label="chunk", stream=out, enabled=True,
    ...               clock=lambda: next(ticks)) as bar:
    ...     bar.step()
    >>> print(out.getvalue(), end="")
    chunk 1/4 · 1m00s elapsed · ~3m left
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType
from typing import TextIO

__all__ = ["Progress", "format_seconds", "progress", "reporting"]


def format_seconds(seconds: float) -> str:
    """A duration as a person reads it: ``8s``, ``1m12s``, ``14m``, ``2h05m``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _estimate(seconds: float) -> str:
    """A guess rounded as a guess: whole minutes past one minute (``~14m``, ``~2h05m``)."""
    if seconds < 60:
        return format_seconds(seconds)
    if seconds < 3600:
        return f"{max(1, round(seconds / 60))}m"
    return format_seconds(seconds)


class Progress:
    """How far a job of ``total`` steps is, printed after each finished step.

    Args:
        total: The job's steps in all (those finished before included).
        label: What one step is called (``task``, ``chunk``, ``pass``).
        done: Steps already finished when this reporter starts (a resumed job).
        stream: Where the line goes (stderr if None).
        enabled: Print at all; None prints only when ``stream`` is a terminal.
        clock: Seconds from some fixed point (``time.monotonic``; tests pass a fake).

    Raises:
        ValueError: ``total`` is negative, or ``done`` is outside 0 to ``total``.
    """

    def __init__(self, total: int, *, label: str = "task", done: int = 0,
                 stream: TextIO | None = None, enabled: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if total < 0 or not 0 <= done <= total:
            raise ValueError(f"progress needs 0 <= done <= total, not done={done}, "
                             f"total={total}")
        self.total, self.label, self.done = total, label, done
        self._stream = stream if stream is not None else sys.stderr
        self._tty = _is_tty(self._stream)
        self.enabled = self._tty if enabled is None else enabled
        self._clock = clock
        self._start = clock()
        self._first = done
        self._drawn = False

    def status(self, note: str = "") -> str:
        """The line as it reads now, e.g. ``chunk 3/40 · 1m12s elapsed · ~14m left``."""
        elapsed = self._clock() - self._start
        parts = [f"{self.label} {self.done}/{self.total}", f"{format_seconds(elapsed)} elapsed"]
        ran = self.done - self._first
        if ran > 0 and self.done < self.total:
            parts.append(f"~{_estimate(elapsed / ran * (self.total - self.done))} left")
        if note:
            parts.append(note)
        return " · ".join(parts)

    def step(self, note: str = "") -> None:
        """Count one more finished step and print the line (``note`` is appended)."""
        self.done = min(self.total, self.done + 1)
        self._draw(self.status(note))

    def _draw(self, line: str) -> None:
        if not self.enabled:
            return
        if self._tty:
            self._stream.write(f"\r\x1b[K{line}")
            self._drawn = True
        else:
            self._stream.write(line + "\n")
        self._stream.flush()

    def close(self) -> None:
        """End the redrawn line, so what is printed next starts on a line of its own."""
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


_REPORTING: ContextVar[tuple[TextIO | None, bool | None] | None] = ContextVar(
    "memdir_progress", default=None)


@contextmanager
def reporting(stream: TextIO | None = None, enabled: bool | None = None) -> Iterator[None]:
    """Inside the block, :func:`progress` reporters print (with these settings).

    Args:
        stream: Where the lines go (stderr if None).
        enabled: As :class:`Progress`'s: None prints only to a terminal.
    """
    token = _REPORTING.set((stream, enabled))
    try:
        yield
    finally:
        _REPORTING.reset(token)


def progress(total: int, label: str, done: int = 0) -> Progress:
    """A reporter for a library loop: it prints only inside :func:`reporting`.

    Args:
        total: The job's steps in all.
        label: What one step is called.
        done: Steps finished before this call (a resumed job).
    """
    settings = _REPORTING.get()
    if settings is None:
        return Progress(total, label=label, done=done, enabled=False)
    stream, enabled = settings
    return Progress(total, label=label, done=done, stream=stream, enabled=enabled)
