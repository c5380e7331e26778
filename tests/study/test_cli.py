"""``memdir study run`` (dry run and a small real run), ``report`` and ``inspect``."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from memdir.cli import app
from memdir.cli._common import inspect_view_command as _inspect_view

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
runner = CliRunner()


def test_dry_run_lists_cells_and_estimates_without_a_call(tmp_path: Path,
                                                          shared_data: Path) -> None:
    # ../shared/data has no PersonaMem contexts: the cells are listed, then the dry run
    # fails on the missing file as the real run would (tests/cli/test_study_data.py).
    result = runner.invoke(app, ["study", "run", str(CONFIGS / "main-grid.yaml"), "--dry-run",
                                 "--out", str(tmp_path / "never"), "--data", str(shared_data)])
    assert result.exit_code == 2, result.output
    assert "shared_contexts_32k.jsonl: not found" in result.output
    assert "main-grid: 42 cells (dry run, no API call)" in result.output
    assert "basis: search cents/query as the paper reports them" in result.output
    assert "SPEC" not in result.output  # no user-facing text cites a file memdir does not ship
    assert "curated built by openai/gpt-5.4-mini" in result.output
    assert "6 cells not estimated" in result.output  # closed-book has no reference figure
    assert not (tmp_path / "never").exists()


def test_dry_run_of_the_offline_smoke_costs_nothing(shared_data: Path) -> None:
    result = runner.invoke(app, ["study", "run", str(CONFIGS / "offline-smoke.yaml"),
                                 "--dry-run", "--data", str(shared_data)])
    assert result.exit_code == 0, result.output
    assert "estimated search cost: 0.00-0.00 $ over 6 cells; 0 cells not estimated" in (
        result.output)


def test_run_then_report(tmp_path: Path, shared_data: Path) -> None:
    config = yaml.safe_load((CONFIGS / "offline-smoke.yaml").read_text())
    config["data_dir"] = str(shared_data)
    config["variants"] = ["verbatim"]
    for bench in config["benchmarks"]:
        bench["limit"] = 3
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "run"
    result = runner.invoke(app, ["study", "run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "ok     locomo__conv-50__verbatim" in result.output
    assert f"transcripts: `{_inspect_view(out / 'logs')}`" in result.output
    result = runner.invoke(app, ["study", "inspect", str(out)])
    assert result.exit_code == 0, result.output
    assert f"read the transcripts with: `{_inspect_view(out / 'logs')}`" in result.output
    # each cell, then its one eval log of three samples under the run's logs folder
    assert "complete locomo__conv-50__verbatim__none__memdir-grep-reader__center 3/3" in (
        result.output)
    assert result.output.count("success      3 samples") == 2
    assert len(list((out / "logs").glob("*.eval"))) == 2
    result = runner.invoke(app, ["study", "report", str(out)])
    assert result.exit_code == 0, result.output
    assert "### Table 1 — correctness, realtalk" in result.output
    result = runner.invoke(app, ["study", "report", str(out), "--format", "csv"])
    assert result.exit_code == 0 and (out / "report" / "table2.csv").exists()


def test_errors_say_what_to_do(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\n")
    result = runner.invoke(app, ["study", "run", str(bad)])
    assert result.exit_code == 2 and "benchmarks" in result.output
    result = runner.invoke(app, ["study", "report", str(tmp_path)])
    assert result.exit_code == 2 and "no cell status files" in result.output
    result = runner.invoke(app, ["study", "inspect", str(tmp_path)])
    assert result.exit_code == 2 and "no cell status files" in result.output
