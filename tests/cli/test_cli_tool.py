"""memdir tool: one call, run through ToolSet.call, printed as the model sees it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app
from memdir.cli.tool import parse_call
from memdir.store import Store
from memdir.tools import make_toolset

NEW_FILE = "---\nname: zoe\ndescription: Zoe, a new friend\n---\n# Zoe\n"


def _call(name: str, arguments: dict[str, object]) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def test_output_is_exactly_what_the_toolset_returns(runner: CliRunner, sample_dir: Path) -> None:
    args = {"path": "/memories/people/maya.md", "heading_path": ["Work"]}
    result = runner.invoke(app, ["tool", str(sample_dir), _call("section_read", args)])
    assert result.exit_code == 0
    direct = asyncio.run(make_toolset("read", Store(sample_dir)).call("section_read", args))
    assert result.stdout == direct.content + "\n"


def test_a_tool_error_is_printed_as_the_model_sees_it_and_exits_two(
    runner: CliRunner, sample_dir: Path
) -> None:
    missing = _call("view", {"path": "/memories/x.md"})
    result = runner.invoke(app, ["tool", str(sample_dir), missing])
    assert result.exit_code == 2
    assert result.stdout.startswith("Error: /memories/x.md does not exist")
    bad_args = runner.invoke(app, ["tool", str(sample_dir), _call("view", {"file": "/memories"})])
    assert bad_args.exit_code == 2
    assert "unknown parameter" in bad_args.stdout


def test_the_read_set_cannot_write(runner: CliRunner, sample_dir: Path) -> None:
    call = _call("create", {"path": "/memories/people/zoe.md", "file_text": NEW_FILE})
    result = runner.invoke(app, ["tool", str(sample_dir), call])
    assert result.exit_code == 2
    assert "no tool named 'create'" in result.stdout
    assert not (sample_dir / "people" / "zoe.md").exists()


def test_the_write_set_writes(runner: CliRunner, sample_dir: Path) -> None:
    call = _call("create", {"path": "/memories/people/zoe.md", "file_text": NEW_FILE})
    result = runner.invoke(app, ["tool", str(sample_dir), "--set", "write", call])
    assert result.exit_code == 0, result.output
    assert (sample_dir / "people" / "zoe.md").read_text() == NEW_FILE
    again = runner.invoke(app, ["tool", str(sample_dir), "--set", "write", call])
    assert again.exit_code == 2
    assert "already exists" in again.stdout


def test_call_from_stdin(runner: CliRunner, sample_dir: Path) -> None:
    call = _call("toc", {"path": "/memories/people/theo.md"})
    result = runner.invoke(app, ["tool", str(sample_dir), "-"], input=call)
    assert result.exit_code == 0
    assert "## Pottery" in result.stdout


def test_list_prints_the_declarations(runner: CliRunner, sample_dir: Path) -> None:
    result = runner.invoke(app, ["tool", str(sample_dir), "--set", "write", "--list"])
    assert result.exit_code == 0
    infos = json.loads(result.stdout)
    assert infos == make_toolset("write", Store(sample_dir)).infos()
    assert {"create", "str_replace", "delete"} <= {i["name"] for i in infos}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"tool": "view", "input": {}}', "unknown key"),
        ('{"arguments": {}}', "needs a 'name'"),
        ('{"name": "view", "arguments": [1]}', "'arguments' must be"),
    ],
)
def test_malformed_calls_are_usage_errors(
    runner: CliRunner, sample_dir: Path, text: str, problem: str
) -> None:
    result = runner.invoke(app, ["tool", str(sample_dir), text])
    assert result.exit_code == 2
    assert problem in result.stderr
    with pytest.raises(ValueError, match="."):
        parse_call(text)


def test_usage_errors(runner: CliRunner, sample_dir: Path) -> None:
    no_call = runner.invoke(app, ["tool", str(sample_dir)])
    assert no_call.exit_code == 2
    assert "--list" in no_call.stderr
    unknown_set = runner.invoke(app, ["tool", str(sample_dir), "--set", "nope", "--list"])
    assert unknown_set.exit_code == 2
    assert "write, read" in unknown_set.stderr
    both = runner.invoke(app, ["tool", str(sample_dir), "--list", _call("view", {})])
    assert both.exit_code == 2


def test_parse_call_defaults_arguments() -> None:
    assert parse_call('{"name": "view"}') == ("view", {})
    assert parse_call('{"name": "view", "arguments": null}') == ("view", {})


def test_tool_in_a_real_subprocess(sample_dir: Path) -> None:
    call = _call("grep", {"pattern": "Whitby"})
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", "tool", str(sample_dir), call],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "/memories/events/2025/ada-wedding.md:" in proc.stdout
    failing = subprocess.run(
        [sys.executable, "-m", "memdir", "tool", str(sample_dir), _call("nope", {})],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert failing.returncode == 2
    assert failing.stdout.startswith("Error: there is no tool named 'nope'")
