"""``memdir grep``'s quick start: plain calls skip typer and pydantic, and print the same."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memdir.cli import app

# Runs the real entry point, then says on stderr which heavy modules it loaded.
_MAIN = (
    "import sys\nsys.argv = ['memdir', *sys.argv[1:]]\nfrom memdir.cli import main\n"
    "try:\n    main()\nfinally:\n"
    "    print('loaded:', *sorted(m for m in ('typer', 'pydantic') if m in sys.modules),"
    " file=sys.stderr)\n"
)


def _memdir(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("MEMDIR_")}
    return subprocess.run([sys.executable, "-c", _MAIN, *args], capture_output=True,
                          text=True, timeout=60, env={**clean, **env}, check=False)


@pytest.mark.parametrize("options", [
    [], ["-i"], ["--max-results", "1"], ["--path", "/memories/plans"],
    ["--json"], ["--json", "--max-results", "2", "--ignore-case"], ["-p", "/memories", "-i"],
])
def test_a_plain_grep_skips_the_framework_and_prints_what_the_app_prints(
    runner: CliRunner, sample_dir: Path, options: list[str]
) -> None:
    args = ["grep", str(sample_dir), "maya|biscuit", *options]
    fast = _memdir(*args)
    assert fast.returncode == 0, fast.stderr
    assert fast.stderr.strip() == "loaded:"  # neither typer nor pydantic
    through_app = runner.invoke(app, args)
    assert through_app.exit_code == 0, through_app.output
    assert fast.stdout == through_app.stdout
    assert fast.stdout.strip()


def test_a_grep_with_no_hits_is_still_answered_quickly(sample_dir: Path) -> None:
    done = _memdir("grep", str(sample_dir), "zzqx-nowhere")
    assert done.returncode == 0
    assert done.stdout.startswith("No lines match")
    assert done.stderr.strip() == "loaded:"


@pytest.mark.parametrize(("args", "expected"), [
    (["(unclosed"], "not a valid Python regular expression"),
    (["x", "--path", "/memories/nowhere"], "does not exist"),
    (["x", "--max-results", "0"], "--max-results"),
    (["x", "--max-results", "5000"], "less than or equal to 1000"),  # the tool cap
    (["x", "--bogus"], "No such option"),
    (["x", "extra"], "unexpected extra argument"),
])
def test_anything_but_a_working_plain_call_goes_to_the_full_command_line(
    sample_dir: Path, args: list[str], expected: str
) -> None:
    done = _memdir("grep", str(sample_dir), *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert expected in done.stderr
    assert "typer" in done.stderr.splitlines()[-1]


def test_a_missing_store_gets_the_usual_hint(tmp_path: Path) -> None:
    done = _memdir("grep", str(tmp_path / "nope"), "x")
    assert done.returncode == 2
    assert "no store at" in done.stderr and "memdir init" in done.stderr


def test_a_bad_setting_is_reported_before_any_search(sample_dir: Path) -> None:
    done = _memdir("grep", str(sample_dir), "maya", MEMDIR_MAX_FILE_BYTES="lots")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "MEMDIR_MAX_FILE_BYTES" in done.stderr


def test_a_good_setting_keeps_the_quick_start_free_of_typer(sample_dir: Path) -> None:
    done = _memdir("grep", str(sample_dir), "maya", MEMDIR_MAX_FILE_BYTES="100000")
    assert done.returncode == 0
    assert done.stdout.strip()
    assert "typer" not in done.stderr.splitlines()[-1]


def test_help_still_comes_from_the_app(sample_dir: Path) -> None:
    done = _memdir("grep", "--help")
    assert done.returncode == 0
    assert "PATTERN" in done.stdout and "--max-results" in done.stdout


def test_grep_leaves_stale_temporary_files_for_a_writer_and_never_shows_them(
    sample_dir: Path,
) -> None:
    stale = sample_dir / ".tmp-deadbeef.part"
    stale.write_text("maya maya\n", encoding="utf-8")
    done = _memdir("grep", str(sample_dir), "maya", "-i")
    assert done.returncode == 0
    assert ".tmp-" not in done.stdout
    assert stale.exists()  # a read-only command does not walk the tree to sweep
