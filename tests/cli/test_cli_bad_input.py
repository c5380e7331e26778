"""Bad input is one error line, a hint that runs as printed, and exit status 2."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app
from memdir.cli._common import _invocation, runnable
from memdir.config import get_settings


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    _invocation.cache_clear()
    get_settings.cache_clear()
    yield
    _invocation.cache_clear()
    get_settings.cache_clear()


def _memdir(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memdir", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_hint_is_a_command_this_shell_can_run(tmp_path: Path) -> None:
    # Outside `uv run` and with no memdir on PATH, the hint names this interpreter.
    env = {k: v for k, v in os.environ.items() if k != "UV"}
    env["PATH"] = "/usr/bin:/bin"
    done = _memdir(["tree", "new-store"], env, tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("error: no store at new-store")
    command = re.search(r"`([^`]+)`", done.stderr.splitlines()[1])
    assert command is not None and "-m memdir init new-store" in command.group(1)
    ran = subprocess.run(command.group(1), shell=True, cwd=tmp_path, env=env,  # noqa: S602
                         capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "new-store" / ".memdir").is_dir()


def test_under_uv_run_hints_say_uv_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV", "/usr/bin/uv")
    hint = runnable("create one with `memdir init ./m`")
    assert hint == "create one with `uv run memdir init ./m`"


@pytest.mark.parametrize("target", ["/proc/no-such/store", "{file}/sub"])
def test_init_on_an_impossible_path_is_one_line_and_a_hint(tmp_path: Path, target: str) -> None:
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(app, ["init", target.format(file=tmp_path / "file")])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: cannot create a store at ")
    assert lines[1].startswith("hint: ") and "memdir init" in lines[1]


def test_a_malformed_environment_value_is_named(monkeypatch: pytest.MonkeyPatch,
                                                sample_dir: Path) -> None:
    monkeypatch.setenv("MEMDIR_MAX_FILE_BYTES", "lots")
    result = CliRunner().invoke(app, ["tree", str(sample_dir)])
    assert result.exit_code == 2
    first, hint = result.stderr.splitlines()
    assert first.startswith("error: bad environment setting: MEMDIR_MAX_FILE_BYTES='lots'")
    assert hint == ("hint: fix the value, or unset it to use the default: "
                    "`unset MEMDIR_MAX_FILE_BYTES`.")


def _latin1_file(store: Path) -> None:
    (store / "latin.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\nbody \xff\n")


def test_lint_fix_reports_a_file_that_is_not_utf8_and_fixes_the_rest(sample_dir: Path) -> None:
    _latin1_file(sample_dir)
    (sample_dir / "bare.md").write_text("# Bare\n\nNo header here.\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["lint", str(sample_dir), "--fix"])
    assert result.exit_code == 1, result.output
    assert "fixed /memories/bare.md: missing-frontmatter" in result.stdout
    assert "/memories/latin.md: unreadable: /memories/latin.md is not valid UTF-8" in result.stdout
    assert "iconv -f latin1 -t utf-8" in result.stdout  # and how to repair it
    assert (sample_dir / "latin.md").read_bytes().endswith(b"body \xff\n")  # left untouched


def test_health_measures_the_rest_and_names_the_unreadable_file(sample_dir: Path) -> None:
    before = CliRunner().invoke(app, ["health", str(sample_dir), "--json"])
    _latin1_file(sample_dir)
    result = CliRunner().invoke(app, ["health", str(sample_dir), "--json"])
    assert result.exit_code == 1, result.output
    report, clean = json.loads(result.stdout), json.loads(before.stdout)
    assert report["unreadable"] == {"/memories/latin.md": "/memories/latin.md is not valid "
                                                          "UTF-8 text."}
    assert report["shape"]["files"] == clean["shape"]["files"]
    assert "/memories/latin.md is not valid UTF-8 text; it is left out of every measure" in (
        report["alarms"])


def test_viewing_a_file_that_is_not_utf8_says_how_to_read_it_anyway(sample_dir: Path) -> None:
    _latin1_file(sample_dir)
    result = CliRunner().invoke(app, ["view", str(sample_dir), "/memories/latin.md"])
    assert result.exit_code == 2
    assert "error: /memories/latin.md is not valid UTF-8 text." in result.stderr
    assert "hint: search it with" in result.stderr and "iconv" in result.stderr
    hint = result.stderr.split("`")[1]
    assert hint.endswith(f"grep {sample_dir} PATTERN --path /memories/latin.md")
