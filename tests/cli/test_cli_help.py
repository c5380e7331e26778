"""Every subcommand's --help renders (help text is parsed as rich markup, so a stray
``[/...]`` in a docstring would crash it)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from memdir.cli import app

COMMANDS = sorted(
    info.name or (info.callback.__name__ if info.callback else "")
    for info in app.registered_commands
)
GROUPS = sorted(
    info.name or (info.typer_instance.info.name if info.typer_instance else None) or ""
    for info in app.registered_groups
)


def test_every_subcommand_is_discovered() -> None:
    assert "" not in GROUPS, "a sub-app registered without a name"
    expected = {"init", "tree", "view", "grep", "toc", "lint", "tool", "serve", "demo",
                "ask", "ingest", "health"}
    assert expected <= set(COMMANDS) | set(GROUPS)


@pytest.mark.parametrize("name", COMMANDS + GROUPS)
def test_help_renders(name: str) -> None:
    result = CliRunner().invoke(app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
