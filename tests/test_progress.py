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


def test_off_a_terminal_every_spaces_the_lines_but_keeps_the_first_and_the_last() -> None:
    out = io.StringIO()
    now = [0.0]
    bar = Progress(100, label="step", stream=out, enabled=True, every=10.0,
                   clock=lambda: now[0])
    for _ in range(100):  # a step every 0.7 s: 70 s in all
        now[0] += 0.7
        bar.step()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("step 1/100 · 1s elapsed")  # the first report, at once
    assert lines[-1] == "step 100/100 · 1m10s elapsed"  # the last step, whenever it comes
    assert len(lines) == 8  # 0.7 s, then every 10 s (15 steps), and the last
    assert [int(line.split()[1].split("/")[0]) for line in lines] == [
        1, 16, 31, 46, 61, 76, 91, 100]


def test_notes_tell_how_far_the_step_under_way_is_at_the_same_bounded_rate() -> None:
    out = io.StringIO()
    now = [0.0]
    bar = Progress(3, label="step", stream=out, enabled=True, every=5.0, title="history table",
                   clock=lambda: now[0])
    for k in range(1, 31):  # 30 files parsed in 15 s, all within the first step
        now[0] = k / 2
        bar.note(f"parsed {k}/30 files")
    assert out.getvalue().splitlines() == [
        "history table: step 0/3 · 0s elapsed · parsed 1/30 files",
        "history table: step 0/3 · 6s elapsed · parsed 11/30 files",
        "history table: step 0/3 · 10s elapsed · parsed 21/30 files",
    ]


def test_a_terminal_redraws_notes_at_most_ten_times_a_second_and_every_step() -> None:
    tty = _Terminal()
    now = [0.0]
    with Progress(2, label="step", stream=tty, every=60.0, clock=lambda: now[0]) as bar:
        for k in range(1, 11):  # ten notes in a quarter of a second
            now[0] = k * 0.025
            bar.note(f"n{k}")
        bar.step()
        bar.step()
    assert tty.getvalue().count("\r\x1b[K") == 3 + 2  # notes at 0.025, 0.125, 0.225; 2 steps
    assert tty.getvalue().endswith("\r\x1b[Kstep 2/2 · 0s elapsed\n")


def test_nothing_is_printed_or_timed_when_disabled() -> None:
    reads: list[float] = []

    def clock() -> float:
        reads.append(0.0)
        return 0.0

    out = io.StringIO()
    bar = Progress(2, stream=out, enabled=False, clock=clock)
    for _ in range(1000):  # a note per file costs a test of a flag, not a clock read
        bar.note("parsing")
    bar.step()
    assert out.getvalue() == "" and len(reads) == 1  # the start


def test_a_setup_first_step_is_left_out_of_the_estimate() -> None:
    out = io.StringIO()
    ticks = _clock(0.0, 60.0, 61.0, 62.0)  # a 60 s first step, then 1 s a step
    bar = Progress(102, label="step", stream=out, enabled=True, first_is_setup=True,
                   clock=lambda: next(ticks))
    bar.step()
    bar.step()
    bar.step()
    assert out.getvalue().splitlines() == [
        "step 1/102 · 1m00s elapsed · ~1h41m left",  # one step seen: its pace is all there is
        "step 2/102 · 1m01s elapsed · ~2m left",  # 1 s a step since, 100 left
        "step 3/102 · 1m02s elapsed · ~2m left",
    ]


def test_reporting_passes_its_spacing_and_title_to_library_loops() -> None:
    out = io.StringIO()
    with reporting(stream=out, enabled=True, every=3600.0, title="job"):
        shown = progress(50, "step")
        for _ in range(50):
            shown.step()
    assert out.getvalue().splitlines() == ["job: step 1/50 · 0s elapsed · ~0s left",
                                           "job: step 50/50 · 0s elapsed"]
