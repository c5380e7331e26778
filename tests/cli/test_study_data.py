"""``memdir study run``'s data: the dry run checks what the run reads and fails the same way."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from memdir.cli import app

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
pytestmark = pytest.mark.usefixtures("no_data_env")


def _config(tmp_path: Path, **changes: object) -> Path:
    """The offline smoke config, two questions a cell, with ``changes``."""
    config = yaml.safe_load((CONFIGS / "offline-smoke.yaml").read_text())
    for bench in config["benchmarks"]:
        bench["limit"] = 2
    config.update(changes)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _problem(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(("error:", "hint:"))]


def _dry_and_real(path: Path, data: Path, out: Path) -> tuple[list[str], list[str]]:
    """The error lines of a dry run and of a real run on the same config and data."""
    runner = CliRunner()
    dry = runner.invoke(app, ["study", "run", str(path), "--data", str(data), "--dry-run"])
    real = runner.invoke(app, ["study", "run", str(path), "--data", str(data), "--out", str(out)])
    assert dry.exit_code == 2, dry.output
    assert real.exit_code == 2, real.output
    assert not out.exists()  # nothing ran, nothing was written
    return _problem(dry.output), _problem(real.output)


def test_a_mistyped_conversation_fails_the_dry_run_as_it_fails_the_run(
        tmp_path: Path, shared_data: Path) -> None:
    path = _config(tmp_path, benchmarks=[{"name": "locomo", "conversations": ["conv-5O"]}])
    dry, real = _dry_and_real(path, shared_data, tmp_path / "run")
    assert dry == real
    error, hint = dry
    assert error == (f"error: locomo: {shared_data / 'locomo' / 'locomo10.json'} holds 10 "
                     "conversation(s), none of them 'conv-5O'")
    assert hint.startswith("hint: did you mean 'conv-50'? ") and "#1 to #10" in hint


def test_a_position_past_the_last_conversation_is_named(tmp_path: Path,
                                                        shared_data: Path) -> None:
    path = _config(tmp_path, benchmarks=[{"name": "locomo", "conversations": ["#11"]}])
    dry, real = _dry_and_real(path, shared_data, tmp_path / "run")
    assert dry == real and dry[0].endswith("none of them '#11'")


def test_a_truncated_file_fails_the_dry_run_as_it_fails_the_run(
        tmp_path: Path, shared_data: Path) -> None:
    data = tmp_path / "data"
    (data / "locomo").mkdir(parents=True)
    shutil.copytree(shared_data / "realtalk", data / "realtalk")
    whole = (shared_data / "locomo" / "locomo10.json").read_bytes()
    (data / "locomo" / "locomo10.json").write_bytes(whole[: len(whole) // 3])
    dry, real = _dry_and_real(_config(tmp_path), data, tmp_path / "run")
    assert dry == real
    error, hint = dry
    assert error.startswith(f"error: locomo: {data / 'locomo' / 'locomo10.json'}: is not valid "
                            "JSON")
    assert hint.startswith(f"hint: replace {data / 'locomo' / 'locomo10.json'} with a fresh copy")


def test_a_missing_tier_names_the_file(tmp_path: Path, shared_data: Path) -> None:
    # ../shared/data has the PersonaMem 32k questions but not their contexts.
    path = _config(tmp_path, benchmarks=[
        {"name": "personamem", "tiers": ["32k"], "conversations": ["#1"]}])
    dry, real = _dry_and_real(path, shared_data, tmp_path / "run")
    assert dry == real
    missing = shared_data / "personamem" / "shared_contexts_32k.jsonl"
    assert dry[0] == f"error: personamem-32k: {missing}: not found; put the personamem files " \
        "there (see docs/datasets.md)"
    assert dry[1].startswith(f"hint: download shared_contexts_32k.jsonl into {missing.parent}")


def test_no_data_folder_is_one_error_and_a_hint(tmp_path: Path) -> None:
    path = _config(tmp_path)
    runner = CliRunner()
    for extra in (["--dry-run"], ["--out", str(tmp_path / "run")]):
        result = runner.invoke(app, ["study", "run", str(path), *extra])
        assert result.exit_code == 2
        assert _problem(result.output) == [
            "error: no benchmark folder: pass --data, set MEMDIR_DATA_DIR or give the config "
            "a data:",
            "hint: pass --data DIR, DIR being the folder holding locomo/, realtalk/ and "
            "personamem/ (docs/datasets.md)"]


def test_the_dry_run_counts_the_data_s_questions(tmp_path: Path, shared_data: Path) -> None:
    result = CliRunner().invoke(app, ["study", "run", str(_config(tmp_path)), "--dry-run",
                                      "--data", str(shared_data)])
    assert result.exit_code == 0, result.output
    assert "| 2 q (data) |" in result.output
    assert f"data: every file and conversation the cells read is in {shared_data}" in (
        result.output)


def test_the_dry_run_as_json_carries_the_counts_and_the_data_s_problem(
        tmp_path: Path, shared_data: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["study", "run", str(_config(tmp_path)), "--dry-run", "--json",
                             "--data", str(shared_data)])
    assert ok.exit_code == 0, ok.output
    report = json.loads(ok.stdout)
    assert report["counts"] == {"memdir": 6, "per_test_set": 6, "agree": True, "paper": {
        "cells": 6, "table": "Table 1, zero-cost LoCoMo and REALTALK columns", "note": None}}
    assert report["data"] == str(shared_data) and "error" not in report
    assert {c["questions"] for c in report["cells"]} == {2}
    path = _config(tmp_path, benchmarks=[{"name": "locomo", "conversations": ["conv-5O"]}])
    bad = runner.invoke(app, ["study", "run", str(path), "--dry-run", "--json",
                              "--data", str(shared_data)])
    assert bad.exit_code == 2
    report = json.loads(bad.stdout)
    assert report["error"].endswith("none of them 'conv-5O'") and report["exit_code"] == 2
    assert report["hint"].startswith("did you mean 'conv-50'?")
    assert len(report["cells"]) == 3 and report["data"] is None


def test_a_run_as_json_lists_each_cell_and_the_report_command(tmp_path: Path,
                                                              shared_data: Path) -> None:
    path = _config(tmp_path, benchmarks=[{"name": "locomo", "conversations": ["conv-50"],
                                          "limit": 2}], variants=["closed-book"])
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["study", "run", str(path), "--json", "--out", str(out),
                                      "--data", str(shared_data)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["cells"] == [{"key": "locomo__conv-50__closed-book__none__memdir-grep-reader"
                                "__center", "status": "complete", "answered": 2,
                                "questions": 2, "reason": None}]
    assert report["report"].endswith(f"memdir study report {out}") and report["resume"] is None
