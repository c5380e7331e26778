"""The status line of long work: counts, elapsed time, the estimate, and when it prints."""

from __future__ import annotations

import doctest
import io
from collections.abc import Iterator

import pytest

import memdir.progress
from memdir.progress import Progress, format_seconds, progress, reporting


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _clock(*ticks: float) -> Iterator[float]:
    return iter(ticks)


def test_the_line_counts_steps_and_estimates_from_this_runs_pace() -> None:
    out = io.StringIO()
    ticks = _clock(0.0, 72.0, 144.0, 150.0)
    bar = Progress(40, label="task", done=2, stream=out, enabled=True,
                   clock=lambda: next(ticks))
    bar.step()  # 72 s for one step this run, 37 left: ~44 min
    bar.step("task-17")
    lines = out.getvalue().splitlines()
    assert lines == ["task 3/40 · 1m12s elapsed · ~44m left",
                     "task 4/40 · 2m24s elapsed · ~43m left · task-17"]
    assert bar.status() == "task 4/40 · 2m30s elapsed · ~45m left"  # 75 s a step


def test_the_last_step_gives_no_estimate_and_steps_never_pass_the_total() -> None:
    out = io.StringIO()
    bar = Progress(1, label="chunk", stream=out, enabled=True, clock=lambda: 5.0)
    bar.step()
    bar.step()
    assert out.getvalue().splitlines() == ["chunk 1/1 · 0s elapsed"] * 2


def test_a_terminal_gets_one_redrawn_line_and_a_pipe_gets_nothing_by_default() -> None:
    tty = _Terminal()
    with Progress(3, label="chunk", stream=tty, clock=lambda: 0.0) as bar:
        bar.step()
        bar.step()
    assert tty.getvalue() == ("\r\x1b[Kchunk 1/3 · 0s elapsed · ~0s left"
                              "\r\x1b[Kchunk 2/3 · 0s elapsed · ~0s left\n")
    pipe = io.StringIO()
    with Progress(3, stream=pipe) as bar:
        bar.step()
    assert pipe.getvalue() == ""


def test_library_loops_print_only_inside_reporting() -> None:
    out = io.StringIO()
    progress(2, "pass").step()
    with reporting(stream=out, enabled=True):
        progress(2, "pass", done=1).step("nothing changed")
    progress(2, "pass").step()
    assert out.getvalue() == "pass 2/2 · 0s elapsed · nothing changed\n"


@pytest.mark.parametrize(("seconds", "shown"), [
    (0.4, "0s"), (59, "59s"), (72, "1m12s"), (3599, "59m59s"), (7500, "2h05m"),
])
def test_durations_read_as_a_person_writes_them(seconds: float, shown: str) -> None:
    assert format_seconds(seconds) == shown


def test_impossible_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="done <= total"):
        Progress(3, done=4)


def test_the_module_example_runs() -> None:
    assert doctest.testmod(memdir.progress, raise_on_error=True).attempted > 0
