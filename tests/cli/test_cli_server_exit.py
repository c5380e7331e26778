"""Servers freeze what start-up built, so stopping one does not wait on the collector.

Timing the exit in a test would be flaky on a shared machine (the speed-up, one to
two seconds down to a few tenths after Ctrl-C, is measured outside the suite); what
is tested is that each long-running command froze its start-up heap before serving.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from interrupting import default_sigint

_REPORTING = ("import atexit, gc, sys\n"
              "atexit.register(lambda: sys.stderr.write(f'frozen={gc.get_freeze_count()}\\n'))\n"
              "from memdir.cli import main\n"
              "sys.argv = ['memdir', *sys.argv[1:]]\n"
              "main()\n")
"""Runs ``memdir ARGS``; as it exits, says how many objects the collector had frozen."""


def _frozen(err: str) -> int:
    lines = [ln for ln in err.splitlines() if ln.startswith("frozen=")]
    assert lines, err
    return int(lines[-1].removeprefix("frozen="))


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "s"
    subprocess.run([sys.executable, "-m", "memdir", "init", str(root)], check=True,
                   capture_output=True, timeout=120)
    return root


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_browse_freezes_its_start_up_heap_before_serving(tmp_path: Path) -> None:
    root = _store(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", _REPORTING, "browse", str(root),
                             "--port", "0"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        assert proc.stderr is not None
        seen = ""
        while "Ctrl-C stops it" not in seen:
            line = proc.stderr.readline()
            assert line, f"browse ended before serving: {seen}"
            seen += line
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "stopped." in err
    assert _frozen(err) > 10_000  # modules, classes and the catalog, all of start-up


def test_a_stdio_server_freezes_its_start_up_heap_before_serving(tmp_path: Path) -> None:
    root = _store(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    done = subprocess.run([sys.executable, "-c", _REPORTING, "serve", str(root)],
                          input="", capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert _frozen(done.stderr) > 10_000
