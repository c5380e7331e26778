"""Ctrl-C on ``memdir study run``: exit 130, a resume command that runs as printed, same records."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from interrupting import default_sigint
from memdir.cli import app

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
_SAME = ("cell", "question_id", "answer", "citations", "reads", "evidence_seen",
         "evidence_cited", "grades")
"""The parts of a record that do not depend on when or how fast it was written."""


def _records(run: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(run.glob("cells/*/records/*.json")):
        data = json.loads(path.read_text("utf-8"))
        found[str(path.relative_to(run))] = {k: data[k] for k in _SAME}
    return found


def _shell_env() -> dict[str, str]:
    """A shell outside ``uv run`` with no memdir on PATH: hints must name this interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "UV" and not k.startswith("MEMDIR_")}
    env["PATH"] = "/usr/bin:/bin"
    return env


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_ctrl_c_exits_130_and_the_printed_command_resumes_to_the_same_records(
        tmp_path: Path, shared_data: Path) -> None:
    config = yaml.safe_load((CONFIGS / "offline-smoke.yaml").read_text())
    config["benchmarks"] = [{"name": "locomo", "conversations": ["conv-50"], "limit": 20}]
    config["variants"] = ["verbatim"]
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(config))
    env = _shell_env()
    args = ["study", "run", "study.yaml", "--out", "run", "--data", str(shared_data)]
    proc = subprocess.Popen([sys.executable, "-m", "memdir", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob("run/cells/*/records/*.json"))) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no record was written in 120 s"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if line.startswith(("error:", "hint:"))]
    assert lines[0] == "error: interrupted: the answered questions' records are kept in run"
    partial = len(_records(tmp_path / "run"))
    assert 2 <= partial < 20
    command = re.fullmatch(r"hint: resume with `([^`]+)`", lines[1])
    assert command is not None and "-m memdir study run study.yaml --out run --data" in (
        command.group(1))
    resumed = subprocess.run(command.group(1), shell=True, cwd=tmp_path, env=env,  # noqa: S602
                             capture_output=True, text=True, timeout=300, check=False)
    assert resumed.returncode == 0, resumed.stderr
    whole = CliRunner().invoke(app, ["study", "run", str(tmp_path / "study.yaml"), "--out",
                                     str(tmp_path / "whole"), "--data", str(shared_data)])
    assert whole.exit_code == 0, whole.output
    records = _records(tmp_path / "run")
    assert len(records) == 20 and records == _records(tmp_path / "whole")
    # the run's closing line names a report command that runs as printed, too
    report = re.search(r"report with: `([^`]+)`", resumed.stdout)
    assert report is not None
    done = subprocess.run(report.group(1), shell=True, cwd=tmp_path, env=env,  # noqa: S602
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "### Table 1" in done.stdout
