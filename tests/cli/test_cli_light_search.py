"""``memdir tool --set bm25`` search in a new process loads neither pydantic nor asyncio,
and answers every call exactly as the full command line does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app

_HEAVY = ("pydantic", "asyncio", "typer", "docstring_parser", "memdir.store._lint")
_MAIN = (
    "import sys\nsys.argv = ['memdir', *sys.argv[1:]]\nfrom memdir.cli import main\n"
    "try:\n    main()\nfinally:\n"
    f"    print('loaded:', *sorted(m for m in {_HEAVY!r} if m in sys.modules), "
    "file=sys.stderr)\n"
)


def _memdir(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("MEMDIR_")}
    env = {"MEMDIR_TOOL_TIME_LIMIT": "3600", **env}  # a loaded machine: answers, not timeouts
    return subprocess.run([sys.executable, "-c", _MAIN, *args], capture_output=True,
                          text=True, timeout=300, env={**clean, **env}, check=False)


def _search(**arguments: object) -> str:
    return json.dumps({"name": "search", "arguments": arguments})


@pytest.mark.parametrize(("arguments", "status"), [
    ({"query": "maya bristol job"}, 0),
    ({"query": "maya", "k": 2}, 0),
    ({"query": "maya", "k": 1, "path": "/memories/people"}, 0),
    ({"query": "zzzunseenword"}, 0),  # no hit
    ({"query": "?? !"}, 2),  # no searchable word
    ({"query": "maya", "k": 0}, 2),
    ({"query": "maya", "path": "/memories/nowhere"}, 2),
    ({"query": "maya", "path": "/etc"}, 2),
])
def test_a_plain_search_loads_no_framework_and_prints_what_the_app_prints(
        runner: CliRunner, sample_dir: Path, arguments: dict[str, object], status: int
) -> None:
    args = ["tool", str(sample_dir), "--set", "bm25", _search(**arguments)]
    fast = _memdir(*args, MEMDIR_TOOL_OUTPUT_CHARS="160000")
    assert fast.returncode == status, fast.stderr
    assert fast.stderr.strip().splitlines()[-1] == "loaded:"
    through_app = runner.invoke(app, args)
    assert through_app.exit_code == status, through_app.output
    assert fast.stdout == through_app.stdout and fast.stdout.strip()


@pytest.mark.parametrize(("arguments", "env"), [
    ({"query": "maya", "k": "2"}, {}),  # the argument model coerces: its call
    ({"query": "maya", "k": True}, {}),
    ({"query": "maya", "extra": 1}, {}),
    ({"k": 2}, {}),
    ({"query": "maya"}, {"MEMDIR_TOOL_TIME_LIMIT": "3.6e3"}),  # a setting only the model reads
])
def test_a_search_that_is_not_plain_is_answered_through_the_tool_set(
        sample_dir: Path, arguments: dict[str, object], env: dict[str, str]) -> None:
    args = ["tool", str(sample_dir), "--set", "bm25", _search(**arguments)]
    done = _memdir(*args, **env)
    assert "pydantic" in done.stderr.strip().splitlines()[-1]
    full = _memdir(*_full(args), **env)
    assert "typer" in full.stderr.strip().splitlines()[-1]
    assert (done.returncode, done.stdout) == (full.returncode, full.stdout)


def _full(args: list[str]) -> list[str]:
    """The same call spelt so that the full command line answers it (``--set=bm25``)."""
    return [args[0], args[1], "--set=" + args[3], *args[4:]]


def test_a_long_answer_is_cut_as_the_tool_set_cuts_it(sample_dir: Path) -> None:
    args = ["tool", str(sample_dir), "--set", "bm25", _search(query="maya bristol", k=5)]
    env = {"MEMDIR_TOOL_OUTPUT_CHARS": "300"}
    fast = _memdir(*args, **env)
    assert fast.stderr.strip().splitlines()[-1] == "loaded:"
    assert "[cut:" in fast.stdout
    assert fast.stdout == _memdir(*_full(args), **env).stdout
