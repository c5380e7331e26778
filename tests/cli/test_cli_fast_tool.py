"""``memdir tool``'s quick start: plain calls of read-only sets skip typer, and print the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app

# Runs the real entry point, then says on stderr whether typer was loaded.
_MAIN = (
    "import sys\nsys.argv = ['memdir', *sys.argv[1:]]\nfrom memdir.cli import main\n"
    "try:\n    main()\nfinally:\n"
    "    print('loaded:', *sorted(m for m in ('typer',) if m in sys.modules), file=sys.stderr)\n"
)


def _memdir(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("MEMDIR_")}
    return subprocess.run([sys.executable, "-c", _MAIN, *args], capture_output=True,
                          text=True, timeout=120, env={**clean, **env}, check=False)


def _call(name: str, **arguments: object) -> str:
    return json.dumps({"name": name, "arguments": arguments})


@pytest.mark.parametrize(("flags", "call", "status"), [
    ([], _call("view", path="/memories"), 0),
    (["--set", "read"], _call("grep", pattern="Maya"), 0),
    (["--set", "bm25"], _call("search", query="maya bristol job"), 0),
    (["--set", "chunk"], _call("bm25_chunk_retrieve", query="maya"), 0),
    ([], _call("view", path="/memories/nowhere.md"), 2),  # the tool's error, on stdout
    ([], _call("grep", pattern="(unclosed"), 2),
    ([], '{"name": "view"}', 2),  # a missing argument is the tool's error too
])
def test_a_plain_call_skips_the_framework_and_prints_what_the_app_prints(
    runner: CliRunner, sample_dir: Path, flags: list[str], call: str, status: int
) -> None:
    args = ["tool", str(sample_dir), *flags, call]
    fast = _memdir(*args)
    assert fast.returncode == status, fast.stderr
    assert fast.stderr.strip() == "loaded:"  # typer never loaded
    through_app = runner.invoke(app, args)
    assert through_app.exit_code == status, through_app.output
    assert fast.stdout == through_app.stdout
    assert fast.stdout.strip()


@pytest.mark.parametrize(("args", "expected"), [
    (["--set", "write", _call("view", path="/memories")], None),  # a set that writes
    (["--set", "nosuch", _call("view", path="/memories")], "unknown tool set"),
    (["not json"], "cannot read the call"),
    (['{"name": "view", "extra": 1}'], "unknown key"),
    (["--list"], None),
    (["--set=bm25", _call("view", path="/memories")], None),
])
def test_anything_else_goes_to_the_full_command_line(
    sample_dir: Path, args: list[str], expected: str | None
) -> None:
    done = _memdir("tool", str(sample_dir), *args)
    assert "typer" in done.stderr.splitlines()[-1], done.stderr
    if expected is not None:
        assert done.returncode == 2 and expected in done.stderr


def test_a_bad_setting_is_reported_before_any_call(sample_dir: Path) -> None:
    done = _memdir("tool", str(sample_dir), _call("view", path="/memories"),
                   MEMDIR_TOOL_TIME_LIMIT="soon")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "bad environment setting" in done.stderr


def test_a_missing_store_gets_the_usual_hint(tmp_path: Path) -> None:
    done = _memdir("tool", str(tmp_path / "nope"), _call("view", path="/memories"))
    assert done.returncode == 2
    assert "no store at" in done.stderr and "memdir init" in done.stderr
