"""The deadline of the running tool call, checked inside the store's own loops.

The tool dispatcher (:mod:`memdir.tools._limits`) sets a deadline on every call
it runs. Code below it reads the deadline in two ways:

- :func:`check_deadline`, between the folders of a walk and the files of a
  read, stops a call that only reads at a clean point (its handles closed) once
  its time is up, instead of running on after its caller has given up. In a call
  that writes it does nothing: such a call is waited for, and the walks it makes
  after its change (the shell tool's clean-up, a report of broken links) must
  run to the end.
- :func:`remaining` tells any call how long it has left and raises once it has
  none: grep hands it to the regex engine, and an edit checks it before it
  commits, so an edit that ran out of time stops with nothing written.

Outside a bounded call there is no deadline and the checks cost one
context-variable read.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["CallTimeoutError", "Deadline", "check_deadline", "deadline", "remaining"]


@dataclass(frozen=True, slots=True)
class Deadline:
    """When the running call is out of time, and whether it may be stopped anywhere."""

    end: float
    """A :func:`time.monotonic` time."""
    interruptible: bool
    """The call only reads, so it may stop at any check (see :func:`check_deadline`)."""


DEADLINE: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "memdir_tool_deadline", default=None
)
"""The running call's deadline (None: no deadline)."""


class CallTimeoutError(Exception):
    """A tool call ran past its deadline (the message says what to do instead).

    Not a :class:`~memdir.store.StoreError`: the dispatcher answers it with its own
    message naming the time limit.
    """


def remaining() -> float | None:
    """Seconds left for the running tool call, or None outside a bounded call.

    Raises:
        CallTimeoutError: The deadline has already passed.
    """
    current = DEADLINE.get()
    if current is None:
        return None
    left = current.end - time.monotonic()
    if left <= 0:
        raise CallTimeoutError("the call ran out of time")
    return left


def check_deadline() -> None:
    """Stop the running read-only call if it is out of time (a no-op otherwise).

    Raises:
        CallTimeoutError: The call only reads and its deadline has passed.
    """
    current = DEADLINE.get()
    if current is not None and current.interruptible and time.monotonic() >= current.end:
        raise CallTimeoutError("the call ran out of time")


@contextmanager
def deadline(seconds: float, *, interruptible: bool) -> Iterator[None]:
    """Run the block with a deadline ``seconds`` from now (the earlier one if nested)."""
    end = time.monotonic() + seconds
    outer = DEADLINE.get()
    if outer is not None:
        end = min(end, outer.end)
        interruptible = interruptible and outer.interruptible
    token = DEADLINE.set(Deadline(end, interruptible))
    try:
        yield
    finally:
        DEADLINE.reset(token)
