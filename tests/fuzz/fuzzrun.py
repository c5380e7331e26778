"""Sending generated calls in process and judging what came back: time, memory, result.

The suite's hypothesis profiles live here too. ``memdir-fuzz-ci`` is what the
test suite runs: few examples, derandomized (the same calls on every run,
seeded from each test's name), no example database, no deadline (a call's time
is judged against its own limit instead). ``memdir-fuzz-heavy`` has more
examples; ``MEMDIR_FUZZ_PROFILE`` picks one for a pytest run, and
``benchmarks/fuzz.py`` sends the same calls in greater number and only counts.

:class:`Surface` is one way in (a tool set's ``call``, the Anthropic adapter's
``handle``); :meth:`Surface.send` makes one call and records its outcome in the
surface's :class:`Tally`: the wall time of the call against the surface's
limit, the peak of Python memory allocated during it (``tracemalloc``, every
thread), and whether it raised. Tests assert on each outcome; the benchmark
only counts.
"""

from __future__ import annotations

import asyncio
import os
import time
import tracemalloc
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fuzzcalls import Call, utf8_clean
from hypothesis import HealthCheck, settings

__all__ = ["FUZZ", "SLACK_SECONDS", "Outcome", "Surface", "Tally", "problems"]

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
          HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture]
settings.register_profile("memdir-fuzz-ci", max_examples=30, derandomize=True, database=None,
                          deadline=None, suppress_health_check=_QUIET, print_blob=False)
settings.register_profile("memdir-fuzz-heavy", parent=settings.get_profile("memdir-fuzz-ci"),
                          max_examples=600)

FUZZ = settings.get_profile(os.environ.get("MEMDIR_FUZZ_PROFILE", "memdir-fuzz-ci"))
"""The settings every fuzz test runs under (not loaded globally: other tests keep theirs)."""

SLACK_SECONDS = 2.0
"""Time a call may take beyond its limit: the abandon grace (0.5 s) and a loaded machine."""
MEMORY_BOUND = 256 * 1024 * 1024
"""The most Python memory one call may allocate at its peak (its input included)."""


@dataclass
class Tally:
    """Counts over every call sent through one surface."""

    surface: str
    calls: int = 0
    raises: int = 0
    over_time: int = 0
    bad_results: int = 0
    peak_bytes: int = 0
    slowest: float = 0.0
    raised: Counter[str] = field(default_factory=Counter)
    broken: Counter[str] = field(default_factory=Counter)
    first: dict[str, str] = field(default_factory=dict)
    """Each kind of raise -> the message of its first occurrence."""

    def row(self) -> dict[str, Any]:
        """The tally as one table row."""
        return {"surface": self.surface, "calls": self.calls, "raises": self.raises,
                "over_time": self.over_time, "bad_results": self.bad_results,
                "peak_mb": round(self.peak_bytes / 2 ** 20, 1),
                "slowest_s": round(self.slowest, 2), "raised": dict(self.raised),
                "broken": dict(self.broken), "first": self.first}


@dataclass
class Outcome:
    """What one call did."""

    call: Call
    content: str | None
    is_error: bool
    error: BaseException | None
    seconds: float
    peak_bytes: int
    limit: float
    max_chars: int


def problems(outcome: Outcome) -> list[str]:
    """Every way ``outcome`` breaks the contract (empty when the call behaved)."""
    found = []
    if outcome.error is not None:
        found.append(f"raised {type(outcome.error).__name__}: {str(outcome.error)[:300]}")
    if outcome.seconds > outcome.limit + SLACK_SECONDS:
        found.append(f"took {outcome.seconds:.2f} s, limit {outcome.limit:g} s")
    if outcome.peak_bytes > MEMORY_BOUND:
        found.append(f"allocated {outcome.peak_bytes / 2 ** 20:.0f} MB at its peak")
    if outcome.content is not None:
        if not isinstance(outcome.content, str):
            found.append(f"content is {type(outcome.content).__name__}, not text")
        elif not utf8_clean(outcome.content):
            found.append("content holds a lone surrogate: it cannot be sent as UTF-8")
        elif len(outcome.content) > outcome.max_chars:
            found.append(f"content is {len(outcome.content):,} characters, "
                         f"over the cap of {outcome.max_chars:,}")
    return found


