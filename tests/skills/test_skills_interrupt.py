"""Ctrl-C on ``memdir skills run`` in a real process: exit 130, a resume line that runs as is.

The interrupted run, resumed with the printed command, must end with the records
an uninterrupted run of the same config writes (timings and commit ids aside).
Skipped where alfworld or the games are absent.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from interrupting import default_sigint
from memdir.skills import AlfworldEnv, alfworld_missing, list_tasks, load_config, run_cell
from memdir.store import Store

GAMES = ["pick_two_obj_and_place-ToiletPaper-None-Toilet-408/trial_T20190909_080302_174780",
         "pick_two_obj_and_place-SprayBottle-None-Toilet-429/trial_T20190907_033843_707544"]
CELL = "full-chain.episode_log_recent.exec-expert"
_VARIES = {"reset_seconds", "wall_seconds", "episode_seconds", "memory_seconds", "snapshot",
           "created_at", "written_at"}


def _config(folder: Path, output: str) -> Path:
    path = folder / f"{output}.yaml"
    ids = "\n".join(f"  - {game}" for game in GAMES)
    path.write_text(f"name: sig\noutput: {output}\nvariants: [episode_log_recent]\n"
                    f"executions: [expert]\ncache_dir: cache\ntask_ids:\n{ids}\n",
                    encoding="utf-8")
    return path


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VARIES}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _records(chain: Path) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for path in sorted([*chain.glob("tasks/*.json"), *chain.glob("steps/*.json")]):
        found[str(path.relative_to(chain))] = _stable(json.loads(path.read_text("utf-8")))
    store = Store(chain / "store")
    found["store"] = {p: store.read(p) for p in store.files()}
    return found


@pytest.mark.slow
def test_ctrl_c_exits_130_and_the_printed_command_resumes_to_the_same_records(
        shared_data: Path, tmp_path: Path) -> None:
    reason = alfworld_missing()
    if reason is not None:
        pytest.skip(reason)
    if not (shared_data / "alfworld" / "valid_seen").is_dir():
        pytest.skip("the ALFWorld split is not present")
    # the uninterrupted run, in this process (it also warms the translation cache)
    whole = load_config(_config(tmp_path, "whole"))
    whole = whole.model_copy(update={"output": tmp_path / "whole",
                                     "cache_dir": tmp_path / "cache"})
    tasks = list_tasks(shared_data / "alfworld" / "valid_seen")
    env = AlfworldEnv(max_steps=whole.max_steps, cache_dir=whole.cache_dir, facts=True)
    asyncio.run(run_cell(whole, whole.cells()[0], tasks, env))

    config = _config(tmp_path, "cut")
    bindir = str(Path(sys.executable).parent)
    child_env = {k: v for k, v in os.environ.items() if k != "UV"}
    child_env["PATH"] = bindir + os.pathsep + child_env.get("PATH", "")
    child_env.pop("MEMDIR_DATA_DIR", None)
    command = [sys.executable, "-m", "memdir", "skills", "run", config.name,
               "--data", str(shared_data), "--progress"]
    child = subprocess.Popen(command, cwd=tmp_path, env=child_env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=default_sigint)
    first = tmp_path / "cut" / CELL / "full" / "tasks" / "000.json"
    began = time.monotonic()
    while not first.exists() and child.poll() is None and time.monotonic() - began < 300:
        time.sleep(0.05)
    assert child.poll() is None, child.communicate()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 130, out + err
    assert not (tmp_path / "cut" / CELL / "full" / "steps" / "001.json").exists()
    assert "task 1/2 · " in err and "full: " + GAMES[0] in err  # the progress line
    [line] = [x for x in err.splitlines() if x.startswith("error: interrupted:")]
    assert "what was played is recorded in" in line  # the error:/hint: form of every command
    [hint] = [x for x in err.splitlines() if x.startswith("hint: resume with")]
    [again] = re.findall(r"`([^`]+)`", hint)
    assert shlex.split(again) == ["memdir", "skills", "run", config.name,
                                  "--data", str(shared_data)]
    resumed = subprocess.run(shlex.split(again), cwd=tmp_path, env=child_env, text=True,
                             capture_output=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _records(tmp_path / "cut" / CELL / "full") == _records(
        tmp_path / "whole" / CELL / "full")
