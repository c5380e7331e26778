"""The examples in docs/cli.md and docs/mcp.md are run, so the docs cannot drift."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def _blocks(name: str, lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall((DOCS / name).read_text()) if kind == lang]


def test_the_first_session_in_cli_md_runs(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    session = next(b for b in _blocks("cli.md", "sh") if "memdir init" in b)
    commands = [shlex.split(line) for line in session.splitlines() if line.strip()]
    assert len(commands) >= 8
    for argv in commands:
        assert argv[0] == "memdir"
        result = runner.invoke(app, argv[1:])
        assert result.exit_code == 0, f"{argv}: {result.output}"
    assert (tmp_path / "memories" / "people" / "maya.md").is_file()


def test_the_call_form_in_cli_md_is_the_one_tool_accepts() -> None:
    from memdir.cli.tool import parse_call

    calls = _blocks("cli.md", "json")
    assert calls
    for call in calls:
        name, arguments = parse_call(call)
        assert name == "view" and arguments == {"path": "/memories"}


def test_the_claude_desktop_snippet_parses(runner: CliRunner, tmp_path: Path) -> None:
    config = json.loads(_blocks("mcp.md", "json")[0])
    args = config["mcpServers"]["memdir"]["args"]
    assert args[0] == "serve"
    # With the placeholder pointing at a missing folder, the arguments parse and the
    # command stops at opening the store (so no server is started).
    missing = str(tmp_path / "missing")
    result = runner.invoke(app, [missing if a.startswith("/absolute") else a for a in args])
    assert result.exit_code == 2
    assert "memdir init" in result.stderr


def test_every_serve_flag_in_mcp_md_exists(runner: CliRunner) -> None:
    help_text = runner.invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).stdout
    table = (DOCS / "mcp.md").read_text().split("## Flags", 1)[1].split("##", 1)[0]
    flags = set(re.findall(r"`(--[a-z-]+)", table))
    assert flags >= {"--write", "--transport", "--host", "--port", "--token", "--allow-remote"}
    for flag in flags:
        assert flag in help_text, flag