class Surface:
    """One way a call gets in, with its limit and its tally.

    Args:
        name: The surface's name in the table.
        send: Makes the call: takes the call and its built payload, returns
            ``(content, is_error)``.
        limit: Seconds the call may take (before :data:`SLACK_SECONDS`).
        max_chars: The longest content a result may have.
        run: Runs a coroutine to its end (an event loop's ``run``).
        trace: Measure the Python memory the call allocates (in-process surfaces).
    """

    def __init__(self, name: str, send: Callable[[Call, Any], Awaitable[tuple[str, bool]]],
                 limit: float, max_chars: int, run: Callable[[Awaitable[Any]], Any], *,
                 trace: bool = True) -> None:
        self.tally = Tally(name)
        self._send = send
        self.limit = limit
        self.max_chars = max_chars
        self._run = run
        self._trace = trace

    def send(self, call: Call) -> Outcome:
        """Make ``call`` once, measured; the tally counts it."""
        payload = call.payload()  # built before the clock starts: the caller's cost
        content: str | None = None
        is_error = False
        error: BaseException | None = None
        if self._trace:
            tracemalloc.start()  # only the call's own allocations, not the generator's
        started = time.monotonic()
        try:
            content, is_error = self._run(self._send(call, payload))
        except Exception as exc:  # counted and reported: the point of the suite
            error = exc
        seconds = time.monotonic() - started
        peak = 0
        if self._trace:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        outcome = Outcome(call, content, is_error, error, seconds, peak, self.limit,
                          self.max_chars)
        self._count(outcome)
        return outcome

    def _count(self, outcome: Outcome) -> None:
        tally = self.tally
        tally.calls += 1
        tally.slowest = max(tally.slowest, outcome.seconds)
        tally.peak_bytes = max(tally.peak_bytes, outcome.peak_bytes)
        if outcome.error is not None:
            tally.raises += 1
            key = f"{type(outcome.error).__name__} in {outcome.call.tool[:20]!r}"
            tally.raised[key] += 1
            tally.first.setdefault(key, str(outcome.error)[:200])
        if outcome.seconds > outcome.limit + SLACK_SECONDS:
            tally.over_time += 1
        if outcome.error is None and outcome.content is not None:
            broken = [p for p in problems(outcome) if p.startswith("content")]
            if broken:
                tally.bad_results += 1
                tally.broken[broken[0].split(":")[0][:60]] += 1


LIMIT_SECONDS = 5.0
"""Each in-process surface's time limit per call (memdir's default)."""
OUTPUT_CHARS = 20_000
SHELL_TIMEOUT = 10.0
"""The bash tool's own time limit; a writing shell call is waited for up to it."""


def known_paths(store_root: Any) -> list[str]:
    """The virtual path of every file and folder of the store at ``store_root``."""
    from pathlib import Path

    root = Path(store_root)
    found = ["/memories"]
    for entry in sorted(root.rglob("*")):
        relative = entry.relative_to(root)
        if relative.parts[0].startswith("."):
            continue
        found.append("/memories/" + relative.as_posix())
    return found


def toolset_surface(name: str, store: Any, runner: asyncio.Runner) -> tuple[Surface, Any]:
    """The tool set ``name`` over ``store`` as a surface, and the set itself.

    Raises:
        SandboxUnavailableError: ``name`` is a shell set and no confinement works here.
    """
    from memdir.tools import make_toolset
    from memdir.tools._limits import CallLimits

    toolset = make_toolset(name, store)
    toolset.limits = CallLimits(LIMIT_SECONDS, OUTPUT_CHARS)
    limit = max(LIMIT_SECONDS, SHELL_TIMEOUT) if name == "shell" else LIMIT_SECONDS
    cap = max(OUTPUT_CHARS, toolset.limits.error_chars) + 1_000

    async def send(call: Call, payload: Any) -> tuple[str, bool]:
        result = await toolset.call(call.tool, payload)
        return result.content, result.is_error

    return Surface(f"toolset {name}", send, limit, cap, runner.run), toolset


def adapter_surface(profile: str, store: Any, runner: asyncio.Runner) -> Surface:
    """The Anthropic memory tool adapter under ``profile`` as a surface.

    A call's arguments are the ``input`` of a ``tool_use`` block naming the memory tool.
    """
    from memdir.tools._limits import CallLimits
    from memdir.tools.anthropic import MemoryToolAdapter

    limits = CallLimits(LIMIT_SECONDS, OUTPUT_CHARS)
    adapter = MemoryToolAdapter(store, profile=profile, limits=limits)  # type: ignore[arg-type]
    cap = max(OUTPUT_CHARS, limits.error_chars) + 1_000

    async def send(call: Call, payload: Any) -> tuple[str, bool]:
        block = {"type": "tool_use", "id": "toolu_fuzz", "name": "memory", "input": payload}
        result = await adapter.handle(block)
        return result["content"], bool(result["is_error"])

    return Surface(f"adapter {profile}", send, LIMIT_SECONDS, cap, runner.run)
