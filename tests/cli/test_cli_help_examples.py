"""The examples in ``memdir CMD --help`` read as written at 80 columns, and run.

A help text's examples are the commands a newcomer copies first. Each one must
be shown whole (never refilled across lines), name only files the sample store
has, and run as written in a folder where ``./memories`` is the sample store.
The few that cannot run here are listed in :data:`NOT_RUN` with the reason; an
example missing from both is a failure, so none is skipped silently.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from docs_model import FakeOpenAIServer
from memdir.cli import app
from memdir.sample import build_sample_store

ROOT = typer.main.get_command(app)
WIDTH = 80
NOT_RUN = {
    "--transport http": "an HTTP server that waits for clients (tests/server)",
    "--sync": "syncs with a remote the store's replica names (docs/replicas.md, tests)",
    "memdir clone": "clones a store from a remote (tests/replicas drive it)",
    "memdir sync": "syncs a clone with its remote (tests/replicas drive it)",
    "browse": "a web server that waits for a browser (tests/browse drive it)",
}
OPENAI = ("-m openai/", "--model openai/")
"""An example naming an OpenAI model runs against the docs test's fake server on loopback."""
DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
FILLED = {"../shared/data": str(DATA)}
"""Placeholders the test fills: the data folder, as seen from the repository's root."""
TALK = {"speakers": ["Maya", "Theo"], "sessions": [{"id": "1", "date": "2025-10-20", "turns": [
    {"speaker": "Maya", "text": "Theo's visit was lovely; we walked the harbour."},
    {"speaker": "Theo", "text": "I left the bowl I made on your shelf."}]}]}
"""``talk.json``, the conversation file an example ingests, in the format its help gives."""


def _commands() -> list[tuple[str, typer.core.TyperCommand]]:
    assert isinstance(ROOT, TyperGroup)
    ctx = typer.Context(ROOT)
    found, pending = [], [(n, ROOT.resolve_command(ctx, [n])[1])
                          for n in ROOT.list_commands(ctx)]
    while pending:
        name, command = pending.pop()
        found.append((name, command))
        if isinstance(command, TyperGroup):
            sub = typer.Context(command)
            pending += [(f"{name} {n}", command.get_command(sub, n))
                        for n in command.list_commands(sub)]
    return sorted(found, key=lambda item: item[0])


def _example_lines(help_text: str) -> list[str]:
    """The physical lines of the examples after "For example:", as the docstring has them."""
    if "For example:" not in help_text:
        return []
    tail = help_text.split("For example:", 1)[1]
    return [line.strip() for line in tail.splitlines()
            if line.strip() and line.strip() != "\b"]


def _joined(lines: list[str]) -> list[str]:
    commands: list[str] = []
    for line in lines:
        if commands and commands[-1].endswith("\\"):
            commands[-1] = commands[-1][:-1].rstrip() + " " + line
        else:
            commands.append(line)
    return commands


WITH_EXAMPLES = [(n, c) for n, c in _commands() if _example_lines(c.help or "")]
EXAMPLES = [(name, command) for name, c in WITH_EXAMPLES
            for command in _joined(_example_lines(c.help or ""))]


def test_the_commands_people_start_with_have_examples() -> None:
    names = {name for name, _ in WITH_EXAMPLES}
    assert {"ask", "grep", "tree", "view", "toc", "tool", "serve", "init", "lint"} <= names


@pytest.mark.parametrize("name", [n for n, _ in WITH_EXAMPLES])
def test_examples_are_shown_whole_at_80_columns(name: str) -> None:
    command = dict(WITH_EXAMPLES)[name]
    shown = CliRunner().invoke(app, [*name.split(), "--help"], env={"COLUMNS": str(WIDTH)})
    assert shown.exit_code == 0, shown.output
    rendered = [line.strip() for line in shown.output.splitlines()]
    for line in _example_lines(command.help or ""):
        assert line in rendered, f"memdir {name} --help refills {line!r}:\n{shown.output}"
        assert len(line) + 6 <= WIDTH, f"{line!r} is wider than {WIDTH} columns"


def test_examples_name_only_what_the_sample_store_holds(tmp_path: Path) -> None:
    store = tmp_path / "memories"
    build_sample_store(store)
    for name, command in EXAMPLES:
        for path in re.findall(r"/memories[\w/.-]*", command):
            assert (store / path.removeprefix("/memories").lstrip("/")).exists(), (name, path)


def _reason(command: str) -> str | None:
    return next((why for needle, why in NOT_RUN.items() if needle in command), None)


@pytest.fixture(scope="module")
def fake_openai() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.mark.parametrize("example", [c for _, c in EXAMPLES])
def test_each_example_runs_as_written(example: str, tmp_path: Path,
                                      fake_openai: FakeOpenAIServer) -> None:
    reason = _reason(example)
    if reason is not None:
        pytest.skip(f"not run: {reason}")
    if "../shared/data" in example and not DATA.is_dir():
        pytest.skip("the benchmark data (../shared/data) is not on this machine")
    build_sample_store(tmp_path / "memories")
    (tmp_path / "talk.json").write_text(json.dumps(TALK), encoding="utf-8")
    words = [FILLED.get(w, w) for w in shlex.split(example)]
    memdir = shlex.join([sys.executable, "-m", "memdir"])
    line = " ".join(memdir if w == "memdir" else shlex.quote(w) if w not in "|" else w
                    for w in words)
    # In a session of its own: an example that hangs (a server) is stopped whole.
    env = dict(os.environ)
    if any(needle in example for needle in OPENAI):
        env |= {"OPENAI_API_KEY": "help-test-dummy-key", "OPENAI_BASE_URL": fake_openai.base_url}
    process = subprocess.Popen(line, shell=True, cwd=tmp_path, stdin=subprocess.DEVNULL,  # noqa: S602
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, env=env)
    try:
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 0, f"{example}\n{out}\n{err}"


def test_every_example_that_is_not_run_says_why() -> None:
    skipped = [c for _, c in EXAMPLES if _reason(c) is not None]
    assert len(skipped) <= 14, skipped  # the list stays short: the rest run
    assert all(len(_reason(c) or "") > 10 for c in skipped)


@pytest.mark.parametrize("name", [n for n, _ in _commands()])
def test_help_shows_no_markup_escapes(name: str) -> None:
    shown = CliRunner().invoke(app, [*name.split(), "--help"], env={"COLUMNS": str(WIDTH)})
    assert shown.exit_code == 0 and "\\[" not in shown.output, shown.output


def test_grep_help_states_the_tools_own_bounds() -> None:
    from memdir.cli.grep import MAX_RESULTS
    from memdir.tools._grep import MAX_RESULTS_CAP

    assert MAX_RESULTS == MAX_RESULTS_CAP
    shown = CliRunner().invoke(app, ["grep", "--help"], env={"COLUMNS": "200"}).output
    assert f"1<=x<={MAX_RESULTS_CAP}" in shown and "default: 50" in shown


def test_serve_help_names_the_status_the_server_answers() -> None:
    from memdir.server import _transports

    shown = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output
    assert "(403 otherwise)" in shown and "401" not in shown
    assert "403" in (_transports.BearerTokenGate.__doc__ or "")
