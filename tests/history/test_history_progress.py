"""Status lines of ``history table`` and ``verify``: on stderr anywhere, spaced, and silenceable.

A real subprocess of the command line, its stderr a pipe (not a terminal), as
in CI, under nohup or redirected to a file.
"""

from __future__ import annotations

import gc
import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir.metrics import StepMetrics, StoreTree, measure_history
from memdir.progress import reporting
from memdir.store import Store
from memdir.store.history import History

STEPS = 12
LINE = re.compile(r"^history (table|verify): step (\d+)/(\d+) · \S+ elapsed( · .+)?$")


def _doc(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name} notes\n---\n# Work\n{body}\n"


@pytest.fixture
def history(tmp_path: Path) -> History:
    (tmp_path / "store").mkdir()
    store = Store(tmp_path / "store")
    history = History(store)
    history.init()
    for topic in range(4):  # the first step's Panel B has units and groups to compare
        for n in range(3):
            store.write(f"/memories/topic-{topic}/n{n}.md",
                        _doc(f"n{n}", f"notes on topic {topic}, part {n}, with some detail"))
    for k in range(STEPS):
        if k:
            store.write(f"/memories/topic-{k % 4}/n{k % 3}.md",
                        _doc(f"n{k % 3}", f"step {k}: notes on topic {k % 4}, with some detail"))
        history.snapshot(f"step {k}")
    return history


def _memdir(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "memdir", *args], capture_output=True,
                          text=True, env=env, stdin=subprocess.DEVNULL, timeout=300,
                          check=False)
    return done, time.monotonic() - start


def test_table_off_a_terminal_prints_plain_lines_on_stderr_only(history: History) -> None:
    done, _ = _memdir("history", str(history.root), "table", "--csv", "--progress-every", "0")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.strip().splitlines()
    assert rows[0].startswith("step,message,files") and len(rows) == 1 + STEPS
    assert "history table" not in done.stdout
    lines = done.stderr.splitlines()
    assert all(LINE.match(line) for line in lines), lines
    counted = [int(LINE.match(line).group(2)) for line in lines]  # type: ignore[union-attr]
    assert counted[-1] == STEPS and sorted(counted) == counted
    # The first step (which reads and parses every file version) tells how far it is.
    first = [line for line, n in zip(lines, counted, strict=True) if n == 0]
    assert any("reading" in line and "file versions" in line for line in first)
    assert any(re.search(r"parsed \d+/\d+ file versions", line) for line in first)
    assert any("B3 against" in line for line in first)


def test_table_lines_are_spaced_by_default(history: History) -> None:
    done, seconds = _memdir("history", str(history.root), "table")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert all(LINE.match(line) for line in lines), lines
    # the first report at once, then at most one every 10 s, and the last step
    assert 2 <= len(lines) <= 2 + int(seconds // 10)
    assert lines[-1].startswith(f"history table: step {STEPS}/{STEPS} ")
    assert "history table" not in done.stdout


def test_no_progress_silences_table_and_verify(history: History) -> None:
    for command in ("table", "verify"):
        done, _ = _memdir("history", str(history.root), command, "--no-progress")
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert done.stdout.strip()


def test_verify_off_a_terminal_tells_the_first_steps_writing(history: History) -> None:
    done, _ = _memdir("history", str(history.root), "verify", "--progress-every", "0")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{STEPS} steps checked, 0 mismatches\n"
    lines = done.stderr.splitlines()
    assert all(LINE.match(line) for line in lines), lines
    assert any("comparing the live store" in line for line in lines)
    assert any(re.search(r"step 1: wrote \d+/\d+ files", line) for line in lines)
    assert lines[-1].startswith(f"history verify: step {STEPS}/{STEPS} ")


def test_library_calls_stay_silent_outside_reporting(history: History,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    measure_history(history)
    history.verify()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    out = io.StringIO()
    with reporting(stream=out, enabled=True):
        measure_history(history)
    assert out.getvalue().splitlines()[-1].startswith(f"step {STEPS}/{STEPS} · ")


def test_the_rows_keep_no_tree(history: History) -> None:
    # Each step's tree holds lists of every unit and file: kept in every row, a
    # table's memory grew by the store's size at each step. Counted against the trees
    # alive before it: an xdist worker's earlier tests may still hold some of their own.
    gc.collect()
    before = _trees_alive()
    trajectory = measure_history(history)
    gc.collect()
    assert all(type(row.metrics) is StepMetrics for row in trajectory.rows)
    assert _trees_alive() <= before + 1  # the builder's last


def _trees_alive() -> int:
    return sum(isinstance(o, StoreTree) for o in gc.get_objects())
