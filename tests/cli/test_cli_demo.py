"""memdir demo: the first command a new user runs, offline and model-free."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from memdir.cli import app
from memdir.cli.demo import STEPS, DemoContext, DemoStep, run_demo
from memdir.store import Store, lint_store


def test_demo_builds_a_clean_store_and_shows_tool_results(
    runner: CliRunner, tmp_path: Path
) -> None:
    out = tmp_path / "demo"
    result = runner.invoke(app, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    store = Store(out)
    assert lint_store(store) == []
    assert len(store.files()) == 6
    text = result.stdout
    for step in STEPS:
        assert step.title in text
    # Tool results, as the model sees them.
    assert "> grep(" in text and "/memories/people/maya.md:11:" in text
    assert "    11\t- Lives in Bristol since 2025-06-01" in text
    assert "clean" in text
    # Questions answered by the offline policy, labelled as the zero-cost baseline,
    # every citation checked against the store.
    assert text.count("[offline grep-reader baseline, no LLM]") == 3
    assert "[/memories/people/maya.md:L39] found" in text
    # What the mark checks is said, and the baseline note is not repeated per question.
    from memdir.cli.ask import CITED_LINES_EXIST

    assert text.count(CITED_LINES_EXIST) == 3
    assert "note: answered by the offline grep-reader" not in result.output
    # Routing by file names: the question about Maya is answered from maya.md.
    assert "Lives in Bristol since 2025-06-01" in text.split("? Where does Maya live now?")[1]
    assert "not found" not in text


def test_demo_refuses_a_non_empty_out_folder(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = runner.invoke(app, ["demo", "--out", str(out)])
    assert result.exit_code == 2
    assert (out / "keep.txt").read_text() == "mine"


def test_a_failing_step_makes_the_demo_fail(tmp_path: Path) -> None:
    def broken(ctx: DemoContext) -> bool:
        (ctx.built().root / "people" / "stray.txt").write_text("x")
        return True

    lint = next(s for s in STEPS if s.title.startswith("Lint"))
    steps = [STEPS[0], DemoStep("Break the store", broken), lint]
    assert run_demo(tmp_path / "s", steps) is False
    assert run_demo(tmp_path / "t", [STEPS[0], lint]) is True


def test_demo_in_a_real_subprocess_without_out(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", "demo"],
        capture_output=True, text=True, timeout=180, check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path),
             "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "clean" in proc.stdout
    built = [p for p in tmp_path.iterdir() if p.name.startswith("memdir-demo-")]
    assert len(built) == 1
    assert (built[0] / "people" / "maya.md").is_file()
