"""The execution agent's compaction is a run setting: configured, pinned, held on resume.

A config's ``compaction`` entry (default 32,000 tokens, the first step and the last
10 kept) reaches the model policy of every model-executed cell, is pinned in the run's
``manifest.json`` with the rest of the config and in each chain's ``chain.json``,
and a chain recorded under other settings is refused rather than resumed. The run
tests play a real ALFWorld game with a scripted execution model (skipped where
alfworld or the games are absent).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from skill_runs import alfworld_split

from memdir.runs import read_record
from memdir.skills import (
    AlfworldEnv,
    AlfworldTask,
    ChainManifest,
    ChainMismatchError,
    Compaction,
    RunConfig,
    list_tasks,
    load_config,
    pin_run,
    run_cell,
)
from scripted import Script, text, usage

GAME = "pick_two_obj_and_place-ToiletPaper-None-Toilet-408"
STEPS = 4


def test_the_defaults_are_the_documented_policy(tmp_path: Path) -> None:
    config = RunConfig(name="g", output=tmp_path / "out", variants=["none"])
    assert config.compaction == Compaction()
    assert config.compaction.model_dump() == {"at_tokens": 32_000, "keep_steps": 10,
                                              "observation_chars": 200}


def test_a_config_sets_part_of_the_policy_and_bad_entries_are_named(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("name: g\noutput: out\nvariants: [none]\n"
                    "compaction: {at_tokens: 16000}\n", encoding="utf-8")
    assert load_config(path).compaction == Compaction(at_tokens=16_000, keep_steps=10)
    for bad in ["{keep_step: 4}", "{at_tokens: 0}", "{keep_steps: -1}"]:
        path.write_text(f"name: g\noutput: out\nvariants: [none]\ncompaction: {bad}\n",
                        encoding="utf-8")
        with pytest.raises(ValueError, match="compaction"):
            load_config(path)


@pytest.fixture(scope="module")
def tasks() -> list[AlfworldTask]:
    return list_tasks(alfworld_split())


def _config(tasks: list[AlfworldTask], out: Path, compaction: Compaction) -> RunConfig:
    ids = [t.task_id for t in tasks if t.task_id.split("/")[0] == GAME]
    return RunConfig(name="t", output=out, variants=["none"], task_ids=ids,
                     max_steps=STEPS, executions=["mock/exec"], compaction=compaction)


def _play(config: RunConfig, tasks: list[AlfworldTask], script: Script, cache: Path) -> None:
    env = AlfworldEnv(max_steps=STEPS, cache_dir=cache)
    asyncio.run(run_cell(config, config.cells()[0], tasks, env,
                         {"mock/exec": script.model()}))


def _script() -> Script:
    return Script([text("<think>Survey first.</think><action>look</action>", usage(500, 20))
                   for _ in range(STEPS)])


def test_the_configured_policy_compacts_and_is_pinned(tasks: list[AlfworldTask],
                                                       tmp_path: Path) -> None:
    policy = Compaction(at_tokens=500, keep_steps=1, observation_chars=40)
    config = _config(tasks, tmp_path / "run", policy)
    manifest = pin_run(config, tasks)
    assert manifest.config["compaction"] == policy.model_dump()
    pinned = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert pinned["config"]["compaction"] == {"at_tokens": 500, "keep_steps": 1,
                                              "observation_chars": 40}
    script = _script()
    _play(config, tasks, script, tmp_path / "cache")
    script.assert_done()
    # Every call reached the 500-token threshold, so from the third call on, the steps
    # older than the last one are folded into the note: the config's settings were used.
    roles = [[str(m.role) for m in call] for call in script.seen]
    assert roles[1] == ["system", "user", "assistant", "user"]
    assert roles[2] == ["system", "user", "user", "user", "assistant", "user"]
    assert script.seen[2][2].text.startswith("(Steps 1 to 1 of this episode")
    chain = tmp_path / "run" / config.cells()[0].key / "full"
    assert read_record(chain / "chain.json", ChainManifest).compaction == policy


def test_a_chain_is_not_resumed_under_other_compaction(tasks: list[AlfworldTask],
                                                       tmp_path: Path) -> None:
    first = _config(tasks, tmp_path / "run", Compaction(at_tokens=500, keep_steps=1))
    _play(first, tasks, _script(), tmp_path / "cache")
    changed = _config(tasks, tmp_path / "run", Compaction(at_tokens=500, keep_steps=2))
    with pytest.raises(ChainMismatchError, match="differs in compaction"):
        _play(changed, tasks, Script([]), tmp_path / "cache")
    _play(first, tasks, Script([]), tmp_path / "cache")  # the same settings resume (done)


def test_an_expert_chain_pins_no_compaction(tasks: list[AlfworldTask], tmp_path: Path) -> None:
    config = _config(tasks, tmp_path / "run", Compaction()).model_copy(
        update={"executions": ["expert"]})
    env = AlfworldEnv(max_steps=STEPS, cache_dir=tmp_path / "cache", facts=True)
    asyncio.run(run_cell(config, config.cells()[0], tasks, env))
    chain = tmp_path / "run" / config.cells()[0].key / "full"
    assert read_record(chain / "chain.json", ChainManifest).compaction is None
