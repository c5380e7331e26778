"""A status line for long work: ``chunk 3/40 · 1m12s elapsed · ~14m left`` on stderr.

:class:`Progress` counts the finished steps of a job whose size is known (the
chunks of a build, the tasks of a skills cell) and, after each one, prints how
far the job is, how long it has run and a guess of how long is left. The guess
is the mean time of the steps finished by this process times the steps left,
so a resumed job (``done`` above zero at the start) is not credited with the
steps an earlier process finished.

In a terminal the line is redrawn in place; elsewhere (a log file, a pipe,
CI) nothing is printed unless asked (``enabled=True``), and then each step
prints its own line, or, given ``every``, a line at the first report, then at
most one every ``every`` seconds, and one for the last step, so a long job's
log gets a few lines rather than one per step. :meth:`Progress.note` tells how
far the step under way is (``parsing files 3,000/10,254``) without counting
it, so a long first step is not silent: in a terminal at most ten redraws a
second, elsewhere under the same ``every``.

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

_REDRAW = 0.1
"""Least seconds between two redraws of a terminal's line by :meth:`Progress.note`."""


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
        every: Off a terminal, the least seconds between two lines (0: a line per
            step and per note). The first report and the last step always print.
        title: What the job is, put first on every line (``history table: step ...``).
        first_is_setup: The first step also sets the job up (reads and parses what
            every later step uses): once a later step is done, the estimate is made
            from the steps after it.

    Raises:
        ValueError: ``total`` is negative, or ``done`` is outside 0 to ``total``.
    """

    def __init__(self, total: int, *, label: str = "task", done: int = 0,
                 stream: TextIO | None = None, enabled: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, every: float = 0.0,
                 title: str = "", first_is_setup: bool = False) -> None:
        if total < 0 or not 0 <= done <= total:
            raise ValueError(f"progress needs 0 <= done <= total, not done={done}, "
                             f"total={total}")
        self.total, self.label, self.done = total, label, done
        self._stream = stream if stream is not None else sys.stderr
        self._tty = _is_tty(self._stream)
        self.enabled = self._tty if enabled is None else enabled
        self.every, self.title = every, title
        self._clock = clock
        self._start = clock()
        self._first = done
        self._drawn = False
        self._last: float | None = None  # when a line was last printed
        self._setup = first_is_setup
        self._paced_from: float | None = None  # when the setup step ended

    def status(self, note: str = "") -> str:
        """The line as it reads now, e.g. ``chunk 3/40 · 1m12s elapsed · ~14m left``."""
        return self._status(self._clock(), note)

    def _status(self, now: float, note: str) -> str:
        elapsed = now - self._start
        parts = [f"{self.label} {self.done}/{self.total}", f"{format_seconds(elapsed)} elapsed"]
        ran, paced = self.done - self._first, elapsed
        if self._paced_from is not None and ran > 1:
            ran, paced = ran - 1, now - self._paced_from
        if ran > 0 and self.done < self.total:
            parts.append(f"~{_estimate(paced / ran * (self.total - self.done))} left")
        if note:
            parts.append(note)
        line = " · ".join(parts)
        return f"{self.title}: {line}" if self.title else line

    def step(self, note: str = "") -> None:
        """Count one more finished step and print the line (``note`` is appended).

        Off a terminal with ``every`` set, the line is left out when one was printed
        less than ``every`` seconds ago, unless this is the last step.
        """
        self.done = min(self.total, self.done + 1)
        if not self.enabled:
            return
        now = self._clock()
        if self._setup and self._paced_from is None:
            self._paced_from = now
        if self._tty or self.done >= self.total or self._due(now, self.every):
            self._draw(self._status(now, note), now)

    def note(self, text: str) -> None:
        """Say how far the step under way is: the line with ``text`` at its end.

        Nothing is counted. Printed only when due: in a terminal at most ten times
        a second, elsewhere as :meth:`step` spaces its lines.
        """
        if not self.enabled:
            return
        now = self._clock()
        if self._due(now, _REDRAW if self._tty else self.every):
            self._draw(self._status(now, text), now)

    def _due(self, now: float, gap: float) -> bool:
        return self._last is None or now - self._last >= gap

    def _draw(self, line: str, now: float) -> None:
        self._last = now
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


_REPORTING: ContextVar[tuple[TextIO | None, bool | None, float, str] | None] = ContextVar(
    "memdir_progress", default=None)


@contextmanager
def reporting(stream: TextIO | None = None, enabled: bool | None = None, *,
              every: float = 0.0, title: str = "") -> Iterator[None]:
    """Inside the block, :func:`progress` reporters print (with these settings).

    Args:
        stream: Where the lines go (stderr if None).
        enabled: As :class:`Progress`'s: None prints only to a terminal.
        every: As :class:`Progress`'s: off a terminal, the least seconds between lines.
        title: As :class:`Progress`'s: the job's name at the start of each line.
    """
    token = _REPORTING.set((stream, enabled, every, title))
    try:
        yield
    finally:
        _REPORTING.reset(token)


def progress(total: int, label: str, done: int = 0, *,
             first_is_setup: bool = False) -> Progress:
    """A reporter for a library loop: it prints only inside :func:`reporting`.

    Args:
        total: The job's steps in all.
        label: What one step is called.
        done: Steps finished before this call (a resumed job).
        first_is_setup: As :class:`Progress`'s: the first step's time is left out
            of the estimate once a later step is done.
    """
    settings = _REPORTING.get()
    if settings is None:
        return Progress(total, label=label, done=done, enabled=False)
    stream, enabled, every, title = settings
    return Progress(total, label=label, done=done, stream=stream, enabled=enabled,
                    every=every, title=title, first_is_setup=first_is_setup)
